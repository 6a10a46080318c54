#include "sim/collective.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "sim/collectives/algorithms.h"
#include "sim/error.h"

namespace dejavu::sim {

Fidelity parse_fidelity(const std::string& name) {
  if (name == "closed") return Fidelity::Closed;
  if (name == "flow") return Fidelity::Flow;
  if (name == "step") return Fidelity::Step;
  throw Error("unknown collective fidelity \"" + name + "\"; valid: closed, flow, step");
}

double bus_bandwidth_factor(CollectiveOp op, int n) {
  if (n <= 1) return 1;
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      return static_cast<double>(n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv:
      return 1;
  }
  return 1;
}

namespace {
double step_latency(const Network& net, const Transfer& t) {
  return net.path_cost(t.src, t.dst).latency_s + net.node(t.src).step_latency_s;
}

double step_time_s(const Network& net, const std::vector<Transfer>& step) {
  double latency = 0;
  std::unordered_map<int, double> load;  // 2*link + direction -> bytes in this step
  for (const Transfer& t : step) {
    if (t.src == t.dst) continue;
    latency = std::max(latency, step_latency(net, t));
    for (const Hop& h : net.route(t.src, t.dst)) load[2 * h.link + (h.forward ? 0 : 1)] += t.bytes;
  }
  double busiest = 0;
  for (const auto& [key, bytes] : load) busiest = std::max(busiest, bytes / net.link(key / 2).bandwidth_Bps);
  return latency + busiest;
}

// Step fidelity: one step's transfers as flows, each waiting for every flow that touched its
// sender in the last step the sender took part in (what it received, and its own send).
void append_step(const std::vector<Transfer>& step, std::unordered_map<int, std::vector<int32_t>>& last,
                 Expansion& out) {
  const size_t first = out.flows.size();
  for (const Transfer& t : step) {
    FlowSpec f{t.src, t.dst, t.bytes, static_cast<int32_t>(out.deps.size()), 0};
    auto it = last.find(t.src);
    if (it != last.end()) {
      out.deps.insert(out.deps.end(), it->second.begin(), it->second.end());
      f.dep_count = static_cast<int32_t>(it->second.size());
    }
    out.flows.push_back(f);
  }
  std::unordered_map<int, std::vector<int32_t>> touched;
  for (size_t i = first; i < out.flows.size(); ++i) {
    const FlowSpec& f = out.flows[i];
    touched[f.dst].push_back(static_cast<int32_t>(i));
    if (f.src != f.dst) touched[f.src].push_back(static_cast<int32_t>(i));
  }
  for (auto& [host, flows] : touched) last[host] = std::move(flows);
}
}  // namespace

double schedule_time_s(const Network& net, const CommSchedule& s) {
  double total = 0;
  for (const CommStep& step : s.steps) total += step.repeat * step_time_s(net, step.transfers);
  return total;
}

double CollectiveAlgorithm::time_s(const Network& net, const std::vector<int>& group, CollectiveOp op,
                                   double bytes) const {
  if (group.size() <= 1) return 0;
  return schedule_time_s(net, schedule(net, group, op, bytes));
}

void CollectiveAlgorithm::add_link_load(const Network& net, const std::vector<int>& group, CollectiveOp op,
                                        double bytes, LinkLoad& load) const {
  if (group.size() <= 1) return;
  for (const CommStep& step : schedule(net, group, op, bytes).steps)
    for (const Transfer& t : step.transfers) add_transfer_load(net, t.src, t.dst, step.repeat * t.bytes, load);
}

void CollectiveAlgorithm::expand(const Network& net, const std::vector<int>& group, CollectiveOp op, double bytes,
                                 Fidelity fidelity, Expansion& out, int keep_alike) const {
  if (group.size() <= 1) return;
  const CommSchedule s = schedule(net, group, op, bytes);
  if (fidelity == Fidelity::Step) {
    std::unordered_map<int, std::vector<int32_t>> last;
    for (const CommStep& step : s.steps) {
      const bool cut = keep_alike > 0 && step.repeat > keep_alike && !step.transfers.empty();
      const int kept = cut ? keep_alike : step.repeat;
      if (cut)
        out.cut.push_back(AlikeSteps{static_cast<int32_t>(out.flows.size()),
                                     static_cast<int32_t>(step.transfers.size()), kept,
                                     static_cast<int64_t>(step.repeat) - kept});
      for (int r = 0; r < kept; ++r) append_step(step.transfers, last, out);
    }
    return;
  }
  // Flow: the traffic of every host pair as one flow; the steps' latencies beyond the
  // one each flow pays itself come after.
  std::map<std::pair<int, int>, size_t> pair_index;
  double latency_sum = 0;
  for (const CommStep& step : s.steps) {
    double lat = 0;
    for (const Transfer& t : step.transfers) {
      if (t.src == t.dst) continue;
      lat = std::max(lat, step_latency(net, t));
      auto [it, fresh] = pair_index.emplace(std::make_pair(t.src, t.dst), out.flows.size());
      if (fresh) out.flows.push_back(FlowSpec{t.src, t.dst, 0, 0, 0});
      out.flows[it->second].bytes += step.repeat * t.bytes;
    }
    latency_sum += step.repeat * lat;
  }
  double own = 0;
  for (const auto& [pair, index] : pair_index)
    own = std::max(own, step_latency(net, Transfer{pair.first, pair.second, 0}));
  out.extra_latency_s = std::max(out.extra_latency_s, latency_sum - own);
}

double transfer_time_s(const Network& net, int src, int dst, double bytes) {
  if (src == dst) return 0;
  const PathCost c = net.path_cost(src, dst);
  return net.node(src).step_latency_s + c.latency_s + bytes / c.bottleneck_Bps;
}

void add_transfer_load(const Network& net, int src, int dst, double bytes, LinkLoad& load) {
  if (src == dst) return;
  for (const Hop& h : net.route(src, dst)) load.add(2 * h.link + (h.forward ? 0 : 1), bytes);
}

const CollectiveAlgorithm& algorithm_for(const CollectiveAlgorithm& chosen, const Network& net,
                                         const std::vector<int>& group, CollectiveOp op) {
  static const std::unique_ptr<CollectiveAlgorithm> in_switch = make_nvls();
  if (chosen.yields_to_switch() && in_switch->supports(net, group, op)) return *in_switch;
  if (chosen.supports(net, group, op)) return chosen;
  static const std::unique_ptr<CollectiveAlgorithm> fallback = make_auto();
  return *fallback;
}

Registry<CollectiveAlgorithm>& collective_algorithms() {
  static Registry<CollectiveAlgorithm> registry("collective algorithm");
  return registry;
}

void register_collective_algorithms() {
  auto& r = collective_algorithms();
  r.add("ring",
        "ring in group order; broadcast and reduce as a chunked chain (an all_reduce over a whole switch with nvls "
        "runs in the switch, as NCCL's)",
        make_ring);
  r.add("tree", "NCCL-style double binary tree, chunked (all_reduce, broadcast, reduce)", make_double_binary_tree);
  r.add("halving-doubling", "recursive halving then doubling (powers of two)", make_halving_doubling);
  r.add("direct", "every pair at once, one step (all-to-all's natural form)", make_direct);
  r.add("hierarchical", "all_reduce: reduce-scatter in each server, all-reduce across, all-gather in",
        make_hierarchical);
  r.add("nvls", "all_reduce reduced in the NVSwitch (NVLink SHARP), over every GPU of a switch with nvls", make_nvls);
  r.add("auto", "the fastest algorithm for the op, size and topology (closed form), as NCCL's tuner", make_auto);
}

}  // namespace dejavu::sim
