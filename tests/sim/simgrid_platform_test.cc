// The SimGrid platform a run builds routes every host pair as the Network does: read back
// from SimGrid itself (Host::route_to) on fat-tree presets laid out as a star zone, and on a
// network whose declared hierarchy disagrees with its routes (laid out flat instead).
#include "sim/simgrid_platform.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/fork_runner.h"
#include "sim/zone_routes.h"

namespace dejavu::sim {
namespace {

namespace sg = simgrid::s4u;

struct Seen {
  bool zoned = false;
  int pairs = 0, mismatches = 0;
};

// In a child (SimGrid runs once per process): the platform for every ordered host pair, and
// each pair's route as SimGrid resolves it against the Network's (link names and directions).
Seen routes_in_simgrid(const Network& net) {
  const Result r = run_in_child([&] {
    int argc = 2;
    char a0[] = "test", a1[] = "--log=root.thresh:critical";
    char* argv[] = {a0, a1, nullptr};
    sg::Engine e(&argc, argv);
    e.set_config("network/model:CM02");
    std::set<std::pair<int, int>> pairs;
    std::vector<char> hosts(net.node_count(), 0);
    for (int a = 0; a < net.node_count(); ++a)
      for (int b = 0; b < net.node_count(); ++b)
        if (a != b && net.node(a).is_host && net.node(b).is_host) pairs.emplace(a, b), hosts[a] = hosts[b] = 1;
    const SimGridPlatform platform(net, {}, hosts, pairs);
    Result out;
    out.makespan_s = platform.zoned();
    for (auto [a, b] : pairs) {
      std::vector<sg::Link*> links;
      double latency = 0;
      platform.host(a)->route_to(platform.host(b), links, &latency);
      std::string seen, want;
      for (const sg::Link* l : links) seen += l->get_name() + " ";
      for (const Hop& h : net.route(a, b)) want += net.link(h.link).name + (h.forward ? "_UP " : "_DOWN ");
      out.link_bytes.push_back(seen == want && std::abs(latency - net.path_cost(a, b).latency_s) < 1e-15 ? 0 : 1);
    }
    return out;
  });
  Seen s{r.makespan_s > 0, static_cast<int>(r.link_bytes.size()), 0};
  for (double m : r.link_bytes) s.mismatches += m > 0;
  return s;
}

platforms::Cluster cluster(const std::string& yaml) {
  return platforms::load_cluster(ConfigNode::load_string(yaml, "test.yaml"));
}

TEST(SimGridPlatform, FatTreePresetsRouteAsTheNetworkInOneStarZone) {
  for (const char* preset : {"dgx-a100-4x8", "mixed-a100-h100-2x8", "pcie-l4-2x4"}) {
    SCOPED_TRACE(preset);
    const auto c =
        platforms::load_cluster_file(std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/" + preset + ".yaml");
    ASSERT_NE(c.network.hierarchy(), nullptr);
    const Seen s = routes_in_simgrid(c.network);
    EXPECT_TRUE(s.zoned);
    EXPECT_EQ(s.pairs, c.gpu_count() * (c.gpu_count() - 1));
    EXPECT_EQ(s.mismatches, 0);
  }
}

TEST(SimGridPlatform, LeavesOfSeveralServersRouteAsTheNetwork) {
  // Three servers a leaf, a 2:1 spine: pairs inside a leaf cross no uplink.
  const auto c = cluster(
      "servers:\n"
      "  - count: 6\n"
      "    gpu: H100-SXM-80GB\n"
      "    gpus_per_server: 2\n"
      "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
      "    nic: {bandwidth: 400 Gbps, latency: 2 us}\n"
      "network: {kind: leaf-spine, latency: 1 us, oversubscription: 2, servers_per_leaf: 3}\n");
  ASSERT_EQ(c.network.hierarchy()->leaves.size(), 2u);
  const Seen s = routes_in_simgrid(c.network);
  EXPECT_TRUE(s.zoned);
  EXPECT_EQ(s.mismatches, 0);
}

TEST(SimGridPlatform, RailsDeclareNoHierarchy) {
  const auto c = platforms::load_cluster_file(std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/h100-rail-8x8.yaml");
  EXPECT_EQ(c.network.hierarchy(), nullptr);
}

TEST(SimGridPlatform, AHierarchyThatDisagreesWithTheRoutesIsLaidOutFlat) {
  // Two hosts joined directly, and each by a slower way to a leaf switch each: route() takes
  // the direct link, the declared hierarchy would climb to the spine.
  Network net;
  const int spine = net.add_switch("spine"), l0 = net.add_switch("leaf0"), l1 = net.add_switch("leaf1");
  const int a = net.add_host("a", 0), b = net.add_host("b", 1);
  const int na = net.add_link("a-nic", a, l0, 1e9, 1e-6), nb = net.add_link("b-nic", b, l1, 1e9, 1e-6);
  const int u0 = net.add_link("leaf0-up", l0, spine, 1e9, 1e-6), u1 = net.add_link("leaf1-up", l1, spine, 1e9, 1e-6);
  net.add_link("a-b", a, b, 1e9, 1e-7);
  Hierarchy h;
  h.leaves = {{{a}, u0}, {{b}, u1}};
  h.up.resize(net.node_count());
  h.up[a] = {{na, true}};
  h.up[b] = {{nb, true}};
  net.set_hierarchy(h);
  EXPECT_FALSE(ZoneRoutes(net).agree({{a, b}}));
  const Seen s = routes_in_simgrid(net);
  EXPECT_FALSE(s.zoned);
  EXPECT_EQ(s.mismatches, 0);
}

}  // namespace
}  // namespace dejavu::sim
