#include "strategies/search/searcher.h"

#include "platforms/gpu_order.h"
#include "strategies/search/refine.h"
#include "strategies/search/replica_balance.h"
#include "strategies/search/stage_balance.h"

#include <algorithm>

#include "strategies/search/searchers.h"

namespace dejavu::strategies::search {

Registry<Searcher>& searchers() {
  static Registry<Searcher> r("plan searcher");
  return r;
}

void register_searchers() {
  auto& r = searchers();
  if (r.has("grid")) return;
  r.add("grid", "exhaustive over degrees, microbatch, schedule, recompute, ZeRO, SP; memory-pruned",
        [] { return std::make_unique<GridSearcher>(); });
  r.add("dp", "Alpa-style dynamic programming: layers into stages on each mesh, GPU-type aware",
        [] { return std::make_unique<AlpaSearcher>(); });
  r.add("mcmc", "FlexFlow-style Metropolis-Hastings over knobs and stage boundaries (seeded)",
        [] { return std::make_unique<McmcSearcher>(); });
  r.add("diff", "DARTS-style differentiable stage partitioning (softmax per layer, gradient descent)",
        [] { return std::make_unique<DifferentiableSearcher>(); });
  r.add("bo", "Bayesian optimisation over the knobs: a Gaussian process, expected improvement (seeded)",
        [] { return std::make_unique<BayesSearcher>(); });
  r.add("rl", "REINFORCE: a softmax policy per knob, learned from sampled plans' times (seeded)",
        [] { return std::make_unique<ReinforceSearcher>(); });
}

Tracker::Tracker(std::string algorithm, const Problem& problem, Evaluator& evaluator, const SearchOptions& options)
    : problem_(problem), evaluator_(evaluator), options_(options) {
  mixed_ = problem.cluster && platforms::gpu_types(*problem.cluster).size() > 1;
  result_.algorithm = std::move(algorithm);
  evaluations_at_start_ = evaluator.evaluations();
  simulations_at_start_ = evaluator.simulations();
  start_ = last_progress_ = std::chrono::steady_clock::now();
  budget_start_ = now_s();
}

double Tracker::now_s() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Score Tracker::evaluate(const Plan& plan) {
  const Score s = keep(plan);
  if (!mixed_ || !s.valid) return s;
  Plan stages, replicas, both;
  const bool by_stage = balance_stages(problem_, plan, stages);
  if (by_stage) keep(stages);
  if (balance_replicas(problem_, plan, replicas)) keep(replicas);
  if (by_stage && balance_replicas(problem_, stages, both)) keep(both);
  return s;
}

Score Tracker::keep(const Plan& plan) {
  const Score s = evaluator_.evaluate(plan);
  if (!(s.cost() < std::numeric_limits<double>::infinity())) return s;
  auto& top = result_.top;
  const size_t keep = static_cast<size_t>(std::max(1, options_.top));
  if (top.size() >= keep && !(s.cost() < top.back().score.cost())) return s;  // most plans stop here
  std::string key = plan_key(plan);
  if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) return s;
  // Ties keep the plan found first, so the order of the search decides, not the heap.
  auto at = std::upper_bound(top.begin(), top.end(), s.cost(),
                             [](double c, const Candidate& x) { return c < x.score.cost(); });
  keys_.insert(keys_.begin() + (at - top.begin()), std::move(key));
  Candidate c;
  c.plan = plan;
  c.score = s;
  top.insert(at, std::move(c));
  if (top.size() > keep) {
    top.pop_back();
    keys_.pop_back();
  }
  return s;
}

bool Tracker::out_of_time() {
  if (options_.budget_s <= 0) return false;
  if (result_.budget_exhausted) return true;  // spent: no more looks at the clock
  if (now_s() - budget_start_ >= options_.budget_s) result_.budget_exhausted = true;
  return result_.budget_exhausted;
}

void Tracker::progress(long done, long total) {
  if (!options_.progress) return;
  const auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_progress_ < std::chrono::milliseconds(100)) return;
  last_progress_ = now;
  options_.progress(Progress{done, total, best_s()});
}

double Tracker::best_s() const { return result_.top.empty() ? 0 : result_.top.front().score.iteration_time_s; }

SearchResult Tracker::finish() {
  if (options_.refine) refine(problem_, *this);
  result_.evaluations = evaluator_.evaluations() - evaluations_at_start_;
  result_.simulations = evaluator_.simulations() - simulations_at_start_;
  result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return result_;
}

}  // namespace dejavu::strategies::search
