// A job trace: arrivals at a cluster, one CSV row each (header names the columns, any order).
//
//   name,submit_s,gpus,workload,tp,pp,micro_batch,global_batch,hours
//   j0001,0,8,../../../workloads/presets/gpt3-1.3b.yaml,1,1,4,128,2.5
//
// name       unique
// submit_s   when it arrives, seconds from the start
// gpus       how many GPUs it takes
// workload   a workload YAML, beside the CSV
// plan       a plan YAML beside the CSV (its tp*cp*pp*dp must be gpus); or `search`: the
//            grid searcher's best for its GPUs packed on the empty cluster and its
//            global_batch (needed); or, without it:
// tp, pp     tensor and pipeline degrees (default 1); dp is gpus / (tp*pp), 1F1B
// micro_batch, global_batch   sequences (defaults 1 and dp x micro_batch)
// recompute, sequence_parallel, zero   as in a plan (defaults none, false, 0)
// iterations | hours          its length: steps, or hours of its step alone on the cluster
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/error.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::cluster {

struct TraceJob {
  std::string name;
  double submit_s = 0;
  int gpus = 0;
  std::shared_ptr<const workloads::ModelGraph> model;  // shared by the jobs of one workload file
  Plan plan;
  long long iterations = 0;  // 0: `hours` gives its length
  double hours = 0;
  SourceLoc where;
};

struct Trace {
  std::string name;
  std::vector<TraceJob> jobs;  // by submit time (ties in file order)
};

// Throws ConfigError naming the file, line and column: a missing or malformed cell, a job
// larger than the cluster, degrees that do not divide its GPUs, a name used twice.
Trace load_trace_file(const std::string& path, const platforms::Cluster& cluster);

}  // namespace dejavu::strategies::cluster
