// One simulated iteration, end to end: lower the plan, run an engine, build the report.
#pragma once

#include <string>

#include "sim/engine.h"
#include "strategies/lowering.h"
#include "strategies/report.h"
#include "workloads/chakra/chakra_trace.h"

namespace dejavu::strategies {

struct Simulation {
  LoweredJob job;
  sim::Result result;
  Report report;
};

Simulation simulate(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                    const std::string& engine = "analytic", const sim::EngineOptions& options = {});

// A Chakra execution trace: the plan is in the trace (rank r on GPU r); the report has no
// model FLOPs to count.
Simulation simulate_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster,
                          const std::string& engine = "analytic", const sim::EngineOptions& options = {});

}  // namespace dejavu::strategies

#include "strategies/faults.h"

namespace dejavu::strategies {

struct DelayedTask {
  std::string label, device;
  double delay_s = 0;   // how much later it ended than without faults
  bool slowed = false;  // its own duration grew (a straggler's compute, a degraded link)
};

// What a fault scenario did to one iteration, against the same iteration without faults.
struct FaultReport {
  std::string scenario;
  double baseline_s = 0;   // the iteration without faults
  double iteration_s = 0;  // with them (when it stopped, if it did)
  double slowdown = 1;     // iteration_s / baseline_s, when it completed
  bool stopped = false;
  double stopped_at_s = 0;
  std::string cause;
  size_t tasks_done = 0, tasks_total = 0;
  double lost_gpu_seconds = 0;  // work of the stopped iteration: every GPU's time until the stop
  size_t delayed_tasks = 0, slowed_tasks = 0;
  std::vector<DelayedTask> most_delayed;   // up to 10, the longest delays first
  std::vector<ByzantineWorker> byzantine;  // recorded for the convergence model
};

struct FaultSimulation {
  Simulation simulation;  // the faulted iteration (a stopped one reports up to the stop)
  FaultReport faults;
};

// Lowers once (faulty GPUs kept distinct), runs the engine without and with the faults,
// and compares task by task.
FaultSimulation simulate_with_faults(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                     const Plan& plan, const FaultScenario& scenario,
                                     const std::string& engine = "analytic", const sim::EngineOptions& options = {});

}  // namespace dejavu::strategies
