// A parallelization plan: how a model is split over a cluster.
//
//   tp: 4                  # tensor-parallel degree (Megatron)
//   pp: 2                  # pipeline stages
//   dp: 4                  # data-parallel replicas
//   micro_batch_size: 1
//   global_batch_size: 512
//   schedule: 1f1b         # gpipe | 1f1b  (`dejavu list` shows all)
//   recompute: full        # none | full
#pragma once

#include <map>
#include <string>

#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

struct Plan {
  std::string name = "plan";
  int tp = 1, pp = 1, dp = 1;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  std::string schedule = "1f1b";
  std::string recompute = "none";

  std::string file;                        // where it was read from
  std::map<std::string, SourceLoc> where;  // key -> position, for checks against the model

  int gpus() const { return tp * pp * dp; }
  int microbatches() const { return global_batch_size / (micro_batch_size * dp); }
};

Plan load_plan(const ConfigNode& root);
Plan load_plan_file(const std::string& path);

// Checks the plan against the model and the cluster; a ConfigError points at the plan key.
void validate(const Plan& plan, const workloads::ModelGraph& model,
              const platforms::Cluster& cluster);

}  // namespace dejavu::strategies
