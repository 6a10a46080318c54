// NVLS: all-reduce done by the NVSwitch itself (NVLink SHARP; NCCL's NVLS algorithm on
// H100-class servers). Every GPU sends its whole buffer into the switch, which adds the
// buffers up, and reads the sum back (multimem loads and stores): S out of and S into each
// GPU in one step, whatever the group's size, where a ring moves 2(n-1)/n S each way in
// 2(n-1) steps. The switch's reduction rate, not the links, bounds it: nccl-tests measure
// 480 GB/s bus bandwidth with NVLS on 8 H200s against 367 for the ring on the same NVLink
// (../shared/validation/public/collectives_multinode.csv rows 44-45). So its time is the
// switch's latency plus S over its rate (the links' own time when that is longer), and the
// flow engines play the difference after the flows. NCCL runs it where the group holds every
// GPU of the switch: a 4-GPU group on the same H200 server ran a ring (rows 48-49, 363 GB/s
// by default and with NVLS off), so only such groups are supported. NCCL's maintainers say
// the same (NVIDIA/nccl-tests issue 212: rings get ~370 GB/s of NVLink's 450 after ~20%
// protocol overhead, NVLS all-reduce ~480 bus, ~275 algorithm bandwidth on 8 GPUs; NVIDIA/nccl
// issue 1455: NVLS no faster than the ring on 2-4 GPUs; issue 1083: NCCL keeps all-gather and
// reduce-scatter on the ring, NVLS being slower for them).
#include <algorithm>

#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

// The switch every host of `g` hangs off, when it reduces and serves exactly them; else -1.
int reducing_switch(const Network& net, const std::vector<int>& g) {
  if (!net.reduces_in_switch() || g.size() < 2) return -1;
  const std::vector<Hop>& first = net.route(g[0], g[1]);
  if (first.size() != 2) return -1;
  const Link& l = net.link(first[0].link);
  const int sw = first[0].forward ? l.b : l.a;
  const Node& node = net.node(sw);
  if (node.reduce_Bps <= 0 || node.reduce_hosts != static_cast<int>(g.size())) return -1;
  for (size_t i = 1; i < g.size(); ++i) {
    const std::vector<Hop>& r = net.route(g[0], g[i]);
    if (r.size() != 2) return -1;  // another switch's GPU, or g[0] again
    const Link& up = net.link(r[0].link);
    if ((r[0].forward ? up.b : up.a) != sw) return -1;
  }
  return sw;
}

// The links' traffic: S out of and into every GPU, spread over its peers.
CommSchedule spread(const std::vector<int>& g, double S) {
  const int n = static_cast<int>(g.size());
  CommSchedule s;
  auto& step = s.add_step();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) step.push_back({g[i], g[j], S / (n - 1)});
  return s;
}

class Nvls : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "nvls"; }

  bool supports(const Network& net, const std::vector<int>& g, CollectiveOp op) const override {
    return op == CollectiveOp::AllReduce && reducing_switch(net, g) >= 0;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (!supports(net, g, op)) refuse(g);
    return spread(g, S);
  }

  double time_s(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (g.size() <= 1) return 0;
    const Times t = times(net, g, op, S);
    return std::max(t.in_switch, t.links);
  }

  void expand(const Network& net, const std::vector<int>& g, CollectiveOp op, double S, Fidelity fidelity,
              Expansion& out, int keep_alike) const override {
    if (g.size() <= 1) return;
    CollectiveAlgorithm::expand(net, g, op, S, fidelity, out, keep_alike);
    const Times t = times(net, g, op, S);
    out.extra_latency_s = std::max(out.extra_latency_s, t.in_switch - t.links);
  }

 private:
  // The switch's own time and its links' (the schedule's closed form).
  struct Times {
    double in_switch, links;
  };
  Times times(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const {
    const int sw = op == CollectiveOp::AllReduce ? reducing_switch(net, g) : -1;
    if (sw < 0) refuse(g);
    const Node& n = net.node(sw);
    return {net.node(g[0]).step_latency_s + n.reduce_latency_s + S / n.reduce_Bps, schedule_time_s(net, spread(g, S))};
  }
  [[noreturn]] void refuse(const std::vector<int>& g) const {
    unsupported(name(), CollectiveOp::AllReduce, g.size(),
                "needs all_reduce over every GPU of a switch that reduces (nvls)");
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace dejavu::sim
