// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage i runs p-i-1 warm-up forwards, then
// alternates one forward and one backward, then drains the remaining backwards. Same
// bubble as GPipe; stage i holds at most p-i microbatches of activations.
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class OneFOneB : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
};

}  // namespace dejavu::strategies
