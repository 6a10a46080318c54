#include "strategies/lowering/work_items.h"

#include "strategies/lowering/activation_offload.h"

#include "strategies/lowering/branches.h"
#include "strategies/lowering/prices.h"
#include "strategies/lowering/segment_emitter.h"

namespace dejavu::strategies::lowering {

ItemKind kind_of(const WorkItem& item) {
  if (!item.backward) return kForward;
  if (item.part == BackwardPart::Weight) return kBackwardWeight;
  return item.part == BackwardPart::Input ? kBackwardInput : kBackward;
}

ItemTasks::ItemTasks(const JobLayout& L) {
  const int nc = L.classes_count();
  for (Grid* grid : {&f_first, &f_last, &b_first, &b_last, &f_send, &b_send, &weight_first})
    grid->assign(nc, std::vector<std::vector<sim::TaskId>>(L.V, std::vector<sim::TaskId>(L.m, -1)));
  last_backwards.resize(L.p);
  for (auto* grid : {&grads_ready, &first_forward, &forward_entry}) {
    grid->assign(nc, std::vector<std::vector<sim::TaskId>>(L.V));
    for (auto& per_class : *grid)
      for (int vs = 0; vs < L.V; ++vs) per_class[vs].assign(L.work[vs].blocks.size(), -1);
  }
}

namespace {
std::vector<SegmentTime> times(const GroupPricer& pricer, const std::vector<Segment>& segs) {
  std::vector<SegmentTime> out;
  for (const Segment& seg : segs) out.push_back(pricer.times(seg));
  return out;
}
}  // namespace

ClassItems::ClassItems(sim::TaskGraph& g, const JobLayout& L, SegmentLabels& labels, std::vector<Zero3Stage>& zero3,
                       ItemTasks& tasks, int c)
    : g_(g), L_(L), labels_(labels), zero3_(zero3), tasks_(tasks), c_(c) {
  fwd_set_.assign(L.V, sim::CommSetId());
  bwd_set_.assign(L.V, sim::CommSetId());
  for (int vs = 0; vs < L.V; ++vs) {
    // Pipeline sends between consecutive virtual stages, for every replica and every GPU of
    // the receiving stage, from its sender's rank of the same number (modulo the sender's
    // GPUs: a stage of fewer tensor ranks than the next sends to several).
    sim::CommSet to_next, to_prev;
    const int here = L.gpu_stage(vs), K = L.K_of(here);
    for (int r : L.classes[c]) {
      if (L.has_next(vs))
        for (int k = 0; k < L.K_of(L.gpu_stage(vs + 1)); ++k)
          to_next.groups.push_back({L.host(here, r, k % K), L.host(L.gpu_stage(vs + 1), r, k)});
      if (L.has_prev(vs))
        for (int k = 0; k < L.K_of(L.gpu_stage(vs - 1)); ++k)
          to_prev.groups.push_back({L.host(here, r, k % K), L.host(L.gpu_stage(vs - 1), r, k)});
    }
    if (L.has_next(vs)) fwd_set_[vs] = g.add_comm_set(std::move(to_next));
    if (L.has_prev(vs)) bwd_set_[vs] = g.add_comm_set(std::move(to_prev));
  }
  const int slices = L.pricings();
  times_.assign(slices, std::vector<SegmentTimes>(L.V));
  blocks_.assign(slices, std::vector<std::vector<BlockItems>>(L.V));
  items_.assign(slices, std::vector<std::array<ItemCost, kItemKinds>>(L.V));
  for (int q = 0; q < slices; ++q)
    for (int vs = 0; vs < L.V; ++vs) price(q, vs);
  fused_label_ = {g.label("forward"), g.label("backward"), g.label("backward (input gradients)"),
                  g.label("backward (weight gradients)")};
  send_fwd_label_ = g.label("send activations to next stage");
  send_bwd_label_ = g.label("send gradients to previous stage");
}

// Fused: each kind of work item priced once, block by block and as a whole; else every
// segment's time. Slice q's prices (those of every work item j with slice_of(j) == q).
void ClassItems::price(int q, int vs) {
  const workloads::ModelGraph& model = L_.slice_model(q);
  const auto& blocks = L_.slice_work(q)[vs].blocks;
  GroupPricer pricer(model, L_.cluster, L_.plan, L_.gpu_stage(vs), L_.classes[c_][0], L_.options.collective_algorithm);
  if (L_.fused) {
    auto& priced = blocks_[q][vs];
    for (const Block& blk : blocks) priced.push_back(pricer.block(blk));
    auto& items = items_[q][vs];
    for (size_t i = 0; i < blocks.size(); ++i) {
      const BlockItems& f = priced[i];
      const BlockItems& b = priced[blocks.size() - 1 - i];
      items[kForward].append(f.fwd);
      items[kBackward].append(b.bwd);
      items[kBackwardInput].append(b.bwd_input);
      items[kBackwardWeight].append(b.bwd_weight);
    }
    return;
  }
  SegmentTimes& t = times_[q][vs];
  for (const Block& blk : blocks) {
    t.fwd.push_back(times(pricer, blk.fwd));
    t.bwd.push_back(times(pricer, blk.bwd));
    t.recompute.push_back(times(pricer, blk.recompute));
    t.bwd_input.push_back(times(pricer, blk.bwd_input));
    t.bwd_weight.push_back(times(pricer, blk.bwd_weight));
  }
}

void ClassItems::emit_stage(int s) {
  Zero3Device zero3(g_, zero3_.empty() ? nullptr : &zero3_[s]);
  const std::vector<WorkItem> order = L_.schedule->order(s, L_.p, L_.m_of(c_), L_.v);
  for (const WorkItem& item : order) {
    if (item.backward && item.part != BackwardPart::Weight) last_backward_ = item.microbatch;
    if (item.backward && item.part == BackwardPart::Weight) last_weight_ = item.microbatch;
  }
  ActivationOffload offload(g_, L_, s, c_);
  LayerOffload layers(g_, L_, s, c_);
  std::vector<sim::TaskId> ends;  // each emitted item's last task
  for (const WorkItem& item : order) {
    const int vs = L_.schedule->virtual_stage(item.chunk, s, L_.p);
    const int j = item.microbatch;
    emit_item(item, s, zero3, layers);
    if (!offload.on()) continue;
    if (!item.backward) {
      offload.after_forward(j, vs, tasks_.f_last[c_][vs][j]);
      ends.push_back(tasks_.f_last[c_][vs][j]);
      continue;
    }
    const ItemTasks::Grid& first = item.part == BackwardPart::Weight ? tasks_.weight_first : tasks_.b_first;
    if (item.part != BackwardPart::Weight)
      offload.before_backward(j, vs, ends.size() >= 2 ? ends[ends.size() - 2] : -1, first[c_][vs][j]);
    ends.push_back(tasks_.last_backwards[s].empty() ? -1 : tasks_.last_backwards[s].back());
  }
  emit_deferred_wgrads(s);
}

// Megatron-Core's deferred output-layer weight gradients (defer_embedding_wgrad_compute):
// after every item of the stage, in the pipeline flush, microbatch by microbatch; the block's
// gradients are complete after the last, and the stage steps after it.
void ClassItems::emit_deferred_wgrads(int s) {
  if (deferred_.empty()) return;
  SegmentEmitter emit(g_, L_, labels_, s, c_);
  Chain chain;
  for (const Deferred& d : deferred_) {
    const Block& blk = L_.work_at(d.microbatch)[d.vs].blocks[d.block];
    run_pass(emit, blk.bwd_weight, times_[L_.slice_of(d.microbatch)][d.vs].bwd_weight[d.block], d.microbatch, chain);
  }
  emit.finish(chain, deferred_.back().microbatch);
  if (chain.last >= 0) {
    tasks_.grads_ready[c_][deferred_.back().vs][deferred_.back().block] = chain.last;
    tasks_.last_backwards[s].push_back(chain.last);
  }
  deferred_.clear();
}

void ClassItems::emit_item(const WorkItem& item, int s, Zero3Device& zero3, LayerOffload& layers) {
  const int vs = L_.schedule->virtual_stage(item.chunk, s, L_.p);
  Chain chain;
  if (L_.fused)
    emit_fused(item, vs, s, zero3, chain);
  else
    emit_blocks(item, vs, s, zero3, layers, chain);
  zero3.finish();
  place(item, vs, s, chain);
}

// Fused: the whole item as one task, or with ZeRO-3 one task per block (between the
// gathers and reductions). Weight gradients need the layer's inputs, not its weights.
void ClassItems::emit_fused(const WorkItem& item, int vs, int s, Zero3Device& zero3, Chain& chain) {
  const ItemKind kind = kind_of(item);
  const sim::DeviceId device = L_.dev[s][c_];
  const int j = item.microbatch;
  auto task = [&](const ItemCost& cost) {
    const sim::TaskId id = g_.add_compute(device, L_.streams.compute, cost.duration_s, fused_label_[kind], j);
    g_.add_memory(id, cost.peak, cost.peak - cost.level);
    chain.add(g_, id);
  };
  const int q = L_.slice_of(j);
  if (zero3_.empty()) return task(items_[q][vs][kind]);
  const auto& blocks = L_.work_at(j)[vs].blocks;
  const BackwardPass pass = kind == kBackward        ? BackwardPass::Whole
                            : kind == kBackwardInput ? BackwardPass::Input
                                                     : BackwardPass::Weight;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const size_t bi = item.backward ? blocks.size() - 1 - i : i;
    const BlockItems& b = blocks_[q][vs][bi];
    const ItemCost& cost = kind == kForward         ? b.fwd
                           : kind == kBackward      ? b.bwd
                           : kind == kBackwardInput ? b.bwd_input
                                                    : b.bwd_weight;
    const bool reduces = kind != kForward && completes_gradients(blocks[bi], pass);
    zero3.block(blocks[bi], j, kind != kForward, kind != kBackwardWeight, reduces, chain, [&] { task(cost); });
  }
}

// One task per segment (with its collectives): forward first block to last; backward
// layer by layer from the last, replaying what recomputation dropped just before it (or
// its input-gradient part, when the schedule splits it); weight gradients sent nowhere.
void ClassItems::emit_blocks(const WorkItem& item, int vs, int s, Zero3Device& zero3, LayerOffload& layers,
                             Chain& chain) {
  SegmentEmitter emit(g_, L_, labels_, s, c_);
  const int j = item.microbatch;
  const auto& blocks = L_.work_at(j)[vs].blocks;
  const SegmentTimes& t = times_[L_.slice_of(j)][vs];
  auto run = [&](const std::vector<Segment>& segs, const std::vector<SegmentTime>& d) {
    run_pass(emit, segs, d, j, chain);
  };
  std::vector<int> layer_of(blocks.size(), -1);  // with layer offload: the block's layer on this stage
  for (size_t bi = 0, n = 0; bi < blocks.size() && layers.on(); ++bi)
    if (blocks[bi].is_layer) layer_of[bi] = static_cast<int>(n++);
  if (!item.backward) {
    for (size_t bi = 0; bi < blocks.size(); ++bi) {
      if (layer_of[bi] >= 0) layers.before_forward(j, layer_of[bi], chain);
      const auto begin = static_cast<sim::TaskId>(g_.size());
      const sim::TaskId entry = chain.last;
      zero3.block(blocks[bi], j, false, true, false, chain, [&] { run(blocks[bi].fwd, t.fwd[bi]); });
      if (j == 0 && static_cast<sim::TaskId>(g_.size()) > begin) {
        tasks_.first_forward[c_][vs][bi] = begin;
        tasks_.forward_entry[c_][vs][bi] = entry;
      }
      if (layer_of[bi] >= 0)
        layers.after_forward(j, layer_of[bi], blocks[bi].stored_per_sample() * L_.micro_batch, chain.last);
    }
    return emit.finish(chain, j);
  }
  const ItemKind kind = kind_of(item);
  for (size_t bi = blocks.size(); bi-- > 0;) {
    const Block& blk = blocks[bi];
    if (kind == kBackwardWeight) {
      zero3.block(blk, j, true, false, completes_gradients(blk, BackwardPass::Weight), chain,
                  [&] { run(blk.bwd_weight, t.bwd_weight[bi]); });
      if (j == last_weight_ && chain.last >= 0) tasks_.grads_ready[c_][vs][bi] = chain.last;
      continue;
    }
    if (layer_of[bi] >= 0) layers.before_backward(j, layer_of[bi], chain);  // back before the input gradients
    const bool defer = kind == kBackward && blk.deferred_wgrad && L_.plan.defers_wgrad_of(j);
    const bool input_only = kind == kBackwardInput || defer;
    zero3.block(blk, j, true, true, completes_gradients(blk, input_only ? BackwardPass::Input : BackwardPass::Whole),
                chain, [&] {
                  run(blk.recompute, t.recompute[bi]);
                  run(input_only ? blk.bwd_input : blk.bwd, input_only ? t.bwd_input[bi] : t.bwd[bi]);
                });
    if (defer) deferred_.push_back({vs, static_cast<int>(bi), j});
    if (j == last_backward_ && !input_only) tasks_.grads_ready[c_][vs][bi] = chain.last;
  }
  emit.finish(chain, j);
}

// An item's place among the others: the send to the neighbouring stage, and where the
// dependencies across stages and the gradient pass will find it.
void ClassItems::place(const WorkItem& item, int vs, int s, const Chain& chain) {
  const int j = item.microbatch;
  const sim::DeviceId device = L_.dev[s][c_];
  const double sample = L_.model_at(j).boundary_bytes_per_sample * L_.micro_batch;
  auto boundary = [&](int to) { return sample / L_.plan.boundary_split(L_.gpu_stage(to)); };  // a rank's tokens
  ItemTasks& t = tasks_;
  if (!item.backward) {
    t.f_first[c_][vs][j] = chain.first;
    t.f_last[c_][vs][j] = chain.last;
    if (L_.has_next(vs)) {
      t.f_send[c_][vs][j] = g_.add_transfer(device, L_.streams.pp, fwd_set_[vs], boundary(vs + 1), send_fwd_label_, j);
      chain.wait(g_, t.f_send[c_][vs][j]);
    }
  } else if (item.part == BackwardPart::Weight) {
    if (chain.first >= 0) t.weight_first[c_][vs][j] = chain.first;
    if (chain.last >= 0) t.last_backwards[s].push_back(chain.last);
  } else {
    t.b_first[c_][vs][j] = chain.first;
    t.b_last[c_][vs][j] = chain.last;
    t.last_backwards[s].push_back(chain.last);
    if (L_.has_prev(vs)) {
      t.b_send[c_][vs][j] = g_.add_transfer(device, L_.streams.pp, bwd_set_[vs], boundary(vs - 1), send_bwd_label_, j);
      chain.wait(g_, t.b_send[c_][vs][j]);
    }
  }
}

void ClassItems::link_stages() {
  ItemTasks& t = tasks_;
  for (int vs = 0; vs < L_.V; ++vs)
    for (int j = 0; j < L_.m; ++j) {
      if (t.f_last[c_][vs][j] < 0) continue;  // the microbatch runs in the other pipeline
      g_.depend(t.f_last[c_][vs][j], t.b_first[c_][vs][j]);
      if (t.weight_first[c_][vs][j] >= 0) g_.depend(t.b_last[c_][vs][j], t.weight_first[c_][vs][j]);
      if (L_.has_prev(vs)) g_.depend(t.f_send[c_][vs - 1][j], t.f_first[c_][vs][j]);
      if (L_.has_next(vs)) g_.depend(t.b_send[c_][vs + 1][j], t.b_first[c_][vs][j]);
    }
}

}  // namespace dejavu::strategies::lowering
