// A cluster's servers reordered by GPU type: ranks (and so pipeline stages and data-parallel
// replicas) fill GPUs in server order, so which GPU type comes first decides which stages a
// mixed cluster's faster GPUs take. A plan's `gpu_order` names that order; the search tries
// every order of a cluster's types, so its best plan does not depend on how the platform file
// happened to list its servers.
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"

namespace dejavu::platforms {

// The cluster with its server groups stably sorted by the position of their GPU type in
// `types` (groups of a type not listed follow, in file order), servers renumbered and the
// network rebuilt. An empty list, or one that keeps the order, returns the cluster as is.
Cluster ordered_by_gpu(const Cluster& cluster, const std::vector<std::string>& types);

// Where GPU type `gpu` stands in `types` (types.size() when it is not listed): what both a
// whole cluster's servers and a job's GPUs are stably sorted by.
size_t gpu_order_rank(const std::vector<std::string>& types, const std::string& gpu);

// The cluster's distinct GPU types, in file order.
std::vector<std::string> gpu_types(const Cluster& cluster);

}  // namespace dejavu::platforms
