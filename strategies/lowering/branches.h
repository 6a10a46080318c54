// One pass of a block as tasks when its segments branch: each segment starts after the
// segments it waits for (`Segment::after`; the block's start when none), the ready
// segments issued in order with those that wait for no collective first — so on the
// in-order compute stream a branch's compute runs while another branch's exchange is in
// flight, as frameworks overlap them (TorchRec's embedding all-to-all with the dense MLP,
// Megatron's shared experts with the token dispatch). The block ends at every segment
// nothing else waited for. A chain of segments comes out as the chain it was.
#pragma once

#include <vector>

#include "strategies/lowering/segment_emitter.h"

namespace dejavu::strategies::lowering {

// The order to issue `segs` in (a topological order of their `after`).
std::vector<size_t> issue_order(const std::vector<Segment>& segs);

// In a pass whose segments form one chain (each after the one before and nothing else),
// tp_comm_overlap may run a segment's all-gather under the next one's first GEMM (the last
// segment's under the next pass's first, the emitter holding it till then).
void run_pass(SegmentEmitter& emit, const std::vector<Segment>& segs, const std::vector<SegmentTime>& times,
              int microbatch, Chain& chain);

}  // namespace dejavu::strategies::lowering
