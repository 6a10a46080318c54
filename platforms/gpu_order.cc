#include "platforms/gpu_order.h"

#include <algorithm>

namespace dejavu::platforms {

std::vector<std::string> gpu_types(const Cluster& cluster) {
  std::vector<std::string> out;
  for (const ServerGroup& g : cluster.groups)
    if (std::find(out.begin(), out.end(), g.gpu) == out.end()) out.push_back(g.gpu);
  return out;
}

size_t gpu_order_rank(const std::vector<std::string>& types, const std::string& gpu) {
  return static_cast<size_t>(std::find(types.begin(), types.end(), gpu) - types.begin());
}

Cluster ordered_by_gpu(const Cluster& cluster, const std::vector<std::string>& types) {
  std::vector<ServerGroup> groups = cluster.groups;
  std::stable_sort(groups.begin(), groups.end(), [&](const ServerGroup& a, const ServerGroup& b) {
    return gpu_order_rank(types, a.gpu) < gpu_order_rank(types, b.gpu);
  });
  bool same = true;
  for (size_t i = 0; i < groups.size(); ++i) same = same && groups[i].gpu == cluster.groups[i].gpu;
  if (same) return cluster;
  Cluster out = cluster;
  out.groups = std::move(groups);
  out.network = sim::Network();
  build_network(out);
  return out;
}

}  // namespace dejavu::platforms
