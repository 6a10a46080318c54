// The second tier of the plan space. Searchers move the knobs that shape a plan (space.h:
// degrees, microbatch, schedule, recomputation, ZeRO, SP, offload); when one finishes
// (Tracker::finish) its best plans are refined over the knobs that tune a shape, the same
// for every searcher:
//   - recomputation per pipeline stage: the first k stages keep the plan's mode, the rest a
//     lighter one (under 1F1B the first stages hold the most microbatches in flight);
//   - under full recomputation, only the first layers of each model chunk recomputed
//     (recompute_layers, Megatron-Core's block method): a quarter, half, three quarters;
//   - without pipeline parallelism, instead of recomputation, a quarter, half or three
//     quarters of the layers' activations offloaded to CPU memory (offload: {activations:
//     cpu, layers}), where every server has a host side;
//   - Megatron-Core's overlap switches: overlapped gradient reduce (buckets), overlapped
//     parameter gather (distributed optimizer), tensor-parallel communication overlap, each
//     alone and all that apply at once, under the rules Megatron asserts
//     (megatron_switch_break); and PyTorch DDP's 25 MB gradient buckets;
//   - with ZeRO, its states sharded over groups of replicas (dp_shard, hybrid sharding): one
//     server's replicas, and 4, 16, ... times that, below dp;
//   - the sync topologies that average exactly (SyncTopology::averages_exactly: a parameter
//     server sharded over the servers, a rolling parameter server) for plain data parallelism;
//   - the flushing schedules the space leaves out (Chimera, TeraPipe with its own slices);
//   - submesh shapes per stage (stage_tp) on the same GPUs, one move from the plan's: two
//     neighbouring stages swap widths, or a stage doubles while two of its width nearest it
//     halve (or the reverse); layers rebalanced by each stage's speed at its own width.
// Coordinate descent: from each of the best plans of `bases` distinct meshes (tensor,
// pipeline, context and expert degrees), score every refinement and move to the best one that is faster, for at most
// `rounds` moves. A refinement keeps the layer split and replica batches of the plan it
// refines (on a mixed cluster the Tracker balanced those already; a stage shape splits the
// layers anew), so it is scored as is. What changes the update rule
// (compression, gossip, delayed averaging, asynchronous pipelines) is not refined here: a
// faster step need not be a faster run (`search --objective time-to-accuracy` weighs them).
#pragma once

#include <vector>

#include "strategies/search/searcher.h"

namespace dejavu::strategies::search {

inline constexpr int kRefineBases = 3, kRefineRounds = 2;

// Every plan one refinement away from `at` (invalid ones are left to the evaluator); the dear
// one only with `dear`: TeraPipe (its slices come from a dynamic program that prices every
// cut, and the engine prices it, not the fast path). refine asks for it once, on the best plan.
std::vector<Plan> refinements(const Problem& problem, const Plan& at, bool dear = true);

// Refines the tracker's best plans; returns the plans it scored.
long refine(const Problem& problem, Tracker& tracker, int bases = kRefineBases, int rounds = kRefineRounds);

}  // namespace dejavu::strategies::search
