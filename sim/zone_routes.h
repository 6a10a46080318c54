// Routes as SimGrid's zones give them, for a network whose builder declared how its hosts
// nest (sim::Hierarchy). The SimGrid engine lays such a network out as one star zone
// (SimGrid's cluster zone) of its hosts: each host reaches the centre over its links up to
// its leaf switch and then its leaf's uplink to the spine; a route between two hosts is the
// sender's way up and the receiver's way down, resolved by SimGrid from what each host holds
// (memory linear in GPUs, no table of host pairs). Two hosts under one leaf switch do not
// climb to the spine: their routes (NVLink inside a server, the two NICs across servers of
// one leaf) are bypass routes, exactly the network's own, for the pairs a run uses.
//
// One zone, not one per leaf: SimGrid 3.32 looks a new host or link name up in every zone
// and lists every host of the platform when it seals a zone, so building a zone per leaf
// grows with leaves x GPUs (docs/ARCHITECTURE.md has the measurement). export-platform
// writes a zone per leaf (platforms/simgrid_xml.h) from the same hierarchy.
//
// On the fat-trees platforms/ builds these are route()'s routes unless latencies make a
// longer way shorter; the engine uses the zone only where every route it needs agrees.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "sim/network.h"

namespace dejavu::sim {

class ZoneRoutes {
 public:
  explicit ZoneRoutes(const Network& net);  // net.hierarchy() must not be null

  int leaf_of(int host) const { return leaf_.at(static_cast<size_t>(host)); }  // -1: in no leaf
  bool same_leaf(int a, int b) const { return leaf_of(a) >= 0 && leaf_of(a) == leaf_of(b); }
  // A host's way to the spine: its links up to its leaf switch, then the leaf's uplink.
  std::vector<Hop> up(int host) const;
  std::vector<Hop> down(int host) const;  // the way up reversed
  // The route the zone gives from host a to host b.
  std::vector<Hop> route(int a, int b) const;
  // Whether route(a, b) is the network's route for every pair.
  bool agree(const std::set<std::pair<int, int>>& pairs) const;

 private:
  const Network& net_;
  const Hierarchy& h_;
  std::vector<int> leaf_;  // per node: its leaf (-1: not a declared host)
};

}  // namespace dejavu::sim
