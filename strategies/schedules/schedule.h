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
  // Token-level pipelining (TeraPipe): the items are the token slices of each microbatch
  // (plan.token_slices), microbatch-major; the lowering prices each slice by its tokens.
  virtual bool slices_tokens() const { return false; }

  // Bidirectional schedules run `pipelines()` copies of the model's p stages at once (Chimera:
  // a down pipeline and an up one). Chunk c of GPU `stage` is then virtual stage
  // virtual_stage(c, stage, p), and virtual stage vs runs on GPU gpu_of(vs, p); pipeline c's
  // virtual stages are c·p .. c·p + p - 1, its microbatches those order() gives chunk c.
  virtual int pipelines() const { return 1; }
  virtual int virtual_stage(int chunk, int stage, int stages) const { return chunk * stages + stage; }
  virtual int gpu_of(int virtual_stage, int stages) const { return virtual_stage % stages; }

  // Asynchronous pipelines (PipeDream, PipeDream-2BW) never flush: one iteration's drain
  // overlaps the next one's fill, and gradients are computed on weights `staleness` optimizer
  // steps old, which the stage keeps as extra weight versions. Optimizer steps per iteration:
  // once (2BW), or once per microbatch (PipeDream).
  virtual bool flushes() const { return true; }
  virtual int weight_versions(int /*stage*/, int /*stages*/) const { return 1; }
  virtual double staleness(int /*stage*/, int /*stages*/) const { return 0; }
  virtual bool steps_every_microbatch() const { return false; }
};

Registry<PipelineSchedule>& schedules();

}  // namespace dejavu::strategies
