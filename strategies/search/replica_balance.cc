#include "strategies/search/replica_balance.h"

#include "strategies/search/min_max_split.h"

#include <algorithm>
#include <map>

#include "platforms/gpu_order.h"
#include "strategies/lowering.h"
#include "strategies/lowering/prices.h"
#include "strategies/schedules/schedule.h"
#include "strategies/stage_work.h"

namespace dejavu::strategies::search {

std::vector<double> replica_microbatch_s(const Problem& problem, const Plan& plan,
                                         const std::string& collective_algorithm) {
  const auto schedule = schedules().make(plan.schedule);
  const std::vector<StageWork> work = build_stage_work(*problem.model, plan, false);
  const platforms::Cluster& cluster = *problem.cluster;
  std::map<std::string, double> by_types;  // replicas on the same GPU types price alike
  std::vector<double> out;
  for (int r = 0; r < plan.dp; ++r) {
    std::string types;
    for (int s = 0; s < plan.pp; ++s) types += cluster.gpus[gpu_index(plan, s, r, 0)].spec->name + "|";
    auto [it, fresh] = by_types.try_emplace(types, 0.0);
    if (fresh) {
      std::vector<double> stage_s(plan.pp, 0.0);
      for (size_t vs = 0; vs < work.size(); ++vs) {
        const int s = schedule->gpu_of(static_cast<int>(vs), plan.pp);
        lowering::GroupPricer pricer(*problem.model, cluster, plan, s, r, collective_algorithm);
        for (const Block& blk : work[vs].blocks) {
          const BlockItems b = pricer.block(blk);
          stage_s[s] += b.fwd.duration_s + b.bwd.duration_s;
        }
      }
      it->second = *std::max_element(stage_s.begin(), stage_s.end());
    }
    out.push_back(it->second);
  }
  return out;
}

bool balance_replicas(const Problem& problem, const Plan& plan, Plan& out) {
  if (plan.dp < 2 || !plan.replica_microbatches.empty() || plan.data_parallel.sync != "all-reduce") return false;
  const auto schedule = schedules().make(plan.schedule);
  if (!schedule->flushes() || schedule->steps_every_microbatch() || schedule->pipelines() > 1) return false;
  const std::vector<double> t = replica_microbatch_s(problem, plan);
  if (*std::min_element(t.begin(), t.end()) == *std::max_element(t.begin(), t.end())) return false;
  const int unit = plan.schedule == "interleaved-1f1b" ? plan.pp : 1;
  const std::vector<int> split =
      min_max_counts(t, {}, static_cast<int>(plan.global_batch_size / plan.micro_batch_size), unit);
  if (split.empty() || std::all_of(split.begin(), split.end(), [&](int m) { return m == split.front(); })) return false;
  out = plan;
  out.replica_microbatches = split;
  return true;
}

}  // namespace dejavu::strategies::search
