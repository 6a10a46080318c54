// Collective algorithms: how long a collective takes on a group of hosts, and which links
// it loads. This is the `closed` (alpha-beta) fidelity, on the route's bottleneck.
#pragma once

#include <string>
#include <vector>

#include "sim/network.h"
#include "sim/registry.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

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
