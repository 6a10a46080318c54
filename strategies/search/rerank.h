// Ranking a search's plans on the engine that shares links. The searchers price plans on
// the analytic engine without link sharing (kSearchEngine: their fast pipeline model
// reproduces it), where concurrent transfers each get every link to themselves. Sharing
// only slows a plan down, so a plan's time alone is a lower bound on its time shared: once
// the k-th best shared time found is below the next plan's time alone, no plan further down
// the pool can enter the top k, and the ranking is exact over the plans the searcher saw.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "strategies/search/searcher.h"

namespace dejavu::strategies::search {

// The default engine, which shares links: what `simulate` answers, so what searches rank on.
inline constexpr const char* kRankEngine = "analytic";
// How many of a searcher's best plans may be re-priced on it (`search --rerank`).
inline constexpr long kDefaultRerank = 64;

// A plan's iteration time on the ranking engine; throws dejavu::Error if it cannot be priced.
using PriceFn = std::function<double(const Plan&)>;

// `simulate` on kRankEngine (the full lowering), one price per plan however often asked:
// searchers of one problem find the same plans.
PriceFn rank_engine_price(const Problem& problem);

struct Ranking {
  std::vector<Candidate> top;  // best first by the ranking engine's time (score.iteration_time_s)
  long priced = 0;             // plans priced on the ranking engine
  long failed = 0;             // of which the engine refused (dropped); `error` holds the first
  std::string error;
  // Every plan of the pool that could enter the top was priced, and the pool held every
  // fitting plan the searcher scored that could (see rerank()).
  bool complete = false;
};

// `pool`: fitting plans, best first by their time alone (score.iteration_time_s);
// `pool_complete`: the searcher kept every fitting plan it scored, not only the best of them.
// Prices at most `max_priced` plans, in pool order, and keeps the `top` best. Each kept
// candidate's alone_s holds its time alone; its score's time and tokens/s are the ranking
// engine's.
Ranking rerank(const std::vector<Candidate>& pool, bool pool_complete, int top, long max_priced, const PriceFn& price);

// Runs the searcher, then ranks its best plans on `price`: it keeps max(top, rerank) + 1 plans,
// so the ranking can tell whether one it did not price could have entered the top, and the
// result's top holds `options.top` plans with their ranked_on and ranking filled in.
// rerank 0: the searcher's own ranking. What `dejavu search`, a sweep's `search:` and
// Python's search() answer.
SearchResult search_ranked(const Searcher& searcher, const Problem& problem, Evaluator& evaluator,
                           SearchOptions options, long rerank, const PriceFn& price);

}  // namespace dejavu::strategies::search
