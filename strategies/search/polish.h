// The local search the sampling searchers (mcmc, bo, rl) end with, as memetic searches do:
// from the best plan found, score every plan with another mesh (tensor, pipeline, context
// and expert degrees together, dp following as make_plan derives it) under every
// microbatch, recomputation and sequence parallelism (what a mesh needs to fit and run
// fast) or with each other ZeRO stage, or with one other knob changed (ZeRO stage, schedule, cp_comm, offload), and go
// on from the best plan then known, until a round finds nothing better or the rounds run out. A neighbour that runs out
// of memory is tried again with ZeRO-3 (its states sharded): a mesh often needs both to beat the plan it leaves. Every
// neighbour is a plan of the space under enumerate()'s rules; on a mixed cluster the
// Tracker scores each balanced as well (replica_balance.h, stage_balance.h).
#pragma once

#include "strategies/search/searcher.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

inline constexpr int kPolishRounds = 8;

// Returns the plans it scored (cache hits included); none when options.polish is off.
long polish(const Problem& problem, const Space& space, Tracker& tracker, int max_rounds = kPolishRounds);

}  // namespace dejavu::strategies::search
