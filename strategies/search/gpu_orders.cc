#include "strategies/search/gpu_orders.h"

#include <algorithm>

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

std::vector<std::vector<std::string>> embedding_sharding_choices(const workloads::ModelGraph& model) {
  const size_t groups = model.embedding_sharding.size();
  if (groups == 0) return {{}};
  std::vector<std::vector<std::string>> out;
  for (const std::string& m : workloads::embedding_shardings()) out.push_back({m});
  if (groups == 2)
    for (const std::string& a : workloads::embedding_shardings())
      for (const std::string& b : workloads::embedding_shardings())
        if (a != b) out.push_back({a, b});
  if (groups > 2)  // the workload's own, and each group moved alone from it
    for (size_t g = 0; g < groups; ++g)
      for (const std::string& m : workloads::embedding_shardings()) {
        std::vector<std::string> modes = model.embedding_sharding;
        modes[g] = m;
        if (std::find(out.begin(), out.end(), modes) == out.end() &&
            !(std::all_of(modes.begin(), modes.end(), [&](const std::string& x) { return x == modes.front(); })))
          out.push_back(modes);
      }
  return out;
}

GpuOrderProblems::GpuOrderProblems(const Problem& problem, int gpus)
    : gpus_(gpus < problem.cluster->gpu_count() ? gpus : 0) {
  const std::vector<std::vector<std::string>> orders = gpu_orders(*problem.cluster);
  for (const std::vector<std::string>& order : orders)
    clusters_.push_back(platforms::first_gpus(platforms::ordered_by_gpu(*problem.cluster, order), gpus_));
  for (const std::vector<std::string>& modes : embedding_sharding_choices(*problem.model)) {
    models_.push_back(modes.empty() ? *problem.model : workloads::with_embedding_sharding(*problem.model, modes));
    for (size_t o = 0; o < orders.size(); ++o) {
      orders_.push_back(orders[o]);
      shardings_.push_back(modes);
      problems_.push_back(problem);
      problems_.back().cluster = &clusters_[o];
      problems_.back().model = &models_.back();
      prices_.push_back(rank_engine_price(problems_.back()));
    }
  }
}

SearchResult GpuOrderProblems::search(const Searcher& searcher, SearchOptions options, long rerank) const {
  if (options.budget_s > 0) options.budget_s /= static_cast<double>(problems_.size());
  std::vector<SearchResult> per_order;
  for (size_t i = 0; i < problems_.size(); ++i) {
    SimulationEvaluator evaluator(problems_[i]);
    per_order.push_back(search_ranked(searcher, problems_[i], evaluator, options, rerank, prices_[i]));
    for (Candidate& c : per_order.back().top) {
      c.plan.gpu_order = orders_[i];
      c.plan.use_gpus = gpus_;
      c.plan.embedding_sharding = shardings_[i];
    }
  }
  std::string what = clusters_.size() > 1 ? std::to_string(clusters_.size()) + " GPU orders" : "";
  if (models_.size() > 1) what += (what.empty() ? "" : " x ") + std::to_string(models_.size()) + " embedding shardings";
  return merge_orders(per_order, options.top, what);
}

}  // namespace dejavu::strategies::search
