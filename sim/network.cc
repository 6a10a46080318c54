#include "sim/network.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

#include "sim/error.h"

namespace dejavu::sim {

int Network::add_host(const std::string& name, int locality, double step_latency_s) {
  nodes_.push_back(Node{name, true, locality, step_latency_s});
  adjacency_.emplace_back();
  return node_count() - 1;
}

int Network::add_switch(const std::string& name) {
  nodes_.push_back(Node{name, false, -1, 0});
  adjacency_.emplace_back();
  return node_count() - 1;
}

int Network::add_link(const std::string& name, int a, int b, double bandwidth_Bps, double latency_s) {
  if (a < 0 || b < 0 || a >= node_count() || b >= node_count() || a == b)
    throw ModelError("link " + name + " joins invalid nodes");
  if (!(bandwidth_Bps > 0)) throw ModelError("link " + name + " has no bandwidth");
  links_.push_back(Link{name, a, b, bandwidth_Bps, latency_s});
  const int id = link_count() - 1;
  adjacency_[a].push_back({b, id});
  adjacency_[b].push_back({a, id});
  pred_cache_.clear();
  route_cache_.clear();
  return id;
}

const std::vector<int>& Network::predecessor_links(int src) const {
  auto it = pred_cache_.find(src);
  if (it != pred_cache_.end()) return it->second;
  const double inf = std::numeric_limits<double>::infinity();
  using Key = std::tuple<double, int, int>;  // latency, hops, node
  std::vector<double> lat(nodes_.size(), inf);
  std::vector<int> hops(nodes_.size(), std::numeric_limits<int>::max());
  std::vector<int> pred(nodes_.size(), -1);
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> pq;
  lat[src] = 0;
  hops[src] = 0;
  pq.emplace(0.0, 0, src);
  while (!pq.empty()) {
    auto [d, h, u] = pq.top();
    pq.pop();
    if (d != lat[u] || h != hops[u]) continue;
    if (u != src && nodes_[u].is_host) continue;  // hosts do not forward
    for (const Adjacent& e : adjacency_[u]) {
      const double nd = d + links_[e.link].latency_s;
      const int nh = h + 1;
      if (nd < lat[e.node] || (nd == lat[e.node] && nh < hops[e.node])) {
        lat[e.node] = nd;
        hops[e.node] = nh;
        pred[e.node] = e.link;
        pq.emplace(nd, nh, e.node);
      }
    }
  }
  return pred_cache_.emplace(src, std::move(pred)).first->second;
}

void Network::check_hosts_reach(int hub) const {
  std::vector<char> seen(nodes_.size(), 0);
  std::vector<int> stack = {hub};
  seen[hub] = 1;
  while (!stack.empty()) {
    const int u = stack.back();
    stack.pop_back();
    for (const Adjacent& e : adjacency_[u]) {
      if (seen[e.node]) continue;
      seen[e.node] = 1;
      if (!nodes_[e.node].is_host) stack.push_back(e.node);  // hosts do not forward
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].is_host && !seen[i])
      throw ModelError("host " + nodes_[i].name + " cannot reach " + nodes_[hub].name +
                       ": the platform leaves it unconnected");
}

const std::vector<Hop>& Network::route(int src, int dst) const {
  const int64_t key = static_cast<int64_t>(src) * (1LL << 32) + dst;
  auto it = route_cache_.find(key);
  if (it != route_cache_.end()) return it->second;
  std::vector<Hop> hops;
  if (src != dst) {
    const std::vector<int>& pred = predecessor_links(src);
    int at = dst;
    while (at != src) {
      const int l = pred.at(at);
      if (l < 0) throw ModelError("no route from " + nodes_.at(src).name + " to " + nodes_.at(dst).name);
      const Link& link = links_[l];
      const bool forward = link.b == at;
      hops.push_back(Hop{l, forward});
      at = forward ? link.a : link.b;
    }
    std::reverse(hops.begin(), hops.end());
  }
  return route_cache_.emplace(key, std::move(hops)).first->second;
}

PathCost Network::path_cost(int src, int dst) const {
  PathCost c;
  c.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (const Hop& h : route(src, dst)) {
    c.latency_s += links_[h.link].latency_s;
    c.bottleneck_Bps = std::min(c.bottleneck_Bps, links_[h.link].bandwidth_Bps);
  }
  return c;
}

}  // namespace dejavu::sim
