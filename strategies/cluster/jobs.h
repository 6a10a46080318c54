// A jobs file: several trainings that share one cluster at once.
//
//   name: two-jobs
//   jobs:
//     - name: a
//       workload: ../../../workloads/presets/gpt3-1.3b.yaml   # a file (beside this one) or a mapping
//       plan: ../dp8-zero1.yaml                              # likewise; its tp*cp*pp*dp GPUs
//       servers: [0, 2]                                      # or gpus: [0, 1, ...]; neither: --policy places it
//     - name: b
//       ...
//
// Each job runs its own plan on its own GPUs (rank r on the r-th GPU listed); all of them
// share the platform's network.
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/error.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::cluster {

struct JobSpec {
  std::string name;
  workloads::ModelGraph model;
  Plan plan;
  std::vector<int> gpus;  // as the file places it, in rank order; empty: the policy places it
  SourceLoc where;        // the job's entry in the file
  int gpu_count() const { return static_cast<int>(plan.gpus()); }
};

struct JobsFile {
  std::string name;
  std::vector<JobSpec> jobs;
};

// Throws ConfigError at the place in the file: an unknown key, a server or GPU the cluster
// lacks or another job holds, a placement whose size is not the plan's, more GPUs than the
// cluster has, a schedule that does not flush (its step is a steady state, not one run).
JobsFile load_jobs_file(const std::string& path, const platforms::Cluster& cluster);

}  // namespace dejavu::strategies::cluster
