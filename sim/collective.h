// Collective algorithms: how long a collective takes on a group of hosts, and which links
// it loads. This is the `closed` (alpha-beta) fidelity, on the route's bottleneck.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/network.h"
#include "sim/registry.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

// How finely an engine that sees the network plays a collective out (DESIGN.md):
//   closed  the closed-form time, no traffic on the network model (no contention);
//   flow    the algorithm's per-link traffic as concurrent flows, plus its step latencies;
//   step    every point-to-point step with its data dependencies (exact, for validation).
// Without contention the three agree.
enum class Fidelity { Closed, Flow, Step };
Fidelity parse_fidelity(const std::string& name);  // throws Error listing the valid names

// One point-to-point flow of an expansion. It starts once the flows named in `after`
// (indices into the same expansion, -1 for none) have finished.
struct FlowSpec {
  int src = -1, dst = -1;
  double bytes = 0;
  int32_t after[2] = {-1, -1};
};

struct Expansion {
  std::vector<FlowSpec> flows;
  double extra_latency_s = 0;  // added after the last flow (flow fidelity's step latencies)
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // `bytes` is the buffer size S each participant holds (as in nccl-tests).
  virtual double time_s(const Network& net, const std::vector<int>& group, CollectiveOp op,
                        double bytes) const = 0;
  // Adds the bytes this collective sends across each link direction to
  // `load[2 * link + (forward ? 0 : 1)]`.
  virtual void add_link_load(const Network& net, const std::vector<int>& group, CollectiveOp op,
                             double bytes, std::vector<double>& load) const = 0;
  // Appends the flows of one group's collective at `fidelity` (Flow or Step) to `out`;
  // `after` indices are offset so several groups can share one expansion.
  virtual void expand(const Network& net, const std::vector<int>& group, CollectiveOp op,
                      double bytes, Fidelity fidelity, Expansion& out) const = 0;
};

Registry<CollectiveAlgorithm>& collective_algorithms();
void register_collective_algorithms();  // called by sim::register_builtins()

// Point-to-point: latency of the route plus bytes over its bottleneck.
double transfer_time_s(const Network& net, int src, int dst, double bytes);
void add_transfer_load(const Network& net, int src, int dst, double bytes,
                       std::vector<double>& load);

// The fraction of S each ring step moves, times the number of steps: 2(n-1)/n for
// all-reduce, (n-1)/n for reduce-scatter and all-gather.
double ring_traffic_factor(CollectiveOp op, int n);
int ring_steps(CollectiveOp op, int n);

}  // namespace dejavu::sim
