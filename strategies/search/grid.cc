// grid: every plan of the space (space.h), each scored by the evaluator, which prunes
// the plans whose model states alone overflow a GPU before lowering them.
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

SearchResult GridSearcher::search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const {
  Tracker tracker("grid", problem, evaluator, options);
  const std::vector<Plan> plans = enumerate(problem, default_space(problem));
  const long total = static_cast<long>(plans.size());
  long done = 0;
  for (const Plan& plan : plans) {
    if (tracker.out_of_time()) break;
    tracker.evaluate(plan);
    tracker.progress(++done, total);
  }
  SearchResult r = tracker.finish();
  r.note = std::to_string(done) + " of " + std::to_string(total) + " plans scored";
  return r;
}

}  // namespace dejavu::strategies::search
