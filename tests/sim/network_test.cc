#include "sim/network.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "sim/error.h"

namespace dejavu::sim {

TEST(Network, RoutesNeverPassThroughAHost) {
  // a - b - c in a line of hosts: b is a GPU, it must not forward a's traffic to c.
  Network net;
  const int a = net.add_host("a"), b = net.add_host("b"), c = net.add_host("c");
  net.add_link("ab", a, b, 1e9, 1e-6);
  net.add_link("bc", b, c, 1e9, 1e-6);
  EXPECT_EQ(net.route(a, b).size(), 1u);
  EXPECT_THROW(net.route(a, c), ModelError);
}

TEST(Network, PicksLowestLatencyAndReportsBottleneck) {
  Network net;
  const int a = net.add_host("a"), b = net.add_host("b");
  const int fast = net.add_switch("fast"), slow = net.add_switch("slow");
  net.add_link("a-fast", a, fast, 100e9, 1e-6);
  net.add_link("fast-b", fast, b, 50e9, 1e-6);
  net.add_link("a-slow", a, slow, 400e9, 5e-6);
  net.add_link("slow-b", slow, b, 400e9, 5e-6);
  const PathCost c = net.path_cost(a, b);
  EXPECT_DOUBLE_EQ(c.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(c.bottleneck_Bps, 50e9);
  const auto& r = net.route(b, a);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(net.link(r[0].link).name, "fast-b");
  EXPECT_FALSE(r[0].forward);  // b -> fast crosses "fast-b" against its a->b orientation
}

TEST(Network, AcrossLeavesTheRouteClimbsToTheSpineAndDown) {
  // Two servers under their own leaves: gpu -> nic -> leaf0 -> spine -> leaf1 -> gpu, each
  // link crossed in its direction; within a server, through its NVSwitch (cheaper than the
  // leaf) rather than out and back in.
  Network net;
  const int g0 = net.add_host("s0/gpu0"), g1 = net.add_host("s0/gpu1"), h0 = net.add_host("s1/gpu0");
  const int nv = net.add_switch("s0/nvswitch"), leaf0 = net.add_switch("leaf0"), leaf1 = net.add_switch("leaf1");
  const int spine = net.add_switch("spine");
  net.add_link("g0-nv", g0, nv, 300e9, 0.5e-6);
  net.add_link("g1-nv", g1, nv, 300e9, 0.5e-6);
  net.add_link("g0-nic", g0, leaf0, 25e9, 1e-6);
  net.add_link("g1-nic", g1, leaf0, 25e9, 1e-6);
  net.add_link("h0-nic", h0, leaf1, 25e9, 1e-6);
  net.add_link("leaf0-up", leaf0, spine, 50e9, 0.5e-6);
  net.add_link("leaf1-up", leaf1, spine, 50e9, 0.5e-6);
  auto names = [&](int a, int b) {
    std::string out;
    for (const Hop& h : net.route(a, b)) out += net.link(h.link).name + (h.forward ? "> " : "< ");
    return out;
  };
  EXPECT_EQ(names(g1, h0), "g1-nic> leaf0-up> leaf1-up< h0-nic< ");
  EXPECT_EQ(names(h0, g0), "h0-nic> leaf1-up> leaf0-up< g0-nic< ");
  EXPECT_EQ(names(g0, g1), "g0-nv> g1-nv< ");
  EXPECT_DOUBLE_EQ(net.path_cost(g1, h0).latency_s, 3e-6);
}

// Host routes against a plain O(V^2) Dijkstra written here: on random graphs of hosts and
// switches (hosts never forward), every route has the least latency, and among those the
// fewest hops, and it is a connected walk from source to destination. Half the trials join
// the switches as a random tree (every fabric dejavu builds is one), half at random.
TEST(Network, HostRoutesAreShortestOnRandomGraphs) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 80; ++trial) {
    Network net;
    const int hosts = 6, switches = 5;
    for (int i = 0; i < hosts; ++i) net.add_host("h" + std::to_string(i));
    for (int i = 0; i < switches; ++i) net.add_switch("s" + std::to_string(i));
    std::uniform_int_distribution<int> node(0, hosts + switches - 1), lat(1, 4), sw(hosts, hosts + switches - 1);
    if (trial % 2 == 0) {
      for (int k = 0; k < 16; ++k) {
        const int a = node(rng), b = node(rng);
        if (a != b) net.add_link("l" + std::to_string(k), a, b, 1e9, lat(rng) * 1e-6);
      }
    } else {
      for (int s = 1; s < switches; ++s)
        net.add_link("t" + std::to_string(s), hosts + s, hosts + static_cast<int>(rng() % s), 1e9, lat(rng) * 1e-6);
      for (int k = 0; k < 2 * hosts; ++k)
        net.add_link("h" + std::to_string(k), k % hosts, sw(rng), 1e9, lat(rng) * 1e-6);
    }
    for (int src = 0; src < hosts; ++src) {
      // Reference: (latency, hops) from src, hosts other than src not expanded.
      const int n = net.node_count();
      std::vector<double> d(n, std::numeric_limits<double>::infinity());
      std::vector<int> hops(n, 1 << 30);
      std::vector<char> done(n, 0);
      d[src] = 0;
      hops[src] = 0;
      for (int it = 0; it < n; ++it) {
        int u = -1;
        for (int v = 0; v < n; ++v)
          if (!done[v] && d[v] < std::numeric_limits<double>::infinity() &&
              (u < 0 || d[v] < d[u] || (d[v] == d[u] && hops[v] < hops[u])))
            u = v;
        if (u < 0) break;
        done[u] = 1;
        if (u != src && net.node(u).is_host) continue;
        for (const Link& l : net.links()) {
          if (l.a != u && l.b != u) continue;
          const int v = l.a == u ? l.b : l.a;
          const double nd = d[u] + l.latency_s;
          if (nd < d[v] - 1e-15 || (std::abs(nd - d[v]) <= 1e-15 && hops[u] + 1 < hops[v])) {
            d[v] = nd;
            hops[v] = hops[u] + 1;
          }
        }
      }
      for (int dst = 0; dst < hosts; ++dst) {
        if (dst == src) continue;
        if (!(d[dst] < std::numeric_limits<double>::infinity())) {
          EXPECT_THROW(net.route(src, dst), ModelError);
          continue;
        }
        const auto& r = net.route(src, dst);
        int at = src;
        for (const Hop& h : r) {
          const Link& l = net.link(h.link);
          ASSERT_EQ(h.forward ? l.a : l.b, at);
          at = h.forward ? l.b : l.a;
          if (at != dst) {
            EXPECT_FALSE(net.node(at).is_host);
          }
        }
        EXPECT_EQ(at, dst);
        EXPECT_NEAR(net.path_cost(src, dst).latency_s, d[dst], 1e-12) << trial << " " << src << "->" << dst;
        EXPECT_EQ(static_cast<int>(r.size()), hops[dst]) << trial << " " << src << "->" << dst;
      }
    }
  }
}

TEST(Network, AHostThatCannotReachTheSpineIsNamed) {
  Network net;
  const int spine = net.add_switch("spine");
  const int a = net.add_host("a"), b = net.add_host("b");
  net.add_link("a-spine", a, spine, 1e9, 0);
  (void)b;  // never linked
  try {
    net.check_hosts_reach(spine);
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "host b cannot reach spine: the platform leaves it unconnected");
  }
}

}  // namespace dejavu::sim
