// The pipeline stage-partitioning problem, on its own: L layers in order, cut into p
// contiguous stages, stage s running on its own GPUs (so a layer may cost more on one
// stage than another: mixed GPU types). With B microbatches, 1F1B takes about
//     sum_s t_s + (B - 1) max_s t_s,   t_s = fwd + bwd time of stage s per microbatch
// (Alpa's inter-operator objective), and stage s must fit its GPUs' memory.
//
// Two solvers: Alpa's dynamic programme (exact), and a DARTS-style relaxation (a softmax
// per layer over the stages, gradient descent on a smooth surrogate, then argmax).
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "strategies/plan.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

struct PartitionProblem {
  int stages = 1;
  int microbatches = 1;
  std::vector<std::vector<double>> layer_s;      // [stage][layer]: time on that stage's GPUs
  std::vector<double> fixed_s;                   // [stage]: embedding on the first, head on the last
  std::vector<std::vector<double>> layer_bytes;  // [stage][layer]: memory it takes on that stage
  std::vector<double> fixed_bytes;               // [stage]
  std::vector<double> capacity_bytes;            // [stage]; 0: unlimited
  int layers() const { return layer_s.empty() ? 0 : static_cast<int>(layer_s[0].size()); }
};

struct Partition {
  std::vector<int> layers_per_stage;  // empty: nothing fits
  double objective_s = std::numeric_limits<double>::infinity();
};

// The objective of a partition; infinity if a stage is empty or does not fit.
double partition_objective(const PartitionProblem& problem, const std::vector<int>& layers_per_stage);

// Alpa's DP: for every candidate bound on the slowest stage, the least sum of stage times
// whose stages all stay under it; keep the best sum + (B-1) * bound. Exact.
// `stop`, if given, is asked now and then; true ends the work early (an empty Partition).
Partition alpa_partition(const PartitionProblem& problem, const std::function<bool()>& stop = {});

struct DiffOptions {
  int steps = 300;
  double learning_rate = 0.2;   // Adam, on logits
  unsigned long long seed = 1;  // the logits' initial noise
  std::function<bool()> stop;   // asked every few steps; true ends early (an empty Partition)
};
// DARTS-style: per layer, softmax(alpha_l / tau) over the stages; surrogate
//   sum_s T_s + (B-1) LSE_k(T) + memory penalty + order penalty,  T_s = sum_l pi_ls c_ls,
// its gradient written out by hand (no autodiff library), Adam, tau annealed 1 -> 0.05;
// then each layer to its argmax stage, repaired to contiguous stages of the same sizes.
Partition differentiable_partition(const PartitionProblem& problem, const DiffOptions& options = {});

// The partitioning problem of `plan` (its tp, pp, dp, microbatch, schedule, recompute,
// ZeRO, SP) on the problem's cluster, one stage per virtual stage: layer costs from
// block_costs() on the GPUs running it; memory as 1F1B keeps it (GPU stage s holds
// min(p - s, m) microbatches' activations; GPipe all m), a GPU's chunks sharing its memory.
// The objective is Alpa's; for interleaved and zero-bubble schedules it is a proxy, and the
// evaluator has the last word.
PartitionProblem partition_problem(const Problem& problem, const Plan& plan,
                                   const std::string& collective_algorithm = "ring");

}  // namespace dejavu::strategies::search
