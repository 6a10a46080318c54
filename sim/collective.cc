#include "sim/collective.h"

#include "sim/error.h"

#include <algorithm>
#include <limits>

namespace dejavu::sim {

int ring_steps(CollectiveOp op, int n) {
  if (n <= 1) return 0;
  return op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
}

double ring_traffic_factor(CollectiveOp op, int n) {
  if (n <= 1) return 0;
  return static_cast<double>(ring_steps(op, n)) / n;
}

double transfer_time_s(const Network& net, int src, int dst, double bytes) {
  if (src == dst) return 0;
  const PathCost c = net.path_cost(src, dst);
  return c.latency_s + bytes / c.bottleneck_Bps;
}

void add_transfer_load(const Network& net, int src, int dst, double bytes,
                       std::vector<double>& load) {
  if (src == dst) return;
  for (const Hop& h : net.route(src, dst)) load[2 * h.link + (h.forward ? 0 : 1)] += bytes;
}

namespace {

// Ring: each of the n hosts sends to the next; every step moves S/n over every hop at
// once, so a step costs S/(n·B) + a on the slowest hop, and all-reduce takes 2(n-1) steps.
class Ring : public CollectiveAlgorithm {
 public:
  double time_s(const Network& net, const std::vector<int>& group, CollectiveOp op,
                double bytes) const override {
    const int n = static_cast<int>(group.size());
    if (n <= 1) return 0;
    double bw = std::numeric_limits<double>::infinity();
    double lat = 0;
    for (int i = 0; i < n; ++i) {
      const PathCost c = net.path_cost(group[i], group[(i + 1) % n]);
      bw = std::min(bw, c.bottleneck_Bps);
      lat = std::max(lat, c.latency_s);
    }
    return ring_steps(op, n) * (bytes / (n * bw) + lat);
  }

  void add_link_load(const Network& net, const std::vector<int>& group, CollectiveOp op,
                     double bytes, std::vector<double>& load) const override {
    const int n = static_cast<int>(group.size());
    const double per_hop = ring_traffic_factor(op, n) * bytes;
    for (int i = 0; i < n && n > 1; ++i)
      add_transfer_load(net, group[i], group[(i + 1) % n], per_hop, load);
  }

  // flow: n concurrent flows of steps·S/n, then (steps-1) more hop latencies.
  // step: `steps` rounds of n flows of S/n; host i's send in round k waits for what it
  // received in round k-1 (from i-1) and for its own previous send on the same hop.
  void expand(const Network& net, const std::vector<int>& group, CollectiveOp op, double bytes,
              Fidelity fidelity, Expansion& out) const override {
    const int n = static_cast<int>(group.size());
    if (n <= 1) return;
    const int steps = ring_steps(op, n);
    const int32_t base = static_cast<int32_t>(out.flows.size());
    if (fidelity == Fidelity::Step) {
      for (int k = 0; k < steps; ++k) {
        for (int i = 0; i < n; ++i) {
          FlowSpec f{group[i], group[(i + 1) % n], bytes / n, {-1, -1}};
          if (k > 0) {
            f.after[0] = base + (k - 1) * n + (i + n - 1) % n;
            f.after[1] = base + (k - 1) * n + i;
          }
          out.flows.push_back(f);
        }
      }
      return;
    }
    double lat = 0;
    for (int i = 0; i < n; ++i) {
      lat = std::max(lat, net.path_cost(group[i], group[(i + 1) % n]).latency_s);
      out.flows.push_back(FlowSpec{group[i], group[(i + 1) % n], steps * bytes / n, {-1, -1}});
    }
    out.extra_latency_s = std::max(out.extra_latency_s, (steps - 1) * lat);
  }
};

}  // namespace

Fidelity parse_fidelity(const std::string& name) {
  if (name == "closed") return Fidelity::Closed;
  if (name == "flow") return Fidelity::Flow;
  if (name == "step") return Fidelity::Step;
  throw Error("unknown collective fidelity \"" + name + "\"; valid: closed, flow, step");
}

Registry<CollectiveAlgorithm>& collective_algorithms() {
  static Registry<CollectiveAlgorithm> registry("collective algorithm");
  return registry;
}

void register_collective_algorithms() {
  collective_algorithms().add(
      "ring", "ring over the group in order: 2(n-1) steps of S/n each for all-reduce",
      [] { return std::make_unique<Ring>(); });
}

}  // namespace dejavu::sim
