#include "strategies/data_parallel.h"

#include <algorithm>
#include <random>

namespace dejavu::strategies {

namespace {

sim::TaskId transfers(SyncContext& c, std::vector<std::vector<int>> pairs, double bytes, const std::string& label,
                      const std::vector<sim::TaskId>& after) {
  if (pairs.empty()) pairs.push_back({c.hosts[0][0], c.hosts[0][0]});  // nothing to move
  const sim::TaskId id = c.graph.add_transfer(
      c.devices.at(0), c.stream, c.graph.add_comm_set(sim::CommSet{std::move(pairs)}), bytes, c.graph.label(label), -1);
  for (sim::TaskId a : after) c.graph.depend(a, id);
  return id;
}

class AllReduceSync : public SyncTopology {
 public:
  std::vector<sim::TaskId> emit(SyncContext& c, const std::vector<sim::TaskId>& ready) const override {
    sim::CommSet set;
    for (size_t k = 0; k < c.hosts[0].size(); ++k) {
      std::vector<int> ring;
      for (const auto& replica : c.hosts) ring.push_back(replica[k]);
      set.groups.push_back(ring);
    }
    const int d = static_cast<int>(c.hosts.size());
    // Sparse payloads cannot be summed on the way: every replica gathers all of them.
    const sim::CollectiveOp op = c.sparse ? sim::CollectiveOp::AllGather : sim::CollectiveOp::AllReduce;
    const sim::TaskId id =
        c.graph.add_collective(c.graph.add_participants(c.devices), c.stream, op, c.graph.add_comm_set(std::move(set)),
                               c.sparse ? c.bytes * d : c.bytes,
                               c.graph.label(c.sparse ? "dp gradient all-gather" : "dp gradient all-reduce"), -1);
    for (sim::TaskId a : ready) c.graph.depend(a, id);
    return {id};
  }
};

// Shard j is served by replica server(j); everyone else pushes to it and pulls from it.
std::vector<sim::TaskId> push_pull(SyncContext& c, const std::vector<sim::TaskId>& ready, int shards,
                                   int (*server)(int shard, int step, int replicas)) {
  const int d = static_cast<int>(c.hosts.size());
  std::vector<std::vector<int>> push, pull;
  for (int j = 0; j < shards; ++j) {
    const int srv = server(j, c.config.step, d);
    for (int r = 0; r < d; ++r) {
      if (r == srv) continue;
      for (size_t k = 0; k < c.hosts[r].size(); ++k) {
        push.push_back({c.hosts[r][k], c.hosts[srv][k]});
        pull.push_back({c.hosts[srv][k], c.hosts[r][k]});
      }
    }
  }
  const sim::TaskId up = transfers(c, push, c.bytes / shards, "push gradients to parameter servers", ready);
  const sim::TaskId down = transfers(c, pull, c.bytes / shards, "pull from parameter servers", {up});
  return {down};
}

class ParameterServerSync : public SyncTopology {
 public:
  bool takes_servers() const override { return true; }
  std::vector<sim::TaskId> emit(SyncContext& c, const std::vector<sim::TaskId>& ready) const override {
    return push_pull(c, ready, c.config.servers, [](int shard, int, int) { return shard; });
  }
};

class RollingParameterServerSync : public SyncTopology {
 public:
  std::vector<sim::TaskId> emit(SyncContext& c, const std::vector<sim::TaskId>& ready) const override {
    return push_pull(c, ready, static_cast<int>(c.hosts.size()),
                     [](int shard, int step, int replicas) { return (shard + step) % replicas; });
  }
};

class GossipSync : public SyncTopology {
 public:
  bool averages_exactly() const override { return false; }  // each replica averages with its peers only
  std::vector<sim::TaskId> emit(SyncContext& c, const std::vector<sim::TaskId>& ready) const override {
    const int d = static_cast<int>(c.hosts.size());
    std::mt19937_64 rng(c.config.seed * 1000003ULL + static_cast<unsigned long long>(c.config.step));
    std::vector<std::vector<int>> pairs;
    for (int r = 0; r < d; ++r) {
      std::vector<int> others;
      for (int o = 0; o < d; ++o)
        if (o != r) others.push_back(o);
      // A seeded partial Fisher-Yates draw: same seed and step, same partners.
      for (int i = 0; i < c.config.peers && i < static_cast<int>(others.size()); ++i) {
        std::uniform_int_distribution<size_t> pick(i, others.size() - 1);
        std::swap(others[i], others[pick(rng)]);
        for (size_t k = 0; k < c.hosts[r].size(); ++k) pairs.push_back({c.hosts[r][k], c.hosts[others[i]][k]});
      }
    }
    return {transfers(c, pairs, c.bytes, "gossip gradients to peers", ready)};
  }
};

}  // namespace

Registry<SyncTopology>& sync_topologies() {
  static Registry<SyncTopology> registry("sync topology");
  return registry;
}

void register_sync_topologies() {
  auto& r = sync_topologies();
  r.add("all-reduce", "every replica all-reduces (the collective algorithm decides how)",
        [] { return std::make_unique<AllReduceSync>(); });
  r.add("parameter-server", "push to and pull from `servers` shards on the first replicas",
        [] { return std::make_unique<ParameterServerSync>(); });
  r.add("rolling-parameter-server", "dp shards whose server role rotates every step",
        [] { return std::make_unique<RollingParameterServerSync>(); });
  r.add("gossip", "send to `peers` seeded-random partners each step and average",
        [] { return std::make_unique<GossipSync>(); });
}

Compression compress(const Plan::DataParallel& c, double bytes, sim::DType dtype,
                     const std::vector<std::pair<double, double>>& matrices) {
  return compressors().make(c.compression)->price({c.density, c.rank}, bytes, dtype, matrices);
}

}  // namespace dejavu::strategies
