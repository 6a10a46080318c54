#include "strategies/cluster/placement.h"

#include "platforms/cluster_part.h"
#include "platforms/gpu_order.h"

#include <algorithm>
#include <numeric>

namespace dejavu::strategies::cluster {

ClusterShape shape_of(const platforms::Cluster& cluster) {
  ClusterShape shape;
  shape.servers_per_unit = cluster.servers_per_unit();
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const auto server = static_cast<size_t>(cluster.gpus[g].server);
    if (shape.server_gpus.size() <= server) shape.server_gpus.resize(server + 1);
    shape.server_gpus[server].push_back(g);
  }
  return shape;
}

platforms::Cluster job_cluster(const platforms::Cluster& cluster, const std::vector<int>& gpus,
                               const std::vector<std::string>& gpu_order) {
  platforms::Cluster out = platforms::with_gpus(cluster, gpus);
  std::stable_sort(out.gpus.begin(), out.gpus.end(), [&](const platforms::GpuSlot& a, const platforms::GpuSlot& b) {
    return platforms::gpu_order_rank(gpu_order, a.spec->name) < platforms::gpu_order_rank(gpu_order, b.spec->name);
  });
  return out;
}

namespace {

int free_on(const ClusterShape& shape, const std::vector<char>& free, int server) {
  int n = 0;
  for (int g : shape.server_gpus[server]) n += free[g] ? 1 : 0;
  return n;
}

// The free GPUs of `servers`, taken in that order until `count`, in rank order; empty if
// they hold fewer.
std::vector<int> take(const ClusterShape& shape, const std::vector<char>& free, const std::vector<int>& servers,
                      int count) {
  std::vector<int> out;
  for (int s : servers)
    for (int g : shape.server_gpus[s])
      if (free[g] && static_cast<int>(out.size()) < count) out.push_back(g);
  if (static_cast<int>(out.size()) < count) return {};
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> all_servers(const ClusterShape& shape) {
  std::vector<int> s(shape.server_gpus.size());
  std::iota(s.begin(), s.end(), 0);
  return s;
}

// The lowest-numbered free GPUs.
class FirstFit : public PlacementPolicy {
 public:
  std::vector<int> place(const ClusterShape& shape, const std::vector<char>& free, int count,
                         sim::Rng&) const override {
    return take(shape, free, all_servers(shape), count);
  }
};

// Servers in a seeded random order, each one's free GPUs in local order.
class RandomServers : public PlacementPolicy {
 public:
  std::vector<int> place(const ClusterShape& shape, const std::vector<char>& free, int count,
                         sim::Rng& rng) const override {
    std::vector<int> order = all_servers(shape);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[sim::below(rng, i)]);
    return take(shape, free, order, count);
  }
};

// Packs a job into as few servers and leaf units as it can, so that its rings stay under
// one leaf: a job that fits one server takes the server with the fewest free GPUs that
// hold it (in the fullest unit); a larger one the unit with the fewest free GPUs that
// holds it, or else the units with the most free GPUs first; inside a unit, the servers
// with the most free GPUs first (whole servers before partial ones).
class TopologyAware : public PlacementPolicy {
 public:
  std::vector<int> place(const ClusterShape& shape, const std::vector<char>& free, int count,
                         sim::Rng&) const override {
    const int servers = static_cast<int>(shape.server_gpus.size());
    std::vector<int> on(servers), unit_free(shape.units());
    for (int s = 0; s < servers; ++s) unit_free[shape.unit_of(s)] += on[s] = free_on(shape, free, s);
    int best = -1;  // a server that holds the job alone
    for (int s = 0; s < servers; ++s) {
      if (on[s] < count) continue;
      const auto key = [&](int x) { return std::make_pair(on[x], unit_free[shape.unit_of(x)]); };
      if (best < 0 || key(s) < key(best)) best = s;
    }
    if (best >= 0) return take(shape, free, {best}, count);
    std::vector<int> units(unit_free.size());
    std::iota(units.begin(), units.end(), 0);
    std::stable_sort(units.begin(), units.end(), [&](int a, int b) {
      const bool fa = unit_free[a] >= count, fb = unit_free[b] >= count;
      if (fa != fb) return fa;
      return fa ? unit_free[a] < unit_free[b] : unit_free[a] > unit_free[b];
    });
    std::vector<int> order;
    for (int u : units) {
      const size_t first = order.size();
      for (int s = u * shape.servers_per_unit; s < std::min(servers, (u + 1) * shape.servers_per_unit); ++s)
        order.push_back(s);
      std::stable_sort(order.begin() + static_cast<long>(first), order.end(),
                       [&](int a, int b) { return on[a] > on[b]; });
    }
    return take(shape, free, order, count);
  }
};

}  // namespace

std::vector<int> packed_gpus(const platforms::Cluster& cluster, int count) {
  sim::Rng unused(0);
  const std::vector<char> all(static_cast<size_t>(cluster.gpu_count()), 1);
  return TopologyAware().place(shape_of(cluster), all, count, unused);
}

Registry<PlacementPolicy>& placement_policies() {
  static Registry<PlacementPolicy> r("placement policy");
  return r;
}

void register_placement_policies() {
  auto& r = placement_policies();
  r.add("first-fit", "the lowest-numbered free GPUs", [] { return std::make_unique<FirstFit>(); });
  r.add("topology-aware", "packs a job into the fewest servers and leaves (best fit), so its rings stay under one leaf",
        [] { return std::make_unique<TopologyAware>(); });
  r.add("random", "servers in a seeded random order, each one's free GPUs in order",
        [] { return std::make_unique<RandomServers>(); });
}

}  // namespace dejavu::strategies::cluster
