// TeraPipe (Li et al. 2021): each microbatch's sequences cut into token slices that flow
// through the pipeline one after another, a stage starting slice i + 1 while the next stage
// runs slice i. Causal attention makes a slice need the keys and values of every earlier
// slice (forward, in slice order on each stage) and their gradients flow back from the later
// slices (backward, in reverse slice order). Work item j is slice j % k of microbatch j / k
// (k slices, plan.token_slices): all forwards in order, then all backwards in reverse, so a
// stage's step is sum(F) + sum(B) + (p - 1)(max F + max B) plus the sends (the proportionate
// flow shop TeraPipe's dynamic program minimises).
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class TeraPipe : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int items, int chunks) const override;
  bool slices_tokens() const override { return true; }
};

}  // namespace dejavu::strategies
