// A mixed cluster searched in every order of its GPU types (platforms/gpu_order.h): ranks
// fill servers in order, so the order decides which GPU type takes the first pipeline stages
// and how replicas pair up. Each order is searched on the cluster so ordered; the best plans of
// all orders, each carrying its `gpu_order`, make the result. The orders are the permutations
// of the types sorted by name, so the result does not depend on how the platform file listed
// its servers.
// A model with embedding tables (DLRM) is searched the same way once per way of sharding them
// (embedding_sharding_choices), each plan carrying its `embedding_sharding`.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/search/rerank.h"
#include "strategies/search/searcher.h"

namespace dejavu::strategies::search {

// One empty order (the file's) for a cluster of one GPU type; else every permutation of its
// types, in lexicographic order of the sorted names.
std::vector<std::vector<std::string>> gpu_orders(const platforms::Cluster& cluster);

// One searcher's results over the orders (each result's plans already carry their order), or
// over the parts of a cluster (cluster_parts.h), `what` naming them in the note: the best
// `top` plans of all by Candidate::objective(), counts and wall time summed, budget exhausted
// if any one's was, notes and ranking of the one whose best plan won.
// (`what` counts them for the note: "2 GPU orders x 4 embedding shardings".)
SearchResult merge_orders(const std::vector<SearchResult>& per_order, int top, const std::string& what);

// The embedding shardings a model with tables is searched under: each of the four for every
// table group first; then the workload's own and every other combination while there are at
// most kMaxShardingCombinations (four table groups), else each group moved alone from the
// workload's own to each other sharding; {{}} (the workload's own) without tables.
constexpr double kMaxShardingCombinations = 256;
std::vector<std::vector<std::string>> embedding_sharding_choices(const workloads::ModelGraph& model);

// With three table groups or more, the choices past the four uniform ones and the
// workload's own are screened: the best plan the searcher found on those five is priced
// under each (one simulation), and the searcher runs on the kScreenedSearches cheapest.
constexpr size_t kScreenedSearches = 4;

// A problem once per order of its cluster's GPU types (and per embedding sharding choice of
// its model): the cluster so ordered, and a price on
// the ranking engine per order, shared by every searcher run here (they find the same plans).
// With `gpus` (0 < gpus < the cluster's count) each order's cluster is its first `gpus` GPUs
// (platforms/cluster_part.h) and the plans found carry `gpus` (Plan::use_gpus), as
// `search --objective cost` searches parts of a cluster.
class GpuOrderProblems {
 public:
  explicit GpuOrderProblems(const Problem& problem, int gpus = 0);
  GpuOrderProblems(const GpuOrderProblems&) = delete;  // its problems point into it
  GpuOrderProblems& operator=(const GpuOrderProblems&) = delete;
  // What a plan found on one problem costs beyond its time (search --objective cost: its
  // GPU-hours and dollars on that problem's cluster), set before the problems' plans merge.
  using CandidateCost = std::function<void(Candidate&, const platforms::Cluster&)>;
  // The searcher on every order (a fresh evaluator each, the budget shared among them), the
  // plans of each carrying its order (and `cost`'s figures), merged by Candidate::objective().
  // `rerank` as search_ranked takes it.
  SearchResult search(const Searcher& searcher, SearchOptions options, long rerank,
                      const CandidateCost& cost = {}) const;
  size_t size() const { return problems_.size(); }
  // Problems searched only if screening picks them.
  size_t screened() const { return static_cast<size_t>(std::count(screened_.begin(), screened_.end(), true)); }

 private:
  SearchResult search_one(size_t i, const Searcher& searcher, const SearchOptions& options, long rerank,
                          const CandidateCost& cost) const;
  std::vector<size_t> screen(const Candidate& best, long& priced) const;

  std::vector<std::vector<std::string>> orders_, shardings_;  // per problem
  std::vector<bool> screened_;                                // per problem
  std::deque<workloads::ModelGraph> models_;                  // one per sharding choice
  int gpus_ = 0;                                              // Plan::use_gpus of the plans found
  std::deque<platforms::Cluster> clusters_;
  std::deque<Problem> problems_;
  std::vector<PriceFn> prices_;
};

}  // namespace dejavu::strategies::search
