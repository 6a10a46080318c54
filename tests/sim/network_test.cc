#include "sim/network.h"

#include <gtest/gtest.h>

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
