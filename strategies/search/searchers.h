// The searchers behind the registry (searcher.h). Each explains itself where defined.
#pragma once

#include "strategies/search/searcher.h"

namespace dejavu::strategies::search {

class GridSearcher : public Searcher {
 public:
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

class AlpaSearcher : public Searcher {
 public:
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

class McmcSearcher : public Searcher {
 public:
  // Relative temperature: a proposal worse by this fraction is accepted with probability 1/e.
  static constexpr double kTemperature = 0.02;
  static constexpr long kDefaultIterations = 4000;
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

class DifferentiableSearcher : public Searcher {
 public:
  static constexpr int kDefaultSteps = 300;
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

class BayesSearcher : public Searcher {
 public:
  static constexpr long kDefaultIterations = 160;
  // Plans drawn at random before the model chooses: SMAC's default initial design, 10 per
  // feature (d = 14) but at most a quarter of the budget (40 of the default 160 scores).
  static constexpr long kInitialPerFeature = 10;
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

class ReinforceSearcher : public Searcher {
 public:
  static constexpr long kDefaultIterations = 800;
  static constexpr int kBatch = 16;  // plans sampled per policy update
  SearchResult search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const override;
};

// The mesh configurations the stage partitioners (dp, diff) work on: every plan of the
// space (degrees, microbatch, schedule, recompute, ZeRO, SP: the intra-operator choices)
// scored with an even split through `tracker`, and the `keep` fastest of those simulated,
// fastest first. Prescreening keeps the partitioners' work to configurations that can win.
std::vector<Plan> mesh_candidates(const Problem& problem, Tracker& tracker, size_t keep = 48);

}  // namespace dejavu::strategies::search
