// GPipe (Huang et al. 2019): all forwards, then all backwards. Every stage holds the
// activations of all m microbatches at the turn.
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class GPipe : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
};

}  // namespace dejavu::strategies
