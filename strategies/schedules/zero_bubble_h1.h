// A zero-bubble schedule in the manner of ZB-H1 (Qi et al. 2023): 1F1B's warm-up and
// forward/backward alternation, with each backward split into B (input gradient, sent
// upstream at once) and W (weight gradient). In the steady state W follows its B; in the
// drain a stage runs its pending W while it waits for the next B's gradient. The gradient
// chain to the first stage carries B alone, so the drain shortens, and no stage holds more
// activations than under 1F1B (p - i on stage i).
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class ZeroBubbleH1 : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
  bool splits_backward() const override { return true; }
};

}  // namespace dejavu::strategies
