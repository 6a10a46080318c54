// Interleaved 1F1B (Narayanan et al. 2021): each GPU holds v model chunks (virtual stages
// i, i+p, ...). Microbatches go through the chunks in groups of p; stage i runs
// 2(p-i-1) + (v-1)p warm-up forwards, then alternates, then drains. The bubble shrinks
// by v at the price of v times the pipeline sends. Needs m to be a multiple of p.
#pragma once

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class InterleavedOneFOneB : public PipelineSchedule {
 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
};

}  // namespace dejavu::strategies
