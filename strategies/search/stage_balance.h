// Layers over pipeline stages by their GPUs' speed, for searchers that do not cut stages
// themselves (the partitioners dp and diff do): on a cluster of several GPU types, the
// layers per stage that minimise the slowest stage's compute, max_s (fixed_s + L_s t_s),
// where t_s is one layer's forward and backward on stage s's GPUs (the slowest of its
// replicas) and fixed_s the blocks before the first layer (stage 0) or after the last
// (the last stage), priced as the lowering prices them (min_max_split.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "strategies/lowering.h"
#include "strategies/plan.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

// Block prices kept between calls on plans that differ only in their stages' tensor degrees
// (the stage shapes of one refinement): by a stage's recomputation and the signature of its
// tensor group (group_signature.h).
using StageBlockCache = std::map<std::string, std::vector<BlockCost>>;

// The plan with its layers so split; false where it has one stage, chunks, a split of its
// own, or the split would be the even one.
bool balance_stages(const Problem& problem, const Plan& plan, Plan& out, StageBlockCache* cache = nullptr);

}  // namespace dejavu::strategies::search
