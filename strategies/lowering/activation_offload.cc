#include "strategies/lowering/activation_offload.h"

namespace dejavu::strategies::lowering {

ActivationOffload::ActivationOffload(sim::TaskGraph& g, const JobLayout& L, int s, int c)
    : g_(g), L_(L), on_(!L.plan.offload_activations.empty() && L.plan.offload_activation_layers == 0), s_(s), c_(c) {
  if (!on_) return;
  down_ = g.add_comm_set(L.host_copies(s, L.classes[c], true));
  up_ = g.add_comm_set(L.host_copies(s, L.classes[c], false));
  stream_ = g.stream("offload");
  down_label_ = g.label("activations to CPU memory");
  up_label_ = g.label("activations from CPU memory");
  copied_.assign(L.m * std::max(1, L.v * L.pipes), -1);
  bytes_.assign(copied_.size(), 0);
}

void ActivationOffload::after_forward(int j, int vs, sim::TaskId last) {
  if (!on_ || last < 0) return;
  const double bytes = L_.work_at(j)[vs].stored_activation_per_sample * L_.micro_batch;
  if (bytes <= 0) return;
  const size_t key = static_cast<size_t>(vs / L_.p * L_.m + j);
  const sim::TaskId id = g_.add_transfer(L_.dev[s_][c_], stream_, down_, bytes, down_label_, j);
  g_.depend(last, id);
  g_.add_memory(id, 0, bytes);  // off the GPU once copied
  copied_.at(key) = id;
  bytes_.at(key) = bytes;
}

void ActivationOffload::before_backward(int j, int vs, sim::TaskId ahead, sim::TaskId first) {
  if (!on_ || first < 0) return;
  const size_t key = static_cast<size_t>(vs / L_.p * L_.m + j);
  if (copied_.at(key) < 0) return;
  const sim::TaskId id = g_.add_transfer(L_.dev[s_][c_], stream_, up_, bytes_[key], up_label_, j);
  g_.add_memory(id, bytes_[key], 0);  // back on the GPU from the copy's start
  g_.depend(copied_[key], id);
  if (ahead >= 0) g_.depend(ahead, id);
  g_.depend(id, first);
}

LayerOffload::LayerOffload(sim::TaskGraph& g, const JobLayout& L, int s, int c)
    : g_(g), on_(L.plan.offload_activation_layers > 0), n_(L.plan.offload_activation_layers) {
  if (!on_) return;
  for (const Block& blk : L.work[s].blocks) layers_ += blk.is_layer ? 1 : 0;
  device_ = L.dev[s][c];
  down_ = g.add_comm_set(L.host_copies(s, L.classes[c], true));
  up_ = g.add_comm_set(L.host_copies(s, L.classes[c], false));
  stream_ = g.stream("offload");
  down_label_ = g.label("layer activations to CPU memory");
  up_label_ = g.label("layer activations from CPU memory");
  copied_.assign(L.m, std::vector<sim::TaskId>(n_, -1));
  back_ = copied_;
  bytes_.assign(L.m, std::vector<double>(n_, 0));
}

void LayerOffload::before_forward(int j, int layer, Chain& chain) {
  const int due = layer - (layers_ - n_);  // the layer whose copy must be done before this one
  if (!on_ || due < 0 || due >= n_ || copied_[j][due] < 0) return;
  chain.joins.push_back(copied_[j][due]);
}

void LayerOffload::after_forward(int j, int layer, double bytes, sim::TaskId last) {
  if (!on_ || layer >= n_ || bytes <= 0 || last < 0) return;
  const sim::TaskId id = g_.add_transfer(device_, stream_, down_, bytes, down_label_, j);
  g_.depend(last, id);
  g_.add_memory(id, 0, bytes);  // off the GPU once copied
  copied_[j][layer] = id;
  bytes_[j][layer] = bytes;
}

void LayerOffload::before_backward(int j, int layer, Chain& chain) {
  if (!on_) return;
  const int starts = layer - (layers_ - 1 - n_);  // the layer whose copy back starts now
  if (starts >= 0 && starts < n_ && copied_[j][starts] >= 0) {
    const sim::TaskId id = g_.add_transfer(device_, stream_, up_, bytes_[j][starts], up_label_, j);
    g_.add_memory(id, bytes_[j][starts], 0);  // back on the GPU from the copy's start
    g_.depend(copied_[j][starts], id);
    chain.wait(g_, id);
    back_[j][starts] = id;
  }
  if (layer < n_ && back_[j][layer] >= 0) chain.joins.push_back(back_[j][layer]);
}

}  // namespace dejavu::strategies::lowering
