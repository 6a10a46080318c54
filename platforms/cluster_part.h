// Part of a cluster: the view a job (or a plan that asks for fewer GPUs than the platform
// has) gets of some of its GPUs. The groups, fabric and the whole network stay as they are,
// so the part's transfers cross the same links, switches and NICs as on the whole cluster.
#pragma once

#include <vector>

#include "platforms/cluster.h"

namespace dejavu::platforms {

// The cluster with only `gpus` (indices into cluster.gpus), in that order: its ranks.
Cluster with_gpus(const Cluster& cluster, const std::vector<int>& gpus);

// Its first `n` GPUs in rank order (whole servers first, then the first GPUs of one server);
// n of 0 or the cluster's count: the cluster as is. Callers check 0 <= n <= gpu_count().
Cluster first_gpus(const Cluster& cluster, int n);

}  // namespace dejavu::platforms
