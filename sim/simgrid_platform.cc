#include "sim/simgrid_platform.h"

#include <simgrid/kernel/ProfileBuilder.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/zone_routes.h"

namespace dejavu::sim {

namespace sg = simgrid::s4u;

namespace {

// A piecewise-constant profile from windows: value scale x factor (state: 0 or 1).
simgrid::kernel::profile::Profile* profile(const std::string& name, const std::vector<Window>& windows, double scale,
                                           bool state) {
  std::set<double> edges{0.0};
  for (const Window& w : windows) {
    edges.insert(w.from_s);
    if (std::isfinite(w.to_s)) edges.insert(w.to_s);
  }
  std::string text;
  for (double t : edges) {
    const double f = Faults::factor_at(windows, t);
    const double value = state ? (f > 0 ? 1 : 0) : scale * std::max(f, 1e-9);
    char line[96];
    std::snprintf(line, sizeof line, "%.17g %.17g\n", t, value);
    text += line;
  }
  return simgrid::kernel::profile::ProfileBuilder::from_string(name, text, -1);
}

}  // namespace

SimGridPlatform::SimGridPlatform(const Network& net, const Faults& faults, const std::vector<char>& hosts,
                                 const std::set<std::pair<int, int>>& pairs)
    : net_(net), faults_(faults), host_(net.node_count(), nullptr), link_(2 * net.link_count(), nullptr) {
  zoned_ = net.hierarchy() != nullptr && ZoneRoutes(net).agree(pairs);
  if (zoned_)
    build_zoned(hosts, pairs);
  else
    build_flat(hosts, pairs);
}

sg::Host* SimGridPlatform::make_host(sg::NetZone* zone, int node) {
  const std::string& name = net_.node(node).name;
  sg::Host* h = zone->create_host(name, kSimGridHostSpeed);
  // Faults as SimGrid's own profiles: a straggler's speed factor, a fail-stop's state.
  if (auto it = faults_.host_speed.find(node); it != faults_.host_speed.end())
    h->set_speed_profile(profile("speed-" + name, it->second, 1, false));
  if (auto it = faults_.host_fail_s.find(node); it != faults_.host_fail_s.end())
    h->set_state_profile(profile("state-" + name, {Window{it->second, INFINITY, 0}}, 1, true));
  return h->seal();
}

// A full-duplex link is two SimGrid links, one per direction, each with its own profiles
// (3.32's split-duplex links mishandle a state profile: "Unknown event!").
sg::Link* SimGridPlatform::link(int direction) {
  const int id = direction / 2;
  if (!link_[static_cast<size_t>(direction)]) {
    const Link& l = net_.link(id);
    for (int dir = 0; dir < 2; ++dir) {
      const std::string name = l.name + (dir == 0 ? "_UP" : "_DOWN");
      sg::Link* link = links_zone_->create_link(name, l.bandwidth_Bps)->set_latency(l.latency_s);
      if (auto it = faults_.link_bandwidth.find(id); it != faults_.link_bandwidth.end()) {
        // Bandwidth profiles are absolute (SIMGRID.md); a factor of 0 is the link down.
        link->set_bandwidth_profile(profile("bw-" + name, it->second, l.bandwidth_Bps, false));
        bool down = false;
        for (const Window& w : it->second) down = down || w.factor <= 0;
        if (down) link->set_state_profile(profile("state-" + name, it->second, 1, true));
      }
      link_[2 * static_cast<size_t>(id) + dir] = link->seal();
    }
  }
  return link_[static_cast<size_t>(direction)];
}

std::vector<sg::LinkInRoute> SimGridPlatform::links(const std::vector<Hop>& hops) {
  std::vector<sg::LinkInRoute> out;
  for (const Hop& h : hops) out.emplace_back(link(2 * h.link + (h.forward ? 0 : 1)));
  return out;
}

void SimGridPlatform::build_flat(const std::vector<char>& hosts, const std::set<std::pair<int, int>>& pairs) {
  sg::NetZone* zone = sg::create_full_zone("dejavu");
  links_zone_ = zone;
  for (int i = 0; i < net_.node_count(); ++i)
    if (hosts[static_cast<size_t>(i)]) host_[static_cast<size_t>(i)] = make_host(zone, i);
  for (auto [a, b] : pairs)
    zone->add_route(host(a)->get_netpoint(), host(b)->get_netpoint(), nullptr, nullptr, links(net_.route(a, b)), false);
  zone->seal();
}

void SimGridPlatform::build_zoned(const std::vector<char>& hosts, const std::set<std::pair<int, int>>& pairs) {
  const ZoneRoutes zr(net_);
  sg::NetZone* zone = sg::create_star_zone("dejavu");
  links_zone_ = zone;
  for (int i = 0; i < net_.node_count(); ++i)
    if (hosts[static_cast<size_t>(i)]) host_[static_cast<size_t>(i)] = make_host(zone, i);
  // A host's way up or down is given only if a route of the run takes it.
  std::vector<char> up(host_.size(), 0), down(host_.size(), 0);
  for (auto [a, b] : pairs) {
    if (zr.same_leaf(a, b)) {
      zone->add_bypass_route(host(a)->get_netpoint(), host(b)->get_netpoint(), nullptr, nullptr,
                             links(net_.route(a, b)));
    } else {
      up[static_cast<size_t>(a)] = down[static_cast<size_t>(b)] = 1;
    }
  }
  for (int i = 0; i < net_.node_count(); ++i) {
    if (up[static_cast<size_t>(i)])
      zone->add_route(host(i)->get_netpoint(), nullptr, nullptr, nullptr, links(zr.up(i)), false);
    if (down[static_cast<size_t>(i)])
      zone->add_route(nullptr, host(i)->get_netpoint(), nullptr, nullptr, links(zr.down(i)), false);
  }
  zone->seal();
}

}  // namespace dejavu::sim
