// ZeRO-3 as FSDP and DeepSpeed run it: per block and pass, an all-gather of its weights
// before it (`zero_prefetch` blocks ahead, so that the gathers run under the compute) and,
// after every microbatch's pass that completes the block's gradients, a reduce-scatter of
// them; dense weights over every replica, the experts' over the replicas holding the same
// experts. Gathers and reductions share the data-parallel stream, as PyTorch runs every
// collective of a process group on one NCCL stream: in issue order, the next block's
// gather before this block's reduction (FSDP prefetches before it reduces). One collective
// per block and pass stands for every replica class, in the order the stage runs its
// blocks. With the parameters offloaded (plan offload parameters, ZeRO-Infinity), each
// gather first copies every GPU's shard of the block in from its server's CPU memory over
// PCIe on a stream of its own (from NVMe: read first, the server's GPUs sharing the NVMe),
// and the gathered block is held whole (no shard stays). Without resharding after the
// forward (plan zero_reshard_after_forward: false, FSDP's SHARD_GRAD_OP), a block's gathered
// weights stay from its forward to the end of its backward, which gathers nothing.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "strategies/lowering/layout.h"
#include "strategies/lowering/segment_emitter.h"

namespace dejavu::strategies::lowering {

enum class BackwardPass { Whole, Input, Weight };

// Whether a pass over `blk` leaves its weight gradients complete: the whole backward
// does; split, the weight part does, or the input part where the block has no
// weight-gradient work (an embedding's gradient is a scatter of the input gradients).
bool completes_gradients(const Block& blk, BackwardPass pass);

class Zero3Stage {
 public:
  // The stage's shared gathers and reductions; none when ZeRO-3 shards nothing here.
  Zero3Stage(sim::TaskGraph& g, const JobLayout& layout, int stage);
  static bool applies(const JobLayout& layout);
  // The last reduction on the gradient stream: the optimizer step waits for it.
  const std::vector<sim::TaskId>& last_reduction() const { return reductions_.back().ids; }

 private:
  friend class Zero3Device;
  struct Exchange {
    std::vector<sim::TaskId> ids;
    double bytes = 0;  // what each GPU holds beyond its shard while the block needs it
  };
  struct Share {
    double bytes;
    int shards;
    sim::CommSetId set;
  };
  std::array<Share, 2> shares(const Block& blk, bool gradients) const;  // weights', or gradients' bytes
  sim::TaskId reduce_across(double shard_bytes, int microbatch, sim::TaskId after);
  void add(const Block& blk, bool gather, int microbatch);
  double reduced_bytes(const Block& blk) const;                        // what a GPU holds until a block's reduction
  std::vector<sim::TaskId> fetch(double shard_bytes, int microbatch);  // offloaded parameters
  sim::TaskGraph& g_;
  const JobLayout& L_;
  int s_;
  sim::CommSetId fetch_set_;
  sim::LabelId fetch_label_, read_label_;
  std::vector<Exchange> gathers_, reductions_;
  sim::ParticipantsId participants_;
  sim::StreamId fetch_stream_;
  sim::LabelId gather_label_, reduce_label_, across_label_;
  sim::CommSetId dense_set_, expert_set_, across_set_;
};

// One replica class's view of its stage's exchanges: wraps each block's tasks in their
// gather and reduction, with the prefetch dependencies and the memory they hold.
class Zero3Device {
 public:
  Zero3Device(sim::TaskGraph& g, Zero3Stage* stage) : g_(g), stage_(stage) {}
  // `backward`: a pass of the backward (plan zero_backward_prefetch says when its gather goes).
  void block(const Block& blk, int microbatch, bool backward, bool gathers, bool reduces, Chain& chain,
             const std::function<void()>& body);
  // Issues the reduction still waiting for a next gather to go first (the item ends).
  void finish();

 private:
  struct Pending {
    const Block* blk = nullptr;  // null: none
    int microbatch = 0;
    Chain after;  // the pass it waits for
  };
  sim::TaskGraph& g_;
  Zero3Stage* stage_;                   // null: no ZeRO-3
  std::vector<sim::TaskId> block_end_;  // the last task of each gathered block, in order
  // Without resharding after the forward: the bytes each (block, microbatch) gathered, held
  // until its backward ends.
  std::map<std::pair<const Block*, int>, double> held_;
  size_t reduced_ = 0;
  Pending pending_;
};

}  // namespace dejavu::strategies::lowering
