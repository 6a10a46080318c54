#include "platforms/cluster_part.h"

#include <numeric>

namespace dejavu::platforms {

Cluster with_gpus(const Cluster& cluster, const std::vector<int>& gpus) {
  Cluster out = cluster;
  out.gpus.clear();
  out.gpus.reserve(gpus.size());
  for (int g : gpus) out.gpus.push_back(cluster.gpus.at(static_cast<size_t>(g)));
  return out;
}

Cluster first_gpus(const Cluster& cluster, int n) {
  if (n <= 0 || n >= cluster.gpu_count()) return cluster;
  std::vector<int> gpus(static_cast<size_t>(n));
  std::iota(gpus.begin(), gpus.end(), 0);
  return with_gpus(cluster, gpus);
}

}  // namespace dejavu::platforms
