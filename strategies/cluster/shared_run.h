// Several jobs at once on one cluster: each job's step alone on the platform, then all of
// them together in one engine run on the shared network, each job repeating its step so
// that all keep running over a common window, and what each lost to the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "strategies/cluster/jobs.h"

namespace dejavu::strategies::cluster {

struct SharedRunOptions {
  std::string engine = "analytic";
  sim::EngineOptions options;
  std::string policy = "first-fit";  // places the jobs the file does not place
  uint64_t seed = 1;                 // for a random policy
  // The job with the longest step runs this many steps together; the others as many as fit
  // in that time (at most max_repeats each).
  int steps = 3;
  int max_repeats = 200;
  // Each work item one task (LowerOptions::fuse_items): a tenth of the tasks, the same step
  // alone on the analytic engine; a work item's tensor-parallel collectives are then priced
  // on their own routes, not beside other jobs' traffic (their data-parallel and pipeline
  // transfers still are). The scheduler's choice (docs/CLUSTER.md measures what it changes).
  bool fuse_items = false;
};

struct JobRun {
  std::string name, workload, plan;
  std::vector<int> gpus;  // rank order
  double alone_s = 0;     // a step with the cluster to itself
  double together_s = 0;  // a step beside the others: the mean of its steps inside the window
  // Time its transfers and collectives took a step (summed over tasks), alone and together.
  double comm_alone_s = 0, comm_together_s = 0;
  int steps_run = 0;                                 // steps it ran together
  int steps_measured = 0;                            // of them, ended before the first job finished all of its own
  double peak_memory_bytes = 0, capacity_bytes = 0;  // its fullest GPU, alone
  double slowdown() const { return alone_s > 0 ? together_s / alone_s : 1; }
  double comm_slowdown() const { return comm_alone_s > 0 ? comm_together_s / comm_alone_s : 1; }
};

// A link direction more than one job's traffic crosses, and each one's bytes a step.
struct ContestedLink {
  std::string name;  // "leaf0 -> spine"
  std::vector<std::pair<std::string, double>> bytes_per_step;
  double total() const;
};

struct SharedRun {
  std::string engine, platform, jobs_name;
  std::vector<JobRun> jobs;
  std::vector<ContestedLink> contested;  // the most loaded first, at most 10
  double window_s = 0;                   // until the first job finished its steps together
  uint64_t activities = 0;               // engine events of the run together
};

// Why a plan's step cannot run beside other jobs (its step is a steady state of its own:
// a schedule that does not flush, delayed averaging), as the rest of an error line; "" if
// it can.
std::string why_not_shared(const Plan& plan);

// A job's step alone on its GPUs of the cluster: its JobRun's alone fields, its step's task
// graph (to repeat beside others) and the link directions it loads (index 2*link (a->b),
// 2*link+1 (b->a)) with their bytes a step.
struct AloneRun {
  JobRun run;
  sim::TaskGraph graph;
  std::vector<std::pair<int, double>> link_bytes;
  // Beside each link direction of link_bytes: the most bytes/s it asks of it at once
  // (sim::Result::link_peak_demand_Bps; infinity where the engine does not say).
  std::vector<double> peak_demand;
};
AloneRun run_alone(const workloads::ModelGraph& model, const Plan& plan, const std::string& name,
                   const std::vector<int>& gpus, const platforms::Cluster& cluster, const SharedRunOptions& options);

// The jobs' steps together in one engine run; their JobRuns with both sides filled.
SharedRun run_together(const std::vector<const AloneRun*>& jobs, const platforms::Cluster& cluster,
                       const SharedRunOptions& options);

// Places the jobs the file does not (options.policy, in file order), then runs them alone
// and together. Throws ConfigError when the free GPUs cannot hold a job.
SharedRun run_shared(const JobsFile& jobs, const platforms::Cluster& cluster, const SharedRunOptions& options);

// The GPUs of each job: the file's, else the policy's among those left free.
std::vector<std::vector<int>> place_jobs(const JobsFile& jobs, const platforms::Cluster& cluster,
                                         const std::string& policy, uint64_t seed);

}  // namespace dejavu::strategies::cluster
