// diff: the DARTS-style relaxation of partition.h in place of Alpa's dynamic programme:
// for each mesh configuration, gradient descent on a softmax per layer over the stages,
// argmax, then the evaluator scores the result. The gradient is written out by hand.
#include "strategies/search/partition.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

SearchResult DifferentiableSearcher::search(const Problem& problem, Evaluator& evaluator,
                                            const SearchOptions& options) const {
  Tracker tracker("diff", problem, evaluator, options);
  const std::vector<Plan> configs = mesh_candidates(problem, tracker);
  DiffOptions diff;
  diff.stop = [&] { return tracker.out_of_time(); };
  diff.steps = options.iterations > 0 ? static_cast<int>(options.iterations) : kDefaultSteps;
  long done = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (tracker.out_of_time()) break;
    Plan plan = configs[i];
    if (plan.total_stages() > 1) {
      diff.seed = options.seed + i;  // each configuration its own, reproducible noise
      const Partition part = differentiable_partition(partition_problem(problem, plan), diff);
      if (part.layers_per_stage.empty()) {
        if (tracker.out_of_time()) break;
        ++done;
        continue;
      }
      plan.stages = part.layers_per_stage;
    }
    tracker.evaluate(plan);
    ++done;
  }
  SearchResult r = tracker.finish();
  r.note = "the " + std::to_string(configs.size()) + " fastest mesh configurations of an even split re-cut, " +
           std::to_string(diff.steps) + " gradient steps each";
  return r;
}

}  // namespace dejavu::strategies::search
