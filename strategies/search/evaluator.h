// Scoring plans for the searchers: plan -> lowering -> analytic engine -> cost and memory
// verdict. Every searcher talks to an Evaluator, so they all see the same cost model, and
// a test can hand them a fake one whose optimum it knows.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "platforms/cluster.h"
#include "sim/engine.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::search {

// The engine searchers score plans on: the analytic engine without link sharing, which the
// fast pipeline model (pipeline_model.h) reproduces to 1e-9. `dejavu search` then ranks each
// searcher's best plans on the default engine, which shares links (rerank.h).
inline constexpr const char* kSearchEngine = "analytic-no-contention";

// What the search is asked: this model, this cluster, this global batch.
struct Problem {
  const workloads::ModelGraph* model = nullptr;
  const platforms::Cluster* cluster = nullptr;
  int global_batch = 0;
  std::string grad_dtype = "";  // every plan's Plan::grad_dtype: how the framework keeps gradients
  // The recomputation modes the search tries (strategies/recompute_modes.h): the framework's.
  // Empty: Megatron's, none, selective and full (Space::recompute).
  std::vector<std::string> recompute = {};
};

struct Score {
  bool valid = false;      // false: the plan breaks a rule (`error` says which)
  bool simulated = false;  // false: rejected without simulating (invalid, or memory bound)
  bool fits = false;       // every GPU's peak memory within its capacity
  double iteration_time_s = std::numeric_limits<double>::infinity();
  double peak_memory_bytes = 0;  // of the fullest GPU (highest peak / capacity)
  double capacity_bytes = 0;
  double tokens_per_s = 0;
  std::string error;

  // What searchers minimise: the iteration time of a plan that fits, else infinity.
  double cost() const { return valid && fits ? iteration_time_s : std::numeric_limits<double>::infinity(); }
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Score evaluate(const Plan& plan) = 0;
  // Whether evaluate() prices the plan on its fast path (no task graph), asked before
  // scoring plans the engine would price slowly.
  virtual bool prices_fast(const Plan& /*plan*/) { return true; }
  long evaluations() const { return evaluations_; }  // calls, cache hits included
  long simulations() const { return simulations_; }  // plans actually simulated

 protected:
  long evaluations_ = 0, simulations_ = 0;
};

// A canonical text for a plan's knobs, for caches and for telling plans apart.
std::string plan_key(const Plan& plan);

// The model states (weights, gradients, optimizer) a GPU holds at the least under the
// plan: a lower bound on its memory, known without lowering.
double model_state_lower_bound_bytes(const workloads::ModelGraph& model, const Plan& plan);

class PipelineModel;

// The real thing: lowering with one task per work item (LowerOptions::fuse_items) and the
// analytic engine, or for the plans it takes the PipelineModel, which gives the same
// numbers without building the graph (pipeline_model.h). Results are cached by plan_key.
// Plans whose model states alone exceed the smallest GPU are pruned before either.
class SimulationEvaluator : public Evaluator {
 public:
  enum class Path { Fast, Simulate };  // Fast: the PipelineModel where it applies
  explicit SimulationEvaluator(Problem problem, std::string collective_algorithm = "ring", Path path = Path::Fast);
  ~SimulationEvaluator() override;
  Score evaluate(const Plan& plan) override;
  bool prices_fast(const Plan& plan) override;
  long pruned() const { return pruned_; }

 private:
  Problem problem_;
  std::string algorithm_;
  std::unique_ptr<sim::Engine> engine_;
  std::unique_ptr<PipelineModel> fast_;
  double min_capacity_ = 0;
  std::unordered_map<std::string, Score> cache_;
  long pruned_ = 0;
};

}  // namespace dejavu::strategies::search
