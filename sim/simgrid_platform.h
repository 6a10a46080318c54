// The SimGrid platform one run needs, built from the Network: only the hosts it names and
// the links its routes cross (each full-duplex link as two SimGrid links, one per direction,
// with the run's fault profiles), routed by a star zone where the network declares how its
// hosts nest and every route needed agrees (sim/zone_routes.h), else by one Full zone that
// lists the routes of the host pairs used (its table grows with the square of the hosts).
#pragma once

#include <simgrid/s4u.hpp>

#include <set>
#include <utility>
#include <vector>

#include "sim/faults.h"
#include "sim/network.h"

namespace dejavu::sim {

constexpr double kSimGridHostSpeed = 1e9;  // flop/s: a compute task of d seconds is d·1e9 flops

class SimGridPlatform {
 public:
  // `hosts`: per node, whether the run needs it as a SimGrid host; `pairs`: the host pairs
  // its flows use. Call after the SimGrid engine is configured, once per process.
  SimGridPlatform(const Network& net, const Faults& faults, const std::vector<char>& hosts,
                  const std::set<std::pair<int, int>>& pairs);

  simgrid::s4u::Host* host(int node) const { return host_.at(static_cast<size_t>(node)); }  // null: not built
  bool zoned() const { return zoned_; }

 private:
  void build_flat(const std::vector<char>& hosts, const std::set<std::pair<int, int>>& pairs);
  void build_zoned(const std::vector<char>& hosts, const std::set<std::pair<int, int>>& pairs);
  simgrid::s4u::Host* make_host(simgrid::s4u::NetZone* zone, int node);
  // Network link direction (2·link + reverse) as a SimGrid link, both directions created
  // in `links_zone_` on first use.
  simgrid::s4u::Link* link(int direction);
  std::vector<simgrid::s4u::LinkInRoute> links(const std::vector<Hop>& hops);

  const Network& net_;
  const Faults& faults_;
  simgrid::s4u::NetZone* links_zone_ = nullptr;
  std::vector<simgrid::s4u::Host*> host_;
  std::vector<simgrid::s4u::Link*> link_;
  bool zoned_ = false;
};

}  // namespace dejavu::sim
