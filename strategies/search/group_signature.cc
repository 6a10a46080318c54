#include "strategies/search/group_signature.h"

#include <cstdio>

#include "strategies/lowering.h"

namespace dejavu::strategies::search {

std::string group_signature(const platforms::Cluster& cluster, const Plan& plan, int stage, int replica) {
  const int t = plan.tp_of(stage);
  std::string sig = std::to_string(t) + ":";
  for (int k = 0; k < t; ++k) {
    const auto& slot = cluster.gpus[gpu_index(plan, stage, replica, k)];
    const auto c =
        cluster.network.path_cost(slot.host, cluster.gpus[gpu_index(plan, stage, replica, (k + 1) % t)].host);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s,%a/%a;", slot.spec->name.c_str(), c.latency_s, c.bottleneck_Bps);
    sig += buf;
  }
  return sig;
}

}  // namespace dejavu::strategies::search
