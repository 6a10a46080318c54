// The tasks of one compute segment on one simulated device: the expert-parallel exchange
// before it, the context exchange (an all-gather of the sequence's keys and values, or the
// steps of ring attention), its compute with the activation memory it takes or frees, its
// tensor-parallel synchronisation (an all-reduce, or with sequence parallelism a
// reduce-scatter and an all-gather), the exchange after it and the context gradients'
// reduce-scatter. Each task follows the one before it in the item (`Chain`).
//
// tp_comm_overlap (Megatron-Core with Transformer Engine's userbuffers): the reduce-scatter
// after a segment runs in tp chunks under its last GEMM's chunks, and the all-gather before
// the next segment under that one's first GEMM. Chunks of equal size pipeline: the GEMM g
// and collective c, in n = tp chunks, take g/n + (n-1)·max(g, c)/n + c/n. Two tasks each
// give exactly that: the first chunk of the one that leads, the remaining n-1 of both side
// by side, the last chunk of the one that follows.
#pragma once

#include <vector>

#include "strategies/lowering/labels.h"
#include "strategies/lowering/layout.h"
#include "strategies/lowering/prices.h"

namespace dejavu::strategies::lowering {

// The first and last task of a work item so far; each new task depends on `last`, and on
// the `joins` (the ends of other branches) when the item's branches meet.
struct Chain {
  sim::TaskId first = -1, last = -1;
  std::vector<sim::TaskId> joins;
  void add(sim::TaskGraph& g, sim::TaskId id) {
    wait(g, id);
    joins.clear();
    if (first < 0) first = id;
    last = id;
  }
  // `id` waits for everything so far (without becoming the last task).
  void wait(sim::TaskGraph& g, sim::TaskId id) const {
    if (last >= 0) g.depend(last, id);
    for (sim::TaskId j : joins) g.depend(j, id);
  }
};

class SegmentEmitter {
 public:
  SegmentEmitter(sim::TaskGraph& g, const JobLayout& layout, SegmentLabels& labels, int stage, int cls)
      : g_(g), L_(layout), labels_(labels), s_(stage), c_(cls), device_(layout.dev[stage][cls]) {}
  // Returns the segment's (last) compute task, what a branch reading a middle op waits for.
  // `defer_gather`: the next segment emitted follows this one and nothing else (run_pass),
  // so tp_comm_overlap may run this one's all-gather under that one's first GEMM.
  sim::TaskId emit(const Segment& seg, const SegmentTime& time, int microbatch, Chain& chain,
                   bool defer_gather = false);
  // An all-gather still waiting for a GEMM to run under is issued as it is (the item ends).
  void finish(Chain& chain, int microbatch);

 private:
  void exchange(const Segment& seg, bool before, int j, Chain& chain);
  void context(const Segment& seg, sim::CollectiveOp op, double per_sample, TaskKind kind, int j, Chain& chain);
  sim::TaskId ring_attention(const Segment& seg, double duration_s, double kv_bytes, int j, Chain& chain);
  void tensor_sync(const Segment& seg, int j, Chain& chain);
  sim::TaskId overlapped_compute(const Segment& seg, const SegmentTime& time, int j, Chain& chain, bool reduce);
  sim::TaskId compute_task(const Segment& seg, double duration_s, int j);
  sim::TaskId sync_task(const Segment& seg, sim::CollectiveOp op, double bytes, int j);
  bool overlaps(const Segment& seg) const;

  sim::TaskGraph& g_;
  const JobLayout& L_;
  SegmentLabels& labels_;
  int s_, c_;
  sim::DeviceId device_;
  // tp_comm_overlap: the all-gather of the last segment's sync, waiting for the next
  // segment's first GEMM to run under (its segment's label).
  const Segment* pending_gather_ = nullptr;
};

}  // namespace dejavu::strategies::lowering
