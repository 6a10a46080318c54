// Pipeline schedules are orders, not timings: for each stage, the order in which it runs
// its work items. Bubbles, overlap and memory emerge from the engine.
#pragma once

#include <memory>
#include <vector>

#include "sim/registry.h"

namespace dejavu::strategies {

struct WorkItem {
  int microbatch = 0;
  bool backward = false;
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  // Every microbatch's forward and backward exactly once, forward before backward.
  virtual std::vector<WorkItem> order(int stage, int stages, int microbatches) const = 0;
};

Registry<PipelineSchedule>& schedules();

}  // namespace dejavu::strategies
