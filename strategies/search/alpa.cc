// dp: Alpa's inter-operator pass. For each mesh configuration (degrees, microbatch,
// schedule, recomputation, ZeRO, SP: the intra-operator choices, prescreened by the cost
// model with an even split), the dynamic programme of partition.h cuts the layers into
// (virtual) stages, each priced on its own stage's GPUs, so on a mixed cluster heavy stages
// land on the fast GPUs. Every configuration's partition is then scored by the evaluator,
// which picks among them. Stages here share one submesh shape
// (tp x dp GPUs each), as Megatron-style plans do; Alpa also varies submesh sizes.
#include "strategies/search/partition.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

std::vector<Plan> mesh_candidates(const Problem& problem, Tracker& tracker, size_t keep) {
  const std::vector<Plan> plans = enumerate(problem, default_space(problem));
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (tracker.out_of_time()) break;
    const Score s = tracker.evaluate(plans[i]);
    if (s.simulated) scored.emplace_back(s.iteration_time_s, i);
    tracker.progress(static_cast<long>(i + 1), static_cast<long>(plans.size()));
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<Plan> out;
  for (size_t k = 0; k < scored.size() && out.size() < keep; ++k) out.push_back(plans[scored[k].second]);
  return out;
}

SearchResult AlpaSearcher::search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const {
  Tracker tracker("dp", problem, evaluator, options);
  const std::vector<Plan> configs = mesh_candidates(problem, tracker);
  long done = 0, partitioned = 0;
  for (Plan plan : configs) {
    if (tracker.out_of_time()) break;
    if (plan.total_stages() > 1) {
      const Partition part = alpa_partition(partition_problem(problem, plan), [&] { return tracker.out_of_time(); });
      if (part.layers_per_stage.empty()) {
        if (tracker.out_of_time()) break;
        ++done;
        continue;  // no cut fits the memory
      }
      plan.stages = part.layers_per_stage;
      ++partitioned;
    }
    tracker.evaluate(plan);
    ++done;
  }
  SearchResult r = tracker.finish();
  r.note = "the " + std::to_string(configs.size()) + " fastest mesh configurations of an even split, " +
           std::to_string(partitioned) + " re-cut by DP";
  return r;
}

}  // namespace dejavu::strategies::search
