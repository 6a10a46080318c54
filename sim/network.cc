#include "sim/network.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

#include "sim/error.h"

namespace dejavu::sim {

namespace {
// Latencies within a femtosecond are equal, so hop count breaks the tie whatever order the
// sums were rounded in (1 + 3 us against 2 + 1 + 1 us).
constexpr double kSameLatency_s = 1e-15;
bool shorter(double latency, int hops, double than_latency, int than_hops) {
  return latency < than_latency - kSameLatency_s || (latency <= than_latency + kSameLatency_s && hops < than_hops);
}
}  // namespace

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

void Network::set_in_switch_reduction(int id, double bandwidth_Bps, double latency_s, int hosts) {
  Node& n = nodes_.at(static_cast<size_t>(id));
  if (n.is_host) throw ModelError("in-switch reduction on host " + n.name + ", not a switch");
  n.reduce_Bps = bandwidth_Bps;
  n.reduce_latency_s = latency_s;
  n.reduce_hosts = hosts;
  reduces_in_switch_ = true;
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
  component_.clear();
  switch_trees_.clear();
  has_hierarchy_ = false;
  hierarchy_ = {};
  return id;
}

// Components of the switch-only graph, each searched breadth first from its lowest node:
// the search's links are a spanning tree (up_link_, depth_), and the component is a tree
// when it has no other switch-to-switch link.
void Network::index_switch_components() const {
  component_.assign(nodes_.size(), -1);
  local_.assign(nodes_.size(), -1);
  up_link_.assign(nodes_.size(), -1);
  depth_.assign(nodes_.size(), 0);
  members_.clear();
  is_tree_.clear();
  for (size_t s = 0; s < nodes_.size(); ++s) {
    if (nodes_[s].is_host || component_[s] >= 0) continue;
    const int c = static_cast<int>(members_.size());
    std::vector<int>& m = members_.emplace_back();
    component_[s] = c;
    m.push_back(static_cast<int>(s));
    size_t switch_links = 0;  // each counted from both ends
    for (size_t head = 0; head < m.size(); ++head) {
      const int u = m[head];
      local_[u] = static_cast<int>(head);
      for (const Adjacent& e : adjacency_[u]) {
        if (nodes_[e.node].is_host) continue;
        ++switch_links;
        if (component_[e.node] >= 0) continue;
        component_[e.node] = c;
        up_link_[e.node] = e.link;
        depth_[e.node] = depth_[u] + 1;
        m.push_back(e.node);
      }
    }
    is_tree_.push_back(switch_links / 2 + 1 == m.size());
  }
}

double Network::switch_path(int a, int b, int& hops, std::vector<Hop>* path) const {
  if (!is_tree_[component_[a]]) {
    const SwitchTree& t = switch_tree(a);
    const int at_b = local_[b];
    hops = t.hops[at_b];
    if (path && t.pred[at_b] >= 0) {
      std::vector<Hop> back;
      for (int at = b; at != a;) {
        const Link& link = links_[t.pred[local_[at]]];
        const bool forward = link.b == at;
        back.push_back(Hop{t.pred[local_[at]], forward});
        at = forward ? link.a : link.b;
      }
      path->insert(path->end(), back.rbegin(), back.rend());
    }
    return t.latency[at_b];
  }
  // Climb from both ends to the common ancestor: a's side in order, b's side reversed.
  std::vector<Hop> up, down;
  auto climb = [&](int& x, std::vector<Hop>& out, bool toward_b) {
    const Link& l = links_[up_link_[x]];
    const int parent = l.a == x ? l.b : l.a;
    out.push_back(Hop{up_link_[x], toward_b ? l.a == x : l.a == parent});
    x = parent;
  };
  int x = a, y = b;
  while (depth_[x] > depth_[y]) climb(x, up, true);
  while (depth_[y] > depth_[x]) climb(y, down, false);
  while (x != y) {
    climb(x, up, true);
    climb(y, down, false);
  }
  double latency = 0;
  for (const Hop& h : up) latency += links_[h.link].latency_s;
  for (auto it = down.rbegin(); it != down.rend(); ++it) latency += links_[it->link].latency_s;
  hops = static_cast<int>(up.size() + down.size());
  if (path) {
    path->insert(path->end(), up.begin(), up.end());
    path->insert(path->end(), down.rbegin(), down.rend());
  }
  return latency;
}

// Dijkstra from `root` over its component's switches, with predecessor_links' order:
// latency, then hops, then node id.
const Network::SwitchTree& Network::switch_tree(int root) const {
  auto it = switch_trees_.find(root);
  if (it != switch_trees_.end()) return it->second;
  const size_t n = members_[component_[root]].size();
  SwitchTree t{std::vector<double>(n, std::numeric_limits<double>::infinity()),
               std::vector<int>(n, std::numeric_limits<int>::max()), std::vector<int>(n, -1)};
  using Key = std::tuple<double, int, int>;  // latency, hops, node
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> pq;
  t.latency[local_[root]] = 0;
  t.hops[local_[root]] = 0;
  pq.emplace(0.0, 0, root);
  while (!pq.empty()) {
    auto [d, h, u] = pq.top();
    pq.pop();
    if (d != t.latency[local_[u]] || h != t.hops[local_[u]]) continue;
    for (const Adjacent& e : adjacency_[u]) {
      if (nodes_[e.node].is_host) continue;
      const int v = local_[e.node];
      const double nd = d + links_[e.link].latency_s;
      if (shorter(nd, h + 1, t.latency[v], t.hops[v])) {
        t.latency[v] = nd;
        t.hops[v] = h + 1;
        t.pred[v] = e.link;
        pq.emplace(nd, h + 1, e.node);
      }
    }
  }
  return switch_trees_.emplace(root, std::move(t)).first->second;
}

// The best of: a direct link, or a first link to switch a, a's shortest path to switch b, a
// last link to dst; by latency, then hops, the first found in adjacency order on ties.
std::vector<Hop> Network::host_route(int src, int dst) const {
  if (component_.empty()) index_switch_components();
  double best_latency = std::numeric_limits<double>::infinity();
  int best_hops = std::numeric_limits<int>::max(), first = -1, last = -1, via = -1;
  auto consider = [&](double latency, int hops, int l1, int l2, int b) {
    if (shorter(latency, hops, best_latency, best_hops)) {
      best_latency = latency;
      best_hops = hops;
      first = l1;
      last = l2;
      via = b;
    }
  };
  for (const Adjacent& out : adjacency_[src]) {
    if (out.node == dst) consider(links_[out.link].latency_s, 1, out.link, -1, -1);
    if (nodes_[out.node].is_host) continue;
    for (const Adjacent& in : adjacency_[dst]) {
      if (nodes_[in.node].is_host || component_[in.node] != component_[out.node]) continue;
      int middle = 0;
      const double latency = switch_path(out.node, in.node, middle, nullptr);
      if (middle == std::numeric_limits<int>::max()) continue;
      consider(links_[out.link].latency_s + latency + links_[in.link].latency_s, middle + 2, out.link, in.link,
               in.node);
    }
  }
  if (first < 0) throw ModelError("no route from " + nodes_.at(src).name + " to " + nodes_.at(dst).name);
  auto hop_from = [&](int link, int from) { return Hop{link, links_[link].a == from}; };
  std::vector<Hop> hops = {hop_from(first, src)};
  if (last < 0) return hops;
  int middle = 0;
  switch_path(links_[first].a == src ? links_[first].b : links_[first].a, via, middle, &hops);
  hops.push_back(hop_from(last, via));
  return hops;
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
      if (shorter(nd, nh, lat[e.node], hops[e.node])) {
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
  if (src != dst && nodes_.at(src).is_host && nodes_.at(dst).is_host) {
    hops = host_route(src, dst);
  } else if (src != dst) {
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
