// Heterogeneous data parallelism in the search (HetPipe, AMP, Metis): on a cluster of
// several GPU types, data-parallel replicas on faster GPUs take more microbatches
// (plan.replica_microbatches). The split minimises the slowest replica's compute,
// max_r m_r t_r with sum_r m_r the batch's microbatches (min_max_split.h), where t_r is one
// microbatch's forward and backward on replica r's slowest stage, priced as the lowering
// prices it.
// Every searcher tries each plan it scores on such a cluster both ways (Tracker): even, and
// balanced.
#pragma once

#include <string>
#include <vector>

#include "strategies/plan.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

// Seconds of one microbatch's forward and backward on each replica's slowest GPU stage.
std::vector<double> replica_microbatch_s(const Problem& problem, const Plan& plan,
                                         const std::string& collective_algorithm = "ring");

// The plan with its replicas balanced; false where that changes nothing (one GPU type, a
// single replica, replicas alike) or the plan cannot take it (its schedule, its sync).
bool balance_replicas(const Problem& problem, const Plan& plan, Plan& out);

}  // namespace dejavu::strategies::search
