// Pipeline schedules are orders, not timings: for each stage, the order in which it runs
// its work items. Bubbles, overlap and memory emerge from the engine.
#pragma once

#include <memory>
#include <vector>

#include "sim/registry.h"

namespace dejavu::strategies {

// A backward may run whole, or split as zero-bubble schedules do into the input-gradient
// part (B, which the previous stage waits for) and the weight-gradient part (W, which
// nothing downstream waits for, so it can fill bubbles).
enum class BackwardPart { Whole, Input, Weight };

struct WorkItem {
  int microbatch = 0;
  bool backward = false;
  int chunk = 0;  // which of the GPU's model chunks (interleaved schedules)
  BackwardPart part = BackwardPart::Whole;
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  // Every (microbatch, chunk)'s forward and backward exactly once, forward first. GPU
  // `stage` of `stages` holds `chunks` model chunks: virtual stages stage, stage+stages, ...
  virtual std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const = 0;
  virtual bool splits_backward() const { return false; }
};

Registry<PipelineSchedule>& schedules();

}  // namespace dejavu::strategies
