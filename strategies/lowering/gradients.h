// After the backward, per GPU stage: the gradients agree across the replicas that hold
// them, then the optimizer steps. Chimera's two copies of a stage all-reduce together;
// buckets all-reduce (or reduce-scatter under ZeRO) as soon as their blocks' gradients are
// complete; ZeRO-3 has reduce-scattered them block by block already; ZeRO-1/2
// reduce-scatter, step the shard and all-gather the weights (with overlap_param_gather,
// bucket by bucket under the first forward instead: the next step's gathers, as Megatron-Core
// runs them); otherwise the sync topology exchanges the (possibly compressed) gradients.
// Experts' gradients go over the replicas holding the same experts.
#pragma once

#include <utility>
#include <vector>

#include "platforms/perf_model.h"
#include "strategies/lowering/layout.h"
#include "strategies/lowering/work_items.h"
#include "strategies/lowering/zero3.h"

namespace dejavu::strategies::lowering {

class GradientPass {
 public:
  GradientPass(sim::TaskGraph& g, const JobLayout& layout, const ItemTasks& items,
               const std::vector<Zero3Stage>& zero3);
  void emit();

 private:
  void emit_stage(int s);
  std::vector<sim::TaskId> dp_collective(int s, sim::CollectiveOp op, const std::string& label, double bytes,
                                         double expert_bytes, sim::StreamId stream = sim::StreamId());
  struct Bucket {
    std::vector<std::pair<int, size_t>> blocks;  // (virtual stage, block), in backward order
    double bytes = 0, expert_bytes = 0;          // its gradients' (JobLayout::gradient_bytes each)
  };
  std::vector<Bucket> bucket_blocks(int s) const;
  // The buckets' reductions; `shares` (if given) gets each one's part of a GPU's stepped
  // shard, in parameters.
  std::vector<sim::TaskId> buckets(int s, std::vector<double>* shares = nullptr);
  sim::TaskId offloaded_step(int s, int c, double stepped, const std::vector<sim::TaskId>& synced,
                             const std::vector<double>& shares);
  void param_gathers(int s);
  std::vector<sim::TaskId> sync_topology(int s, double& compressed);
  void pair_syncs();
  platforms::PerfModel perf_model(int s, int c) const;
  double time_s(int s, int c, const sim::Kernel& k) const;
  void host_overhead(int s, int c, sim::TaskId step);

  sim::TaskGraph& g_;
  const JobLayout& L_;
  const ItemTasks& items_;
  const std::vector<Zero3Stage>& zero3_;
  std::vector<sim::TaskId> pair_sync_;  // chimera: per GPU stage
  sim::LabelId opt_label_;
};

}  // namespace dejavu::strategies::lowering
