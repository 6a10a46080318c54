// The work items of the schedule as tasks: per replica class, what its items cost (the
// pipeline sends' groups, every segment's time, the fused items), then per GPU stage each
// item in the schedule's order: its blocks (each wrapped in ZeRO-3's gather and
// reduction), its segments or one fused task per block or item, and its send to the
// neighbouring virtual stage. Last, the dependencies across stages.
#pragma once

#include <array>
#include <vector>

#include "strategies/lowering/labels.h"
#include "strategies/lowering/prices.h"
#include "strategies/lowering/layout.h"
#include "strategies/lowering/zero3.h"

namespace dejavu::strategies::lowering {

enum ItemKind { kForward, kBackward, kBackwardInput, kBackwardWeight, kItemKinds };
ItemKind kind_of(const WorkItem& item);

// Every segment's time on one class's tensor-parallel group, block by block.
struct SegmentTimes {
  std::vector<std::vector<SegmentTime>> fwd, bwd, recompute, bwd_input, bwd_weight;
};

// Where each item's tasks begin and end, per [class][virtual stage][microbatch], and
// what the gradient pass needs: each GPU stage's last backward tasks, and per block the
// task after which its gradients are complete.
struct ItemTasks {
  using Grid = std::vector<std::vector<std::vector<sim::TaskId>>>;
  Grid f_first, f_last, b_first, b_last, f_send, b_send, weight_first;
  std::vector<std::vector<sim::TaskId>> last_backwards;            // [GPU stage]
  std::vector<std::vector<std::vector<sim::TaskId>>> grads_ready;  // [class][virtual stage][block]
  // In the first microbatch's forward (unfused lowering), each block's first task, and the
  // task it follows (-1: none): when the forward reaches the block.
  std::vector<std::vector<std::vector<sim::TaskId>>> first_forward, forward_entry;  // [class][virtual stage][block]
  explicit ItemTasks(const JobLayout& layout);
};

class LayerOffload;

class ClassItems {
 public:
  ClassItems(sim::TaskGraph& g, const JobLayout& layout, SegmentLabels& labels, std::vector<Zero3Stage>& zero3,
             ItemTasks& tasks, int cls);
  void emit_stage(int s);
  void link_stages();  // a forward needs the previous stage's activations, a backward the next's gradient

 private:
  void emit_item(const WorkItem& item, int s, Zero3Device& zero3, LayerOffload& layers);
  void emit_blocks(const WorkItem& item, int vs, int s, Zero3Device& zero3, LayerOffload& layers, Chain& chain);
  void emit_fused(const WorkItem& item, int vs, int s, Zero3Device& zero3, Chain& chain);
  void place(const WorkItem& item, int vs, int s, const Chain& chain);
  void emit_deferred_wgrads(int s);
  void price(int q, int vs);  // slice q's items on virtual stage vs

  sim::TaskGraph& g_;
  const JobLayout& L_;
  SegmentLabels& labels_;
  std::vector<Zero3Stage>& zero3_;
  ItemTasks& tasks_;
  int c_;
  std::vector<sim::CommSetId> fwd_set_, bwd_set_;  // per virtual stage
  // Per token slice (one without TeraPipe), per virtual stage:
  std::vector<std::vector<SegmentTimes>> times_;
  std::vector<std::vector<std::vector<BlockItems>>> blocks_;          // fused: per block
  std::vector<std::vector<std::array<ItemCost, kItemKinds>>> items_;  // fused: whole items
  int last_backward_ = -1, last_weight_ = -1;                         // the stage's last (weight) backward item
  struct Deferred {
    int vs, block, microbatch;
  };
  std::vector<Deferred> deferred_;  // output-layer weight gradients left for the flush
  std::array<sim::LabelId, kItemKinds> fused_label_{};
  sim::LabelId send_fwd_label_, send_bwd_label_;
};

}  // namespace dejavu::strategies::lowering
