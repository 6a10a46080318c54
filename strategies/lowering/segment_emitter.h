// The tasks of one compute segment on one simulated device: the expert-parallel exchange
// before it, the context exchange (an all-gather of the sequence's keys and values, or the
// steps of ring attention), its compute with the activation memory it takes or frees, its
// tensor-parallel synchronisation (an all-reduce, or with sequence parallelism a
// reduce-scatter and an all-gather), the exchange after it and the context gradients'
// reduce-scatter. Each task follows the one before it in the item (`Chain`).
#pragma once

#include <vector>

#include "strategies/lowering/labels.h"
#include "strategies/lowering/layout.h"

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
  sim::TaskId emit(const Segment& seg, double duration_s, int microbatch, Chain& chain);

 private:
  void exchange(const Segment& seg, bool before, int j, Chain& chain);
  void context(const Segment& seg, sim::CollectiveOp op, double per_sample, TaskKind kind, int j, Chain& chain);
  sim::TaskId ring_attention(const Segment& seg, double duration_s, double kv_bytes, int j, Chain& chain);
  void tensor_sync(const Segment& seg, int j, Chain& chain);

  sim::TaskGraph& g_;
  const JobLayout& L_;
  SegmentLabels& labels_;
  int s_, c_;
  sim::DeviceId device_;
};

}  // namespace dejavu::strategies::lowering
