// ZB-H1 (Qi et al. 2023): 1F1B's warm-up and forward/backward alternation, with each
// backward split into B (input gradient, sent upstream at once) and W (weight gradient).
// Stage i holds back its first i weight passes, so the gradient chain to the first stage
// carries B alone, and runs them in the drain, where 1F1B idles: the bubble is
// (p-1)(F+B-W), a third of 1F1B's with F = B = W. Stage 0 holds p microbatches'
// activations, as under 1F1B; later stages hold more than under 1F1B, never more than p.
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class ZeroBubbleH1 : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
  bool splits_backward() const override { return true; }
};

}  // namespace dejavu::strategies
