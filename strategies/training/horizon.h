// A whole training run under failures: iterations of the simulated length, failures from
// the scenario (a per-GPU MTBF, exponential and seeded, plus timed fail-stops), and a
// recovery policy:
//   checkpoint  save every `interval` (cost C = model states / storage bandwidth); after a
//               failure lose the work since the last checkpoint, wait `restart`, load (C).
//   spares      the same, but a hot spare takes over in `swap` while spares last.
//   elastic     continue on the surviving servers with a plan re-chosen by the grid search
//               (the failed GPU's server leaves; the plan may use fewer servers, as the
//               global batch must divide); lose the work since the last checkpoint.
// With failure rate L (GPUs / MTBF), work per checkpoint interval t and downtime R per
// failure, one interval takes on average  E(t) = (1/L + R) (exp(L (t + C)) - 1)  (failures
// hit work and checkpoints, not downtime), so the goodput of interval t is t / E(t); the
// best t maximises it (Young's sqrt(2 C / L) for small L C).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "strategies/faults.h"

namespace dejavu::strategies {

struct HorizonInputs {
  double iteration_s = 0;  // fault-free iteration time of the plan
  long iterations = 0;     // to train
  int gpus = 0;
  double checkpoint_bytes = 0;  // model states written per checkpoint
  double storage_Bps = 0;
  FaultScenario scenario;
  // Elastic: once `servers_lost` servers have left, the iteration time of the re-searched
  // plan and how many GPUs it uses (it may leave some idle: the batch must divide); a
  // non-positive time means no plan fits and the run stops.
  std::function<std::pair<double, int>(int servers_lost)> elastic_plan;
  int gpus_per_server = 8;
};

struct HorizonResult {
  std::string policy;
  long iterations = 0, iterations_done = 0;
  double fault_free_s = 0;      // iterations x iteration time, no checkpoints
  double wall_s = 0;            // time to train (Monte Carlo, seeded)
  double useful_s = 0;          // time of the iterations kept (at the speed they ran)
  double goodput = 0;           // useful_s / wall_s
  double interval_s = 0;        // checkpoint interval used (whole iterations)
  double best_interval_s = 0;   // maximises the expected goodput
  double young_interval_s = 0;  // sqrt(2 C / L)
  double expected_goodput = 0;  // closed form at interval_s (checkpoint policy)
  double checkpoint_s = 0;      // C
  double failure_rate_per_s = 0;
  int failures = 0, spares_used = 0, servers_lost = 0;
  double lost_work_s = 0, downtime_s = 0, checkpoint_overhead_s = 0;
  std::string stopped;  // why the run could not finish, if it could not
  std::vector<ByzantineWorker> byzantine;
};

// Mean time of one checkpoint interval: work t, checkpoint c, downtime r, rate l.
double expected_interval_s(double rate, double work_s, double checkpoint_s, double downtime_s);
// The interval that maximises t / E(t) (golden-section search on the closed form).
double best_checkpoint_interval_s(double rate, double checkpoint_s, double downtime_s);

HorizonResult run_horizon(const HorizonInputs& in);

}  // namespace dejavu::strategies
