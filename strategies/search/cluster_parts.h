// Parts of a cluster for `search --objective cost`: a plan on fewer GPUs may take longer per
// iteration yet cost fewer GPU-hours (communication shrinks and efficiency rises), so the cost
// search runs every searcher on the cluster's first n GPUs (platforms/cluster_part.h) for each
// n here and ranks all plans found by GPU-hours.
#pragma once

#include <vector>

#include "platforms/cluster.h"

namespace dejavu::strategies::search {

// Descending: the whole cluster, every power of two of servers below its server count, then
// a server's GPUs halved while they halve evenly, down to one GPU. Servers count as the
// smallest server's GPUs (a mixed cluster's first n GPUs are whole servers of the order
// searched). 8 servers of 8 GPUs: 64, 32, 16, 8, 4, 2, 1.
std::vector<int> cluster_part_sizes(const platforms::Cluster& cluster);

}  // namespace dejavu::strategies::search
