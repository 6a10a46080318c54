#include "strategies/lowering/segment_emitter.h"

namespace dejavu::strategies::lowering {

sim::TaskId SegmentEmitter::emit(const Segment& seg, double duration_s, int j, Chain& chain) {
  const double b = L_.micro_batch;
  if (seg.ep_before_per_sample > 0) exchange(seg, true, j, chain);
  const double kv = (seg.cp_gather_per_sample + seg.cp_scatter_per_sample) * b;  // the sequence's keys and values
  sim::TaskId compute = -1;
  if (L_.cp_ring && kv > 0) {
    compute = ring_attention(seg, duration_s, kv, j, chain);
  } else {
    // Context parallelism: every rank gathers the sequence's keys and values before
    // attention, and reduce-scatters their gradients after its backward.
    if (seg.cp_gather_per_sample > 0)
      context(seg, sim::CollectiveOp::AllGather, seg.cp_gather_per_sample, TaskKind::ContextGather, j, chain);
    const sim::TaskId id =
        g_.add_compute(device_, L_.streams.compute, duration_s, labels_.of(seg, TaskKind::Compute), j);
    g_.add_memory(id, seg.alloc_per_sample * b, seg.free_per_sample * b);
    chain.add(g_, id);
    compute = id;
  }
  // The tensor-parallel synchronisation, then the expert-parallel exchange.
  if (L_.t > 1 && seg.sync_bytes_per_sample > 0) tensor_sync(seg, j, chain);
  if (seg.ep_after_per_sample > 0) exchange(seg, false, j, chain);
  if (seg.cp_scatter_per_sample > 0 && !L_.cp_ring)
    context(seg, sim::CollectiveOp::ReduceScatter, seg.cp_scatter_per_sample, TaskKind::ContextScatter, j, chain);
  return compute;
}

// An expert-parallel exchange; its receive buffer (the tokens arriving) is held while it runs.
void SegmentEmitter::exchange(const Segment& seg, bool before, int j, Chain& chain) {
  const double per_sample = before ? seg.ep_before_per_sample : seg.ep_after_per_sample;
  const sim::CollectiveOp op = before ? seg.ep_before_op : seg.ep_after_op;
  const sim::LabelId label = labels_.of(seg, before ? TaskKind::ExchangeBefore : TaskKind::ExchangeAfter, op);
  const double bytes = per_sample * L_.micro_batch / L_.cp;
  const sim::TaskId a2a =
      g_.add_collective(L_.stage_participants[s_], L_.streams.ep, op, L_.ep_set[s_], bytes, label, j);
  g_.add_memory(a2a, bytes, bytes);
  chain.add(g_, a2a);
}

void SegmentEmitter::context(const Segment& seg, sim::CollectiveOp op, double per_sample, TaskKind kind, int j,
                             Chain& chain) {
  const sim::TaskId x = g_.add_collective(L_.stage_participants[s_], L_.streams.cp, op, L_.cp_set[s_],
                                          per_sample * L_.micro_batch, labels_.of(seg, kind, op), j);
  chain.add(g_, x);
}

// Ring attention: cp steps, each the attention of the local queries with one block of keys
// and values, while the block moves on to the next rank (and, backward, the block's
// partial gradient with it): step i + 1 waits for step i and for the block's arrival; the
// blocks move one after another.
sim::TaskId SegmentEmitter::ring_attention(const Segment& seg, double duration_s, double kv_bytes, int j,
                                           Chain& chain) {
  const int cp = L_.cp;
  const double b = L_.micro_batch;
  const bool backward = seg.cp_scatter_per_sample > 0;
  const sim::LabelId send_label = labels_.of(seg, TaskKind::RingSend);
  const Chain entry = chain;  // what the first step and the first send wait for
  sim::TaskId sent = -1;
  for (int step = 0; step < cp; ++step) {
    const sim::TaskId id =
        g_.add_compute(device_, L_.streams.compute, duration_s / cp, labels_.of(seg, TaskKind::Compute), j);
    g_.add_memory(id, step == 0 ? seg.alloc_per_sample * b : 0, step == cp - 1 ? seg.free_per_sample * b : 0);
    chain.add(g_, id);
    if (sent >= 0) g_.depend(sent, id);
    if (step + 1 < cp) {
      const sim::TaskId x = g_.add_transfer(device_, L_.streams.cp, L_.cp_next[s_][c_],
                                            kv_bytes / cp * (backward ? 2 : 1), send_label, j);
      if (sent >= 0)
        g_.depend(sent, x);
      else
        entry.wait(g_, x);
      sent = x;
    }
  }
  return chain.last;
}

void SegmentEmitter::tensor_sync(const Segment& seg, int j, Chain& chain) {
  const double bytes = seg.sync_bytes_per_sample * L_.micro_batch / L_.cp;
  for (sim::CollectiveOp op : tp_sync_ops(L_.plan)) {
    const sim::TaskId sync = g_.add_collective(L_.self[s_][c_], L_.streams.tp, op, L_.tp_set[s_][c_], bytes,
                                               labels_.of(seg, TaskKind::TensorSync, op), j);
    chain.add(g_, sync);
  }
}

}  // namespace dejavu::strategies::lowering
