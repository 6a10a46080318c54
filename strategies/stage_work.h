// What one virtual pipeline stage computes, worked out once per plan: its ops grouped in
// blocks (a decoder layer, or the ops before / after the layers), each block cut into
// compute segments at the tensor-parallel synchronisations, and what every segment costs
// in activation memory per sample under the plan's recomputation and sequence parallelism.
#pragma once

#include <string>
#include <vector>

#include "strategies/plan.h"
#include "strategies/segment_deps.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

// ReplayShare: a replay of each op's sac_replay_share (op-level selective checkpointing).
// ReplayKept: a replay under a policy that kept some ops' outputs (MaxText's, workloads/
// op_sac.h): those ops (dot_replayed false) run nothing, while their inputs come back.
enum class Pass { Forward, Backward, BackwardInput, BackwardWeight, Replay, ReplayShare, ReplayKept };

struct Segment {
  Pass pass = Pass::Forward;
  std::vector<int> ops;
  double sync_bytes_per_sample = 0;  // tensor-parallel synchronisation after the segment
  // ... its all-gather under sequence parallelism: quantized (fp8, fp4) when the GEMM it
  // feeds runs in that precision, as Transformer Engine gathers (tp_gather_bytes).
  double gather_bytes_per_sample = 0;
  // Bytes per sample `op` (one of the synchronisation's collectives) moves: the all-gather
  // its own, the reduce-scatter or all-reduce the tensor's.
  double sync_bytes_of(sim::CollectiveOp op) const {
    return op == sim::CollectiveOp::AllGather ? gather_bytes_per_sample : sync_bytes_per_sample;
  }
  double ep_before_per_sample = 0;  // expert-parallel all-to-all before the segment
  double ep_after_per_sample = 0;   // ... and after it (after the TP synchronisation)
  sim::CollectiveOp ep_before_op = sim::CollectiveOp::AllToAll, ep_after_op = sim::CollectiveOp::AllToAll;
  double cp_gather_per_sample = 0;   // context parallelism: keys and values gathered before
  double cp_scatter_per_sample = 0;  // ... and their gradients reduce-scattered after
  // Activation memory per sample per GPU: allocated by the forward (stored) or by the
  // recomputation (the rest), freed by the backward of the same ops.
  double alloc_per_sample = 0;
  double free_per_sample = 0;
  int dot_policy = -1;  // ReplayKept: the MaxText policy (workloads/op_sac.h) that kept what it did
  std::string name;
  // The segments of the same block and pass it waits for (none: only the block's start).
  std::vector<SegmentDep> after;
};

// The share of `op`'s forward a segment runs (1 outside replays that keep part of it).
double replayed_share(const workloads::Op& op, const Segment& seg);

struct Block {
  bool is_layer = false;
  double params_per_gpu = 0;
  double expert_params_per_gpu = 0;            // part of params_per_gpu, synchronised over dp / ep
  std::vector<Segment> fwd, bwd, recompute;    // recompute is empty unless it replays
  std::vector<Segment> bwd_input, bwd_weight;  // the backward split, for zero-bubble schedules
  // The ops after the layers under defer_embedding_wgrad_compute: split too, the weight part
  // of the deferred microbatches run in the pipeline flush.
  bool deferred_wgrad = false;
  // What its forward keeps on the GPU for its backward, per sample.
  double stored_per_sample() const {
    double bytes = 0;
    for (const Segment& seg : fwd) bytes += seg.alloc_per_sample - seg.free_per_sample;
    return bytes;
  }
};

struct StageWork {
  std::vector<Block> blocks;  // in forward order
  double params_per_gpu = 0;
  double expert_params_per_gpu = 0;                 // part of params_per_gpu, synchronised over dp / ep
  std::vector<std::pair<double, double>> matrices;  // weight matrices per GPU (rows, cols)
  double stored_activation_per_sample = 0;          // what a microbatch keeps until its backward
};

// Op -> virtual stage: contiguous layers (plan.stages, or as even as possible with the
// first stages taking one more); ops before the layers go to stage 0, after to the last.
std::vector<int> stage_of_ops(const workloads::ModelGraph& model, const std::vector<int>& order, const Plan& plan);

std::vector<StageWork> build_stage_work(const workloads::ModelGraph& model, const Plan& plan,
                                        bool split_backward = false);

// Whether `op` has weights whose gradient a split backward computes in its W part.
bool has_weight_gradient(const workloads::Op& op);

// Activation bytes per sample one GPU keeps for `op` under the plan (stored) and in all
// (full, what the backward frees).
struct ActivationSplit {
  double full = 0;
  double stored = 0;
};
// `recompute`: the mode of the op's stage (Plan::recompute_of).
ActivationSplit activation_of(const workloads::Op& op, const workloads::ModelGraph& model, const Plan& plan,
                              const std::string& recompute);

}  // namespace dejavu::strategies
