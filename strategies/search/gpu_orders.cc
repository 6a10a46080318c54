#include "strategies/search/gpu_orders.h"

#include <algorithm>
#include <cmath>

#include "platforms/cluster_part.h"
#include "platforms/gpu_order.h"
#include "strategies/search/evaluator.h"
#include "workloads/dlrm.h"

namespace dejavu::strategies::search {

std::vector<std::vector<std::string>> gpu_orders(const platforms::Cluster& cluster) {
  std::vector<std::string> types = platforms::gpu_types(cluster);
  if (types.size() < 2) return {{}};
  std::sort(types.begin(), types.end());
  std::vector<std::vector<std::string>> out;
  do out.push_back(types);
  while (std::next_permutation(types.begin(), types.end()));
  return out;
}

SearchResult merge_orders(const std::vector<SearchResult>& per_order, int top, const std::string& what) {
  if (per_order.size() == 1) return per_order.front();
  SearchResult out;
  const SearchResult* winner = &per_order.front();
  for (const SearchResult& r : per_order) {
    out.algorithm = r.algorithm;
    out.evaluations += r.evaluations;
    out.simulations += r.simulations;
    out.wall_s += r.wall_s;
    out.budget_exhausted = out.budget_exhausted || r.budget_exhausted;
    out.ranked_on = r.ranked_on;
    out.top.insert(out.top.end(), r.top.begin(), r.top.end());
    if (r.best() && (!winner->best() || r.best()->objective() < winner->best()->objective())) winner = &r;
  }
  // Stable: between equal times the earlier order (by name) stays first.
  std::stable_sort(out.top.begin(), out.top.end(),
                   [](const Candidate& a, const Candidate& b) { return a.objective() < b.objective(); });
  if (static_cast<int>(out.top.size()) > top) out.top.resize(static_cast<size_t>(top));
  out.note = winner->note + (winner->note.empty() ? "" : "; ") + "best of " + what;
  out.ranking = winner->ranking;
  return out;
}

namespace {

bool uniform(const std::vector<std::string>& modes) {
  return std::all_of(modes.begin(), modes.end(), [&](const std::string& x) { return x == modes.front(); });
}

// Every way of sharding `groups` table groups, in odometer order of the four names.
std::vector<std::vector<std::string>> every_combination(size_t groups) {
  const std::vector<std::string>& names = workloads::embedding_shardings();
  std::vector<std::vector<std::string>> out;
  std::vector<size_t> digit(groups, 0);
  for (;;) {
    std::vector<std::string> modes;
    for (size_t d : digit) modes.push_back(names[d]);
    out.push_back(modes);
    size_t g = 0;
    while (g < groups && ++digit[g] == names.size()) digit[g++] = 0;
    if (g == groups) return out;
  }
}

}  // namespace

std::vector<std::vector<std::string>> embedding_sharding_choices(const workloads::ModelGraph& model) {
  const size_t groups = model.embedding_sharding.size();
  if (groups == 0) return {{}};
  std::vector<std::vector<std::string>> out;
  for (const std::string& m : workloads::embedding_shardings()) out.push_back({m});
  if (groups == 1) return out;
  // Then the workload's own and every other combination (up to kMaxShardingCombinations),
  // or each group moved alone from the workload's own.
  std::vector<std::vector<std::string>> rest;
  if (std::pow(4.0, static_cast<double>(groups)) <= kMaxShardingCombinations) {
    rest = every_combination(groups);
  } else {
    rest.push_back(model.embedding_sharding);
    for (size_t g = 0; g < groups; ++g)
      for (const std::string& m : workloads::embedding_shardings()) {
        rest.push_back(model.embedding_sharding);
        rest.back()[g] = m;
      }
  }
  // The workload's own first after the four uniform ones; no duplicates, no uniform twice.
  std::stable_partition(rest.begin(), rest.end(), [&](const auto& m) { return m == model.embedding_sharding; });
  for (const std::vector<std::string>& modes : rest)
    if (!uniform(modes) && std::find(out.begin(), out.end(), modes) == out.end()) out.push_back(modes);
  return out;
}

GpuOrderProblems::GpuOrderProblems(const Problem& problem, int gpus)
    : gpus_(gpus < problem.cluster->gpu_count() ? gpus : 0) {
  const std::vector<std::vector<std::string>> orders = gpu_orders(*problem.cluster);
  for (const std::vector<std::string>& order : orders)
    clusters_.push_back(platforms::first_gpus(platforms::ordered_by_gpu(*problem.cluster, order), gpus_));
  const auto choices = embedding_sharding_choices(*problem.model);
  // With three table groups or more, past the four uniform shardings and the workload's own
  // (when it is not one of them) the choices are screened (search() below).
  const std::vector<std::string>& own = problem.model->embedding_sharding;
  const size_t searched = own.size() >= 3 ? (uniform(own) ? 4 : 5) : choices.size();
  for (size_t c = 0; c < choices.size(); ++c) {
    const std::vector<std::string>& modes = choices[c];
    models_.push_back(modes.empty() ? *problem.model : workloads::with_embedding_sharding(*problem.model, modes));
    for (size_t o = 0; o < orders.size(); ++o) {
      orders_.push_back(orders[o]);
      shardings_.push_back(modes);
      screened_.push_back(c >= searched);
      problems_.push_back(problem);
      problems_.back().cluster = &clusters_[o];
      problems_.back().model = &models_.back();
      prices_.push_back(rank_engine_price(problems_.back()));
    }
  }
}

SearchResult GpuOrderProblems::search_one(size_t i, const Searcher& searcher, const SearchOptions& options, long rerank,
                                          const CandidateCost& cost) const {
  SimulationEvaluator evaluator(problems_[i]);
  SearchResult r = search_ranked(searcher, problems_[i], evaluator, options, rerank, prices_[i]);
  for (Candidate& c : r.top) {
    c.plan.gpu_order = orders_[i];
    c.plan.use_gpus = gpus_;
    c.plan.embedding_sharding = shardings_[i];
    if (cost) cost(c, *problems_[i].cluster);
  }
  if (cost)
    std::stable_sort(r.top.begin(), r.top.end(),
                     [](const Candidate& a, const Candidate& b) { return a.objective() < b.objective(); });
  return r;
}

// The screened problems whose price of `best` (its plan as found, under their sharding) is
// lowest, up to kScreenedSearches of them; `priced` counts the simulations.
std::vector<size_t> GpuOrderProblems::screen(const Candidate& best, long& priced) const {
  std::vector<std::pair<double, size_t>> by_price;
  for (size_t i = 0; i < problems_.size(); ++i) {
    if (!screened_[i] || orders_[i] != best.plan.gpu_order) continue;
    Plan plan = best.plan;
    plan.embedding_sharding.clear();  // the problem's model and cluster carry these
    plan.gpu_order.clear();
    plan.use_gpus = 0;
    SimulationEvaluator evaluator(problems_[i]);
    by_price.emplace_back(evaluator.evaluate(plan).cost(), i);
    ++priced;
  }
  std::stable_sort(by_price.begin(), by_price.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> out;
  for (const auto& [price, i] : by_price)
    if (std::isfinite(price) && out.size() < kScreenedSearches) out.push_back(i);
  return out;
}

SearchResult GpuOrderProblems::search(const Searcher& searcher, SearchOptions options, long rerank,
                                      const CandidateCost& cost) const {
  const size_t searched = problems_.size() - screened();
  const size_t more = problems_.size() > searched ? kScreenedSearches : 0;
  if (options.budget_s > 0) options.budget_s /= static_cast<double>(searched + more);
  std::vector<SearchResult> per_problem;
  for (size_t i = 0; i < problems_.size(); ++i)
    if (!screened_[i]) per_problem.push_back(search_one(i, searcher, options, rerank, cost));
  auto what = [&](size_t shardings) {
    std::string w = clusters_.size() > 1 ? std::to_string(clusters_.size()) + " GPU orders" : "";
    if (shardings > 1) w += (w.empty() ? "" : " x ") + std::to_string(shardings) + " embedding shardings";
    return w;
  };
  if (more == 0) return merge_orders(per_problem, options.top, what(models_.size()));
  // Every other sharding priced with the best plan so far (under its GPU order); the
  // cheapest searched.
  const size_t first_shardings = searched / clusters_.size();
  const SearchResult first = merge_orders(per_problem, options.top, what(first_shardings));
  long priced = 0;
  const std::vector<size_t> next = first.best() ? screen(*first.best(), priced) : std::vector<size_t>{};
  for (size_t i : next) per_problem.push_back(search_one(i, searcher, options, rerank, cost));
  SearchResult out = merge_orders(per_problem, options.top, what(first_shardings + next.size()));
  out.evaluations += priced, out.simulations += priced;
  out.note += " (of " + std::to_string(models_.size()) + ": the other " + std::to_string(priced) +
              " priced with the best plan of the first " + std::to_string(first_shardings) + ", the " +
              std::to_string(next.size()) + " cheapest searched)";
  return out;
}

}  // namespace dejavu::strategies::search
