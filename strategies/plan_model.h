// The model a plan runs: the workload as loaded, or, when the plan names
// `embedding_sharding`, the DLRM regenerated with its tables sharded that way
// (workloads/dlrm.h). Every command that simulates a plan of a workload goes through here, as
// through plan_cluster.h for the platform.
#pragma once

#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

// Throws ConfigError at the plan's `embedding_sharding` for a model without embedding
// tables or a list whose length is not the model's table groups.
workloads::ModelGraph model_for_plan(const workloads::ModelGraph& model, const Plan& plan);
// The same, taking a model just loaded: moved through when the plan changes nothing.
workloads::ModelGraph model_for_plan(workloads::ModelGraph&& model, const Plan& plan);

}  // namespace dejavu::strategies
