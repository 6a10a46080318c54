#include "strategies/search/cluster_parts.h"

#include <algorithm>

namespace dejavu::strategies::search {

std::vector<int> cluster_part_sizes(const platforms::Cluster& cluster) {
  int per_server = cluster.gpu_count();
  for (const platforms::ServerGroup& g : cluster.groups) per_server = std::min(per_server, g.gpus_per_server);
  std::vector<int> out = {cluster.gpu_count()};
  auto add = [&](int n) {
    if (n >= 1 && n < out.back()) out.push_back(n);
  };
  int servers = 1;
  while (servers * 2 < cluster.server_count()) servers *= 2;
  for (; servers >= 1; servers /= 2) add(servers * per_server);
  for (int n = per_server; n % 2 == 0;) add(n /= 2);
  return out;
}

}  // namespace dejavu::strategies::search
