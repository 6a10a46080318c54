#include "strategies/search/stage_balance.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "strategies/lowering.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/group_signature.h"
#include "strategies/search/min_max_split.h"

namespace dejavu::strategies::search {

namespace {

struct StagePrices {
  std::vector<double> layer_s, fixed_s;  // per GPU stage
};

// One layer's and the end blocks' forward and backward on each stage's slowest replica
// (block_costs: the whole model's blocks priced on that stage's GPUs).
StagePrices stage_prices(const Problem& problem, const Plan& plan, StageBlockCache* cache) {
  StagePrices out{std::vector<double>(plan.pp, 0.0), std::vector<double>(plan.pp, 0.0)};
  const platforms::Cluster& cluster = *problem.cluster;
  for (int s = 0; s < plan.pp; ++s) {
    std::set<std::string> seen;
    for (int r = 0; r < plan.dp; ++r) {
      if (!seen.insert(cluster.gpus[gpu_index(plan, s, r, 0)].spec->name).second) continue;
      std::vector<BlockCost> own;  // without a cache (every plan a mixed cluster's search scores): no key built
      const std::vector<BlockCost>* priced = &own;
      if (cache) {
        auto [hit, fresh] = cache->try_emplace(plan.recompute_of(s) + "|" + group_signature(cluster, plan, s, r));
        if (fresh) hit->second = block_costs(*problem.model, cluster, plan, s, "ring", r);
        priced = &hit->second;
      } else {
        own = block_costs(*problem.model, cluster, plan, s, "ring", r);
      }
      const std::vector<BlockCost>& blocks = *priced;
      const auto first = std::find_if(blocks.begin(), blocks.end(), [](const BlockCost& b) { return b.is_layer; });
      const auto last = std::find_if(blocks.rbegin(), blocks.rend(), [](const BlockCost& b) { return b.is_layer; });
      if (first == blocks.end()) return out;
      out.layer_s[s] = std::max(out.layer_s[s], first->time_s);
      double fixed = 0;
      if (s == 0)
        for (auto b = blocks.begin(); b != first; ++b) fixed += b->time_s;
      if (s == plan.pp - 1)
        for (auto b = blocks.rbegin(); b != last; ++b) fixed += b->time_s;
      out.fixed_s[s] = std::max(out.fixed_s[s], fixed);
    }
  }
  return out;
}

}  // namespace

bool balance_stages(const Problem& problem, const Plan& plan, Plan& out, StageBlockCache* cache) {
  if (plan.pp < 2 || plan.virtual_stages != 1 || !plan.stages.empty()) return false;
  if (schedules().make(plan.schedule)->pipelines() > 1) return false;
  const StagePrices p = stage_prices(problem, plan, cache);
  const std::vector<int> split = min_max_counts(p.layer_s, p.fixed_s, problem.model->layers);
  std::vector<int> even(plan.pp);  // as the lowering splits without `stages`
  for (int st = 0; st < plan.pp; ++st)
    even[st] = problem.model->layers / plan.pp + (st < problem.model->layers % plan.pp ? 1 : 0);
  if (split.empty() || split == even) return false;
  out = plan;
  out.stages = split;
  return true;
}

}  // namespace dejavu::strategies::search
