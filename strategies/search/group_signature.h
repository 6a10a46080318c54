// What a pipeline stage's tensor group looks like to the pricer: its degree, the GPU type of
// each rank and the latency and bandwidth from each rank to the next in its ring. Stages
// (of one plan or of plans that differ only in their stages' degrees) whose groups have
// the same signature price alike, so the search caches block prices by it.
#pragma once

#include <string>

#include "platforms/cluster.h"
#include "strategies/plan.h"

namespace dejavu::strategies::search {

// Stage `stage`'s tensor group in data-parallel replica `replica`.
std::string group_signature(const platforms::Cluster& cluster, const Plan& plan, int stage, int replica = 0);

}  // namespace dejavu::strategies::search
