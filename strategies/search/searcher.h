// Plan searchers: one interface, one registry (`dejavu list` names them), the same
// Evaluator for all, so their answers compare.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "sim/registry.h"
#include "strategies/plan.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

struct Progress {
  long done = 0;
  long total = 0;  // 0: open-ended (MCMC counts iterations, so it knows)
  double best_s = 0;
};

struct SearchOptions {
  double budget_s = 0;  // wall-clock cap; 0: none. A search cut short says so.
  // What the budget is measured on: seconds since any fixed moment. Empty: the steady
  // clock. (Tests give a clock that advances with the work, so the budget bounds work.)
  std::function<double()> clock;
  unsigned long long seed = 1;                    // every random choice (mcmc, diff)
  int top = 5;                                    // how many of the best plans to keep
  long iterations = 0;                            // mcmc proposals, diff steps; 0: the searcher's default
  std::function<void(const Progress&)> progress;  // called now and then
  bool polish = true;  // mcmc, bo and rl end with a local search around their best (polish.h)
  bool refine = true;  // every searcher's best plans refined over the second-tier knobs (refine.h)
};

struct Candidate {
  Plan plan;
  Score score;
  // Its time on the search's own engine (kSearchEngine) when the top plans were re-ranked on
  // another (rerank.h), whose time `score` then holds; 0: not re-ranked.
  double alone_s = 0;
  // Under `search --objective time-to-accuracy` (strategies/training/time_to_accuracy.h): its
  // time to the target loss (infinity: not reached) and its update rule; 0 otherwise.
  double to_accuracy_s = 0;
  long steps = 0;
  std::string rule;
  // Under `search --objective cost`: the GPU-hours of the run's iterations on the plan's GPUs
  // (infinity: does not fit); 0 otherwise.
  double gpu_hours = 0;
  // With prices per GPU type (`search --price`): those GPU-hours in dollars; 0 otherwise.
  double dollars = 0;
  // What the run ranks by: the dollars, GPU-hours or the time to accuracy when set, else the
  // iteration time.
  double objective() const {
    if (dollars > 0) return dollars;
    if (gpu_hours > 0) return gpu_hours;
    return to_accuracy_s > 0 ? to_accuracy_s : score.cost();
  }
};

struct SearchResult {
  std::string algorithm;
  std::vector<Candidate> top;  // plans that fit, best first, distinct
  long evaluations = 0;        // Evaluator calls made by this search (cache hits included)
  long simulations = 0;        // of which were simulated
  double wall_s = 0;
  bool budget_exhausted = false;
  std::string note;       // what the searcher wants the user to know
  std::string ranked_on;  // the engine `top`'s times come from, when re-ranked (rerank.h)
  std::string ranking;    // how that ranking went, for the user
  const Candidate* best() const { return top.empty() ? nullptr : &top.front(); }
};

class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const = 0;
};

Registry<Searcher>& searchers();
void register_searchers();  // grid, dp, mcmc, diff, bo, rl

// Shared bookkeeping: the best k fitting plans seen, the budget clock, progress and counts.
class Tracker {
 public:
  Tracker(std::string algorithm, const Problem& problem, Evaluator& evaluator, const SearchOptions& options);
  // Evaluates through the evaluator and keeps the plan if it is among the best. On a
  // cluster of several GPU types it also scores the plan with its layers split by its
  // stages' speed (stage_balance.h), its data-parallel replicas balanced
  // (replica_balance.h), and both, and keeps those too; the searcher is told the plan's own
  // score, so what it learns and re-cuts is the plan it proposed.
  Score evaluate(const Plan& plan);
  // Evaluates and keeps the plan as it is, without the balanced variants (the refinement's
  // plans keep the split of the plan they refine).
  Score evaluate_as_is(const Plan& plan) { return keep(plan); }
  bool prices_fast(const Plan& plan) { return evaluator_.prices_fast(plan); }
  bool out_of_time();  // sets budget_exhausted once the budget is spent
  void progress(long done, long total);
  double best_s() const;
  const Candidate* best() const { return result_.top.empty() ? nullptr : &result_.top.front(); }
  const std::vector<Candidate>& top() const { return result_.top; }
  const SearchOptions& options() const { return options_; }
  // Refines the best plans (refine.h, unless options.refine is off), then the result.
  SearchResult finish();

 private:
  Score keep(const Plan& plan);
  SearchResult result_;
  const Problem& problem_;
  bool mixed_ = false;             // the cluster has several GPU types
  std::vector<std::string> keys_;  // plan_key of each of result_.top
  Evaluator& evaluator_;
  SearchOptions options_;
  long evaluations_at_start_, simulations_at_start_;
  std::chrono::steady_clock::time_point start_, last_progress_;
  double budget_start_ = 0;
  double now_s() const;
};

}  // namespace dejavu::strategies::search
