#include "sim/zone_routes.h"

#include "sim/error.h"

namespace dejavu::sim {

ZoneRoutes::ZoneRoutes(const Network& net) : net_(net), h_(*net.hierarchy()), leaf_(net.node_count(), -1) {
  for (size_t l = 0; l < h_.leaves.size(); ++l)
    for (int host : h_.leaves[l].hosts) leaf_.at(static_cast<size_t>(host)) = static_cast<int>(l);
}

std::vector<Hop> ZoneRoutes::up(int host) const {
  if (leaf_of(host) < 0) throw ModelError("host " + net_.node(host).name + " is in no leaf of the declared hierarchy");
  std::vector<Hop> out = h_.up.at(static_cast<size_t>(host));
  const int uplink = h_.leaves[static_cast<size_t>(leaf_of(host))].uplink;
  if (uplink >= 0) out.push_back(Hop{uplink, true});
  return out;
}

std::vector<Hop> ZoneRoutes::down(int host) const {
  const std::vector<Hop> way = up(host);
  std::vector<Hop> out;
  for (auto it = way.rbegin(); it != way.rend(); ++it) out.push_back(Hop{it->link, !it->forward});
  return out;
}

std::vector<Hop> ZoneRoutes::route(int a, int b) const {
  if (a == b) return {};
  if (same_leaf(a, b)) return net_.route(a, b);
  std::vector<Hop> out = up(a);
  const std::vector<Hop> tail = down(b);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

bool ZoneRoutes::agree(const std::set<std::pair<int, int>>& pairs) const {
  for (const auto& [a, b] : pairs) {
    if (leaf_of(a) < 0 || leaf_of(b) < 0) return false;
    const std::vector<Hop> zoned = route(a, b);
    const std::vector<Hop>& own = net_.route(a, b);
    if (zoned.size() != own.size()) return false;
    for (size_t i = 0; i < own.size(); ++i)
      if (zoned[i].link != own[i].link || zoned[i].forward != own[i].forward) return false;
  }
  return true;
}

}  // namespace dejavu::sim
