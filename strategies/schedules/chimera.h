// Chimera (Li and Hoefler, SC 2021): two pipelines in opposite directions over the same p
// GPUs. The down pipeline maps stage k to GPU k, the up pipeline to GPU p - 1 - k; each
// carries half of the m microbatches with 1F1B, and each GPU holds two stages' weights (one
// of each pipeline), whose gradients the pair of GPUs holding the same stage all-reduce.
// With m = p and equal stages the bubble is (p - 2) / (2m + p - 2) of the iteration,
// against (p - 1) / (m + p - 1) for 1F1B. Needs an even p and an even m.
#pragma once

#include <map>
#include <utility>

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

class Chimera : public PipelineSchedule {
  // The merge yields every GPU's order at once; lower() asks GPU by GPU.
  mutable std::map<std::pair<int, int>, std::vector<std::vector<WorkItem>>> merged_;

 public:
  std::vector<WorkItem> order(int stage, int stages, int microbatches, int chunks) const override;
  int pipelines() const override { return 2; }
  int virtual_stage(int chunk, int stage, int stages) const override {
    return chunk == 0 ? stage : stages + (stages - 1 - stage);
  }
  int gpu_of(int virtual_stage, int stages) const override {
    return virtual_stage < stages ? virtual_stage : stages - 1 - (virtual_stage - stages);
  }
};

}  // namespace dejavu::strategies
