// A parallelization plan: how a model is split over a cluster.
//
//   tp: 4                  # tensor-parallel degree (Megatron)
//   pp: 2                  # pipeline stages
//   dp: 4                  # data-parallel replicas
//   micro_batch_size: 1
//   global_batch_size: 512
//   schedule: 1f1b         # gpipe | 1f1b | interleaved-1f1b  (`dejavu list` shows all)
//   virtual_stages: 1      # model chunks per GPU (interleaved-1f1b)
//   stages: [10, 12, 12, 14]  # layers per (virtual) stage; default: as even as possible
//   recompute: full        # none | selective (attention) | full
//   sequence_parallel: false  # tensor parallelism with reduce-scatter/all-gather (Megatron SP)
//   zero: 0                # 0 (plain data parallelism) | 1 | 2 | 3 (FSDP)
#pragma once

#include <map>
#include <string>
#include <vector>

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
  int virtual_stages = 1;
  std::vector<int> stages;  // layers per virtual stage; empty: even split
  std::string recompute = "none";
  bool sequence_parallel = false;
  int zero = 0;

  std::string file;                        // where it was read from
  std::map<std::string, SourceLoc> where;  // key -> position, for checks against the model

  int gpus() const { return tp * pp * dp; }
  int microbatches() const { return global_batch_size / (micro_batch_size * dp); }
  int total_stages() const { return pp * virtual_stages; }
};

Plan load_plan(const ConfigNode& root);
Plan load_plan_file(const std::string& path);

// Checks the plan against the model and the cluster; a ConfigError points at the plan key.
void validate(const Plan& plan, const workloads::ModelGraph& model,
              const platforms::Cluster& cluster);

}  // namespace dejavu::strategies
