// The four searchers behind the registry (searcher.h). Each explains itself where defined.
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

// The mesh configurations the stage partitioners (dp, diff) work on: the space's plans
// with schedule 1f1b whose model states can fit, in enumeration order.
std::vector<Plan> mesh_configurations(const Problem& problem);

}  // namespace dejavu::strategies::search
