// Ring: host i sends to host i+1 (group order, which lowering makes follow servers).
// All-reduce is 2(n-1) steps of S/n (reduce-scatter then all-gather); reduce-scatter and
// all-gather n-1 steps. Broadcast and reduce run the ring as a chain from / to the first
// host, pipelined in c chunks: n-1+c-1 steps of S/c.
//
// Channels, as NCCL runs them: when the group spans servers with k of its GPUs in each,
// k rings run at once, each with S/k, and ring j enters every server at its j-th GPU, so
// each ring leaves a server through a different GPU and NIC. Inside a server the rings add
// up to the same NVLink traffic as one ring; across servers they use k NICs, not one.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "sim/collectives/algorithms.h"
#include "sim/error.h"

namespace dejavu::sim {

int pipeline_chunks(double bytes) {
  return static_cast<int>(std::clamp(std::ceil(bytes / (4.0 * 1048576)), 1.0, 64.0));
}

void unsupported(const std::string& algorithm, CollectiveOp op, size_t n, const std::string& why) {
  throw Error("collective algorithm " + algorithm + " cannot run " + to_string(op) + " over " + std::to_string(n) +
              " GPUs: " + why);
}

namespace {

class Ring : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "ring"; }
  bool yields_to_switch() const override { return true; }

  bool supports(const Network&, const std::vector<int>&, CollectiveOp op) const override {
    return op != CollectiveOp::AllToAll;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (!supports(net, g, op)) unsupported(name(), op, g.size(), "use direct for all_to_all");
    const int n = static_cast<int>(g.size());
    CommSchedule s;
    if (n <= 1) return s;
    if (op == CollectiveOp::SendRecv) {  // every host to its successor, at once
      auto& step = s.add_step();
      for (int i = 0; i < n; ++i) step.push_back({g[i], g[(i + 1) % n], S});
      return s;
    }
    if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
      const int c = pipeline_chunks(S);
      for (int k = 0; k < n - 1 + c - 1; ++k) {
        auto& step = s.add_step();
        for (int j = 0; j < n - 1; ++j) {
          const int chunk = k - j;
          if (chunk < 0 || chunk >= c) continue;
          if (op == CollectiveOp::Broadcast)
            step.push_back({g[j], g[j + 1], S / c});
          else
            step.push_back({g[n - 1 - j], g[n - 2 - j], S / c});
        }
      }
      return s;
    }
    s.add_step(steps(op, n)) = one_step(net, g, S);  // the steps are all alike
    return s;
  }

 private:
  static int steps(CollectiveOp op, int n) { return op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1; }
  // One step of every channel: each host passes S/(n·channels) to its ring successor.
  // Channels share most hops (a rotation keeps i -> i+1 inside a server), and transfers
  // between the same two hosts in one step travel together: they are merged into one.
  static std::vector<Transfer> one_step(const Network& net, const std::vector<int>& g, double S) {
    const int n = static_cast<int>(g.size());
    const auto rings = channels(net, g);
    std::vector<Transfer> step;
    std::map<std::pair<int, int>, size_t> index;
    const double bytes = S / n / static_cast<double>(rings.size());
    for (const auto& ring : rings)
      for (int i = 0; i < n; ++i) {
        const auto key = std::make_pair(ring[i], ring[(i + 1) % n]);
        auto [it, fresh] = index.emplace(key, step.size());
        if (fresh)
          step.push_back({key.first, key.second, bytes});
        else
          step[it->second].bytes += bytes;
      }
    return step;
  }

  static std::vector<std::vector<int>> channels(const Network& net, const std::vector<int>& g) {
    std::unordered_map<int, size_t> index;  // locality -> its place in servers
    std::vector<std::vector<int>> servers;
    for (int h : g) {
      auto [it, fresh] = index.emplace(net.node(h).locality, servers.size());
      if (fresh) servers.emplace_back();
      servers[it->second].push_back(h);
    }
    const size_t k = servers.front().size();
    bool uniform = servers.size() >= 2 && net.node(g.front()).locality >= 0;
    for (const auto& s : servers) uniform = uniform && s.size() == k;
    if (!uniform || k == 1) return {g};
    std::vector<std::vector<int>> rings(k);
    for (size_t ch = 0; ch < k; ++ch)
      for (const auto& s : servers)
        for (size_t i = 0; i < k; ++i) rings[ch].push_back(s[(ch + i) % k]);
    return rings;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace dejavu::sim
