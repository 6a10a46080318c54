// Activation offload (plan `offload: {activations: cpu}`; Megatron-Core's cpu_offloading,
// DeepSpeed's cpu_checkpointing): what a forward work item keeps for its backward is copied
// to its server's CPU memory as soon as the forward ends and leaves the GPU when the copy
// is done; it is copied back ahead of the item's backward, once the stage has finished the
// item two before that backward (so under the one just before it), and the backward waits
// for it.
// The copies are transfers on the GPU's PCIe link (shared with its NIC) on the offload
// stream. Per GPU, a microbatch's stored activations (StageWork) move twice a step.
//
// Layer by layer (`offload: {activations: cpu, layers: N}`, Megatron-Core's
// cpu_offloading_num_layers): Transformer Engine's default offload synchronizer (since TE 2.10,
// transformer_engine/pytorch/cpu_offload.py, DefaultOffloadSynchronizer) over the L layers of
// the GPU. Layer i < N is copied down once its forward ends; the forward of layer L - N + i
// waits for that copy, and layer i's memory leaves the GPU with it. Its copy back starts as
// the backward of layer L - 1 - N + i starts, and layer i's backward waits for it. So at most
// L - N layers' activations are on the GPU at the forward's end.
#pragma once

#include <vector>

#include "strategies/lowering/layout.h"
#include "strategies/lowering/segment_emitter.h"

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

class LayerOffload {
 public:
  // For replica class c on GPU stage s; does nothing unless the plan offloads layers.
  LayerOffload(sim::TaskGraph& g, const JobLayout& layout, int s, int c);
  bool on() const { return on_; }
  // Before the forward of layer `layer` of item j: the chain waits for the copy due by then.
  void before_forward(int j, int layer, Chain& chain);
  // After it (its stored activations, bytes for the microbatch; `last` its last task).
  void after_forward(int j, int layer, double bytes, sim::TaskId last);
  // Before the backward of layer `layer`: copies back what starts now, and the chain waits
  // for this layer's own.
  void before_backward(int j, int layer, Chain& chain);

 private:
  sim::TaskGraph& g_;
  bool on_ = false;
  int layers_ = 0, n_ = 0;
  sim::DeviceId device_;
  sim::CommSetId down_, up_;
  sim::StreamId stream_;
  sim::LabelId down_label_, up_label_;
  std::vector<std::vector<sim::TaskId>> copied_, back_;  // per item, per offloaded layer
  std::vector<std::vector<double>> bytes_;
};

}  // namespace dejavu::strategies::lowering
