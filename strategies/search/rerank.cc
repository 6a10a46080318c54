#include "strategies/search/rerank.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include "sim/error.h"
#include "strategies/simulate.h"

namespace dejavu::strategies::search {

Ranking rerank(const std::vector<Candidate>& pool, bool pool_complete, int top, long max_priced, const PriceFn& price) {
  Ranking r;
  const size_t keep = static_cast<size_t>(std::max(1, top));
  size_t next = 0;
  for (; next < pool.size(); ++next) {
    const Candidate& c = pool[next];
    if (r.top.size() >= keep && !(c.score.iteration_time_s < r.top.back().score.iteration_time_s)) break;
    if (r.priced >= max_priced) break;
    ++r.priced;
    double shared = 0;
    try {
      shared = price(c.plan);
    } catch (const Error& e) {
      if (r.failed++ == 0) r.error = e.what();
      continue;
    }
    Candidate ranked = c;
    ranked.alone_s = c.score.iteration_time_s;
    ranked.score.iteration_time_s = shared;
    if (shared > 0) ranked.score.tokens_per_s = c.score.tokens_per_s * ranked.alone_s / shared;
    // Ties keep pool order: the plan faster alone first.
    auto at = std::upper_bound(r.top.begin(), r.top.end(), shared,
                               [](double t, const Candidate& x) { return t < x.score.iteration_time_s; });
    r.top.insert(at, std::move(ranked));
    if (r.top.size() > keep) r.top.pop_back();
  }
  // Stopped by the bound: nothing below could enter. Ran out of pool: exact if the pool held
  // every plan the searcher scored. Stopped by the cap with plans left: not exact.
  const bool bound_reached = next < pool.size() && r.top.size() >= keep &&
                             !(pool[next].score.iteration_time_s < r.top.back().score.iteration_time_s);
  r.complete = bound_reached || (next == pool.size() && pool_complete);
  return r;
}

PriceFn rank_engine_price(const Problem& problem) {
  auto cache = std::make_shared<std::unordered_map<std::string, double>>();
  return [problem, cache](const Plan& plan) {
    const std::string key = plan_key(plan);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
    const double t = simulate(*problem.model, *problem.cluster, plan, kRankEngine).report.iteration_time_s;
    return (*cache)[key] = t;
  };
}

SearchResult search_ranked(const Searcher& searcher, const Problem& problem, Evaluator& evaluator,
                           SearchOptions options, long rerank, const PriceFn& price) {
  const int top = std::max(1, options.top);
  const long cap = std::max<long>(top, rerank);
  const size_t pool = rerank > 0 ? static_cast<size_t>(cap + 1) : static_cast<size_t>(top);
  options.top = static_cast<int>(pool);
  SearchResult r = searcher.search(problem, evaluator, options);
  if (rerank <= 0) return r;
  Ranking ranking = search::rerank(r.top, r.top.size() < pool, top, cap, price);
  char buf[320];
  std::snprintf(buf, sizeof buf, "ranked with links shared (%s engine): %ld plans re-priced, %s", kRankEngine,
                ranking.priced,
                ranking.complete ? "every plan the search scored that could rank among these"
                                 : "the re-pricing cap (--rerank) reached with plans left that might rank among these");
  r.ranking = buf;
  if (ranking.failed > 0)
    r.ranking += "; " + std::to_string(ranking.failed) + " the engine refused (first: " + ranking.error + ")";
  r.ranked_on = kRankEngine;
  r.top = std::move(ranking.top);
  return r;
}

}  // namespace dejavu::strategies::search
