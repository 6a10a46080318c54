// Where a job's GPUs are: placement policies (a registry; `dejavu list` prints them) choose
// free GPUs of a cluster for a job, and job_cluster() is the job's view of its GPUs: the
// cluster with only them, in rank order, on the whole cluster's network (so a job's
// transfers cross the links every other job's cross).
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/random.h"
#include "sim/registry.h"

namespace dejavu::strategies::cluster {

// How a cluster's GPUs nest, for placing jobs: servers, and units of servers that share
// leaf switches (platforms::Cluster::servers_per_unit).
struct ClusterShape {
  std::vector<std::vector<int>> server_gpus;  // per server, its GPUs in local order
  int servers_per_unit = 1;
  int unit_of(int server) const { return server / servers_per_unit; }
  int units() const { return (static_cast<int>(server_gpus.size()) + servers_per_unit - 1) / servers_per_unit; }
};
ClusterShape shape_of(const platforms::Cluster& cluster);

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // `count` GPUs among the free ones (free[g] != 0), in rank order (server, then local
  // index); empty when the free GPUs cannot hold the job. Draws from `rng` if random.
  virtual std::vector<int> place(const ClusterShape& shape, const std::vector<char>& free, int count,
                                 sim::Rng& rng) const = 0;
};

Registry<PlacementPolicy>& placement_policies();
void register_placement_policies();  // first-fit, topology-aware, random; safe to call twice

// Where topology-aware packing puts a job of `count` GPUs on the empty cluster: its ideal
// GPUs (a trace's `hours` are of its step there; `plan: search` searches there).
std::vector<int> packed_gpus(const platforms::Cluster& cluster, int count);

// The cluster as a job on `gpus` sees it: those GPUs in that order (its ranks), the
// groups and fabric as they are, the whole network.
// With a plan's gpu_order, its GPUs taken in that order of GPU types (stably, as
// platforms/gpu_order.h orders a whole cluster's servers).
platforms::Cluster job_cluster(const platforms::Cluster& cluster, const std::vector<int>& gpus,
                               const std::vector<std::string>& gpu_order = {});

}  // namespace dejavu::strategies::cluster
