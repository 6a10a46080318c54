// Which compute segments of a block wait for which, read off the operator graph: a
// segment waits for another when one of its ops reads an op of the other — for the whole
// of it (its synchronisation and exchanges after) when that op is the other's last, for
// its compute alone otherwise. A chain of segments waits each for the one before; the
// branches of a graph (an embedding beside an MLP, shared experts beside routed ones)
// wait only for the block's start, so the lowering can overlap them.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model_graph.h"

namespace dejavu::strategies {

struct SegmentDep {
  int segment = 0;     // an earlier segment of the same block and pass
  bool whole = false;  // after its collectives too, not just its compute
};

class SegmentDeps {
 public:
  // `ops`: the block's ops in the pass's order; a backward pass reads consumers.
  SegmentDeps(const workloads::ModelGraph& model, const std::vector<int>& ops, bool backward);

  // Whether `v` needs a segment the open one does not wait for already (so `v` must open
  // a segment of its own).
  bool needs_more(int v) const;
  // `v` joins the open segment, which then waits for what `v` needs.
  void take(int v);
  // The open segment (`ops`) closes as the next segment; returns what it waits for.
  std::vector<SegmentDep> close(const std::vector<int>& ops);

 private:
  const std::vector<std::pair<int, int8_t>>& needs(int v) const;  // (segment, level) per input
  bool covered(int segment, int8_t level) const { return open_levels_[segment] >= level; }
  int segment_of(int op) const {
    return op < base_ || op >= base_ + static_cast<int>(segment_of_.size()) ? -2 : segment_of_[op - base_];
  }

  const workloads::ModelGraph& model_;
  bool backward_;
  int base_ = 0;                 // the block's lowest op
  std::vector<int> segment_of_;  // per op from base_: -1 open, -2 outside the block
  mutable std::vector<std::pair<int, int8_t>> needs_;
  // Per closed segment, what it waits for (1 compute, 2 whole) among the segments before it.
  std::vector<std::vector<int8_t>> levels_;
  std::vector<int> last_op_;  // per closed segment
  std::vector<int8_t> open_levels_;
  std::vector<SegmentDep> open_deps_;
};

}  // namespace dejavu::strategies
