// Hierarchical all-reduce over k GPUs in each of m servers (hosts grouped by their
// network locality, in group order): a ring reduce-scatter inside every server (k-1
// steps of S/k), a ring all-reduce of each S/k shard across the servers among the hosts
// of the same local rank (2(m-1) steps of S/(k·m)), a ring all-gather inside every server
// (k-1 steps of S/k). Servers and local ranks run concurrently. Only the middle phase
// crosses NICs: 2(m-1)·S/(k·m) bytes out of each host.
#include <map>

#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

class Hierarchical : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "hierarchical"; }

  bool supports(const Network& net, const std::vector<int>& g, CollectiveOp op) const override {
    if (op != CollectiveOp::AllReduce) return false;
    const auto servers = by_server(net, g);
    if (servers.size() < 2) return false;
    for (const auto& s : servers)
      if (s.size() != servers.front().size()) return false;
    return true;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (!supports(net, g, op))
      unsupported(name(), op, g.size(), "needs all_reduce over two or more servers with equal GPU counts");
    const auto servers = by_server(net, g);
    const int m = static_cast<int>(servers.size());
    const int k = static_cast<int>(servers.front().size());
    CommSchedule s;
    auto inner = [&] {  // k - 1 ring steps inside every server at once
      if (k < 2) return;
      auto& step = s.add_step(k - 1);
      for (const auto& hosts : servers)
        for (int i = 0; i < k; ++i) step.push_back({hosts[i], hosts[(i + 1) % k], S / k});
    };
    inner();
    auto& across = s.add_step(2 * (m - 1));
    for (int l = 0; l < k; ++l)
      for (int j = 0; j < m; ++j) across.push_back({servers[j][l], servers[(j + 1) % m][l], S / k / m});
    inner();
    return s;
  }

 private:
  static std::vector<std::vector<int>> by_server(const Network& net, const std::vector<int>& g) {
    std::map<int, size_t> index;
    std::vector<std::vector<int>> servers;
    for (int h : g) {
      auto [it, fresh] = index.emplace(net.node(h).locality, servers.size());
      if (fresh) servers.emplace_back();
      servers[it->second].push_back(h);
    }
    return servers;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical() { return std::make_unique<Hierarchical>(); }

}  // namespace dejavu::sim
