// A cluster over time: the jobs of a trace arrive, wait in one first-come-first-served
// queue, are placed by a placement policy, run, fail and recover, and end. A job's step is
// not simulated step by step: whenever the set of running jobs changes, the jobs whose
// alone traffic shares a link direction are run together once (strategies/cluster/
// shared_run.h) and each advances at the step time found until the next change; a job
// that shares nothing runs at its step alone.
//
// Failures (a fault scenario's random_failures, gpu_fail, server_fail): a failed GPU is
// down for `repair_s`; the job on it loses the work since its last checkpoint (interval:
// the scenario's, else Young's sqrt(2 C MTBF / GPUs) with C its model states over the
// cluster's storage bandwidth, each checkpoint costing C) and recovers by the scenario's
// policy: checkpoint (its GPUs freed, back to the head of the queue, `restart` before it
// steps again), spares (a free GPU takes the failed one's place after `swap`, else as
// checkpoint) or elastic (it goes on without the failed GPU's server, with the most
// data-parallel replicas the rest holds that divide its global batch, after `restart`;
// with none left, as checkpoint).
#pragma once

#include <string>
#include <vector>

#include "strategies/cluster/shared_run.h"
#include "strategies/cluster/trace.h"
#include "strategies/faults.h"

namespace dejavu::strategies::cluster {

struct ScheduleOptions {
  std::string policy = "first-fit";
  uint64_t seed = 1;  // the random placement policy
  // One step of the longest job together, at most 10 of each other one, a task per work item.
  SharedRunOptions run = [] {
    SharedRunOptions r;
    r.steps = 1;
    r.max_repeats = 10;
    r.fuse_items = true;
    return r;
  }();
  const FaultScenario* faults = nullptr;
  double repair_s = 4 * 3600;  // a failed GPU back in service
};

struct JobOutcome {
  std::string name, plan;
  int gpus = 0;
  double submit_s = 0, start_s = -1, end_s = -1;  // first start; end < 0: never ended
  double iterations = 0;
  double alone_step_s = 0;  // its step with the cluster to itself, on its first GPUs
  double ideal_step_s = 0;  // the same where topology-aware packing puts it on the empty cluster
                            // (a trace's `hours` are of this step)
  double interference = 1;  // its mean step over the run / alone (co-runners' traffic)
  int failures = 0;
  double lost_s = 0;      // time of the steps failures rolled back
  double held_gpu_s = 0;  // GPU-seconds it held GPUs
  double queue_s() const { return start_s - submit_s; }
  double jct_s() const { return end_s - submit_s; }
  // Against its ideal: never waiting, never failing, alone, on its packed GPUs.
  double slowdown() const { return jct_s() / (iterations * ideal_step_s); }
  double placement() const { return alone_step_s / ideal_step_s; }  // its first GPUs' step over the ideal
};

struct ScheduleResult {
  std::string policy, engine, trace, platform;
  int gpus = 0;
  std::vector<JobOutcome> jobs;  // in trace order (by submit time)
  double makespan_s = 0;         // the last job's end
  double utilisation = 0;        // GPU-seconds held by jobs / (GPUs x makespan)
  double goodput = 0;            // GPU-seconds of its steps each at its ideal time / GPU-seconds held
  int failures = 0;              // GPU failures (those that hit a job: jobs' failures)
  size_t shared_runs = 0;        // runs of co-running jobs together (distinct states)
  size_t alone_runs = 0;         // jobs' steps simulated alone (one per placement, one per ideal)
  size_t events = 0;
};

ScheduleResult run_schedule(const Trace& trace, const platforms::Cluster& cluster, const ScheduleOptions& options);

}  // namespace dejavu::strategies::cluster
