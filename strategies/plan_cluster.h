// The cluster a plan runs on: the platform's servers in the plan's `gpu_order`
// (platforms/gpu_order.h), then, when the plan names `gpus: N`, only the first N GPUs of
// them (platforms/cluster_part.h) on the whole network. Every command that simulates a plan
// on a platform goes through here.
#pragma once

#include "platforms/cluster.h"
#include "strategies/plan.h"

namespace dejavu::strategies {

// Throws ConfigError at the plan's `gpus` when it asks for more GPUs than the platform has.
platforms::Cluster cluster_for_plan(const platforms::Cluster& platform, const Plan& plan);

}  // namespace dejavu::strategies
