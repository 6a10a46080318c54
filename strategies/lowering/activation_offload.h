// Activation offload (plan `offload: {activations: cpu}`; Megatron-Core's cpu_offloading,
// DeepSpeed's cpu_checkpointing): what a forward work item keeps for its backward is copied
// to its server's CPU memory as soon as the forward ends and leaves the GPU when the copy
// is done; it is copied back ahead of the item's backward, once the stage has finished the
// item two before that backward (so under the one just before it), and the backward waits
// for it.
// The copies are transfers on the GPU's PCIe link (shared with its NIC) on the offload
// stream. Per GPU, a microbatch's stored activations (StageWork) move twice a step.
#pragma once

#include <vector>

#include "strategies/lowering/layout.h"

namespace dejavu::strategies::lowering {

class ActivationOffload {
 public:
  // For replica class c on GPU stage s; does nothing unless the plan offloads activations.
  ActivationOffload(sim::TaskGraph& g, const JobLayout& layout, int s, int c);
  bool on() const { return on_; }
  // The forward of work item j on virtual stage vs ended with `last`.
  void after_forward(int j, int vs, sim::TaskId last);
  // The backward of item j on virtual stage vs, whose first task is `first`; the copy back
  // starts once `ahead` ends (the end of the item two before the backward; -1: at once).
  void before_backward(int j, int vs, sim::TaskId ahead, sim::TaskId first);

 private:
  sim::TaskGraph& g_;
  const JobLayout& L_;
  bool on_ = false;
  int s_ = 0, c_ = 0;
  sim::CommSetId down_, up_;
  sim::StreamId stream_;
  sim::LabelId down_label_, up_label_;
  std::vector<sim::TaskId> copied_;  // per item: its copy down
  std::vector<double> bytes_;        // per item: what it keeps
};

}  // namespace dejavu::strategies::lowering
