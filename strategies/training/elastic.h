// Elastic re-planning after failures: the job goes on with the most servers left on
// which the plan's shape (tp, pp, schedule, chunks, sequence parallelism) still takes the
// global batch, with microbatch, recomputation and ZeRO re-chosen there by the grid
// search. run-horizon's elastic policy asks it after each lost server.
#pragma once

#include <map>
#include <utility>

#include "platforms/cluster.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

// The cluster without its last `lost` servers (the last group's first), its network rebuilt.
platforms::Cluster without_last_servers(const platforms::Cluster& full, int lost);

class ElasticPlanner {
 public:
  ElasticPlanner(const workloads::ModelGraph& model, const platforms::Cluster& full, Plan plan);
  // After `lost` servers have gone: the best iteration time and the GPUs it uses (the
  // batch may leave some idle), or {-1, 0} when no plan fits on any smaller cluster.
  std::pair<double, int> after_losing(int lost);

 private:
  std::pair<double, int> best_on(int servers);  // cached per server count; {-1, 0}: none
  const workloads::ModelGraph& model_;
  const platforms::Cluster& full_;
  Plan plan_;
  std::map<int, std::pair<double, int>> by_servers_;
};

}  // namespace dejavu::strategies
