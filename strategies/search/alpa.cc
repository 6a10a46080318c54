// dp: Alpa's inter-operator pass. For each mesh configuration (degrees, microbatch,
// recomputation, ZeRO, SP: the intra-operator choices), the dynamic programme of
// partition.h cuts the layers into stages, each priced on its own stage's GPUs, so on a
// mixed cluster heavy stages land on the fast GPUs. Every configuration's partition is then
// scored by the evaluator, which picks among them. Stages here share one submesh shape
// (tp x dp GPUs each), as Megatron-style plans do; Alpa also varies submesh sizes.
#include "strategies/search/partition.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

std::vector<Plan> mesh_configurations(const Problem& problem) {
  Space space = default_space(problem);
  space.schedules = {"1f1b"};
  double capacity = 0;
  for (const auto& slot : problem.cluster->gpus)
    capacity = capacity == 0 ? slot.spec->memory_bytes : std::min(capacity, slot.spec->memory_bytes);
  std::vector<Plan> out;
  for (Plan& p : enumerate(problem, space))
    if (model_state_lower_bound_bytes(*problem.model, p) <= capacity) out.push_back(std::move(p));
  return out;
}

SearchResult AlpaSearcher::search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const {
  Tracker tracker("dp", evaluator, options);
  const std::vector<Plan> configs = mesh_configurations(problem);
  long done = 0, partitioned = 0;
  for (Plan plan : configs) {
    if (tracker.out_of_time()) break;
    if (plan.pp > 1) {
      const Partition part = alpa_partition(partition_problem(problem, plan), [&] { return tracker.out_of_time(); });
      if (part.layers_per_stage.empty()) {
        if (tracker.out_of_time()) break;
        tracker.progress(++done, static_cast<long>(configs.size()));
        continue;  // no cut fits the memory
      }
      plan.stages = part.layers_per_stage;
      ++partitioned;
    }
    tracker.evaluate(plan);
    tracker.progress(++done, static_cast<long>(configs.size()));
  }
  SearchResult r = tracker.finish();
  r.note = std::to_string(done) + " of " + std::to_string(configs.size()) + " mesh configurations, " +
           std::to_string(partitioned) + " partitioned by DP";
  return r;
}

}  // namespace dejavu::strategies::search
