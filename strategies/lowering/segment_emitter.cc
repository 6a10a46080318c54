#include "strategies/lowering/segment_emitter.h"

namespace dejavu::strategies::lowering {

sim::TaskId SegmentEmitter::emit(const Segment& seg, const SegmentTime& time, int j, Chain& chain, bool defer_gather) {
  const double b = L_.micro_batch;
  const bool exchanges_first = seg.ep_before_per_sample > 0 || seg.cp_gather_per_sample > 0;
  if (pending_gather_ && (exchanges_first || time.gemms == 0)) finish(chain, j);
  if (seg.ep_before_per_sample > 0) exchange(seg, true, j, chain);
  const double kv = (seg.cp_gather_per_sample + seg.cp_scatter_per_sample) * b;  // the sequence's keys and values
  sim::TaskId compute = -1;
  const bool reduce = overlaps(seg) && !(L_.cp_ring && kv > 0);
  if (L_.cp_ring && kv > 0) {
    finish(chain, j);
    compute = ring_attention(seg, time.total_s, kv, j, chain);
  } else {
    // Context parallelism: every rank gathers the sequence's keys and values before
    // attention, and reduce-scatters their gradients after its backward.
    if (seg.cp_gather_per_sample > 0)
      context(seg, sim::CollectiveOp::AllGather, seg.cp_gather_per_sample, TaskKind::ContextGather, j, chain);
    if (pending_gather_ || reduce) {
      compute = overlapped_compute(seg, time, j, chain, reduce);
    } else {
      compute = compute_task(seg, time.total_s, j);
      g_.add_memory(compute, seg.alloc_per_sample * b, seg.free_per_sample * b);
      chain.add(g_, compute);
    }
  }
  // The tensor-parallel synchronisation (overlapped: done, but for its all-gather), then
  // the expert-parallel exchange.
  if (reduce) {
    pending_gather_ = &seg;
    if (!defer_gather || seg.ep_after_per_sample > 0 || (seg.cp_scatter_per_sample > 0 && !L_.cp_ring))
      finish(chain, j);
  } else if (L_.t_of(s_) > 1 && seg.sync_bytes_per_sample > 0) {
    tensor_sync(seg, j, chain);
  }
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

bool SegmentEmitter::overlaps(const Segment& seg) const {
  return L_.plan.tp_comm_overlap && L_.t_of(s_) > 1 && seg.sync_bytes_per_sample > 0;
}

sim::TaskId SegmentEmitter::compute_task(const Segment& seg, double duration_s, int j) {
  return g_.add_compute(device_, L_.streams.compute, duration_s, labels_.of(seg, TaskKind::Compute), j);
}

sim::TaskId SegmentEmitter::sync_task(const Segment& seg, sim::CollectiveOp op, double bytes, int j) {
  return g_.add_collective(L_.self[s_][c_], L_.streams.tp, op, L_.tp_set[s_][c_], bytes,
                           labels_.of(seg, TaskKind::TensorSync, op), j);
}

// The segment's compute as pieces: under the pending all-gather, its first GEMM (the
// gather's first chunk, then the rest of both side by side, then the GEMM's last chunk);
// its middle; over its last GEMM, the reduce-scatter (the GEMM's first chunk, the rest of
// both, the reduction's last chunk). A one-GEMM segment gives its GEMM to the gather.
sim::TaskId SegmentEmitter::overlapped_compute(const Segment& seg, const SegmentTime& time, int j, Chain& chain,
                                               bool reduce) {
  const double n = L_.t_of(s_), b = L_.micro_batch;
  std::vector<sim::TaskId> pieces;
  double middle = time.total_s;
  if (pending_gather_) {
    const Segment& before = *pending_gather_;
    const double bytes = before.gather_bytes_per_sample * b / L_.cp;
    const sim::TaskId first = sync_task(before, sim::CollectiveOp::AllGather, bytes / n, j);
    chain.add(g_, first);
    const sim::TaskId rest = sync_task(before, sim::CollectiveOp::AllGather, bytes * (n - 1) / n, j);
    g_.depend(first, rest);
    pieces.push_back(compute_task(seg, time.first_gemm_s * (n - 1) / n, j));
    chain.add(g_, pieces.back());
    pieces.push_back(compute_task(seg, time.first_gemm_s / n, j));
    g_.depend(rest, pieces.back());
    chain.add(g_, pieces.back());
    middle -= time.first_gemm_s;
    pending_gather_ = nullptr;
    reduce = reduce && time.gemms > 1;
  }
  if (reduce) middle -= time.last_gemm_s;
  if (middle > 0 || pieces.empty()) {
    pieces.push_back(compute_task(seg, std::max(0.0, middle), j));
    chain.add(g_, pieces.back());
  }
  if (reduce) {
    const double bytes = seg.sync_bytes_per_sample * b / L_.cp;
    pieces.push_back(compute_task(seg, time.last_gemm_s / n, j));
    chain.add(g_, pieces.back());
    const sim::TaskId rest = sync_task(seg, sim::CollectiveOp::ReduceScatter, bytes * (n - 1) / n, j);
    g_.depend(pieces.back(), rest);
    pieces.push_back(compute_task(seg, time.last_gemm_s * (n - 1) / n, j));
    chain.add(g_, pieces.back());
    const sim::TaskId last = sync_task(seg, sim::CollectiveOp::ReduceScatter, bytes / n, j);
    g_.depend(rest, last);
    chain.add(g_, last);
  }
  g_.add_memory(pieces.front(), seg.alloc_per_sample * b, 0);
  g_.add_memory(pieces.back(), 0, seg.free_per_sample * b);
  return pieces.back();
}

void SegmentEmitter::finish(Chain& chain, int j) {
  if (!pending_gather_) return;
  const double bytes = pending_gather_->gather_bytes_per_sample * L_.micro_batch / L_.cp;
  chain.add(g_, sync_task(*pending_gather_, sim::CollectiveOp::AllGather, bytes, j));
  pending_gather_ = nullptr;
}

void SegmentEmitter::tensor_sync(const Segment& seg, int j, Chain& chain) {
  for (sim::CollectiveOp op : tp_sync_ops(L_.plan)) {
    const double bytes = seg.sync_bytes_of(op) * L_.micro_batch / L_.cp;
    const sim::TaskId sync = g_.add_collective(L_.self[s_][c_], L_.streams.tp, op, L_.tp_set[s_][c_], bytes,
                                               labels_.of(seg, TaskKind::TensorSync, op), j);
    chain.add(g_, sync);
  }
}

}  // namespace dejavu::strategies::lowering
