// Which comm sets' groups may be played once: hand-built networks where the answer is
// plain from the picture.
#include "sim/flow_symmetry.h"

#include <gtest/gtest.h>

namespace dejavu::sim {
namespace {

// Four senders x0..x3 to four receivers y0..y3, each over its own two links through one
// switch; `slow` makes the link of sender 3 slower.
Network star(double slow = 1) {
  Network net;
  const int sw = net.add_switch("switch");
  for (int i = 0; i < 4; ++i) {
    const int x = net.add_host("x" + std::to_string(i)), y = net.add_host("y" + std::to_string(i));
    net.add_link("x" + std::to_string(i), x, sw, i == 3 ? 10e9 * slow : 10e9, 1e-6);
    net.add_link("y" + std::to_string(i), y, sw, 10e9, 1e-6);
  }
  return net;
}
int x(int i) { return 1 + 2 * i; }
int y(int i) { return 2 + 2 * i; }

// One transfer per pair, each pair a group.
struct Shape {
  Expansion exp;
  std::vector<int32_t> group_begin;
  Shape(const std::vector<std::pair<int, int>>& pairs, double bytes) {
    for (auto [a, b] : pairs) {
      group_begin.push_back(static_cast<int32_t>(exp.flows.size()));
      exp.flows.push_back(FlowSpec{a, b, bytes, 0, 0});
    }
    group_begin.push_back(static_cast<int32_t>(exp.flows.size()));
  }
  GroupedFlows of(int set) const { return {set, &exp, &group_begin}; }
};

TEST(FlowSymmetry, GroupsOnTheirOwnAlikeLinksPlayOnce) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(1), y(1)}, {x(2), y(2)}}, 1e6);
  EXPECT_EQ(symmetric_comm_sets(net, {}, {s.of(0)}, 1), std::vector<char>{1});
}

TEST(FlowSymmetry, GroupsSharingALinkDoNot) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(0), y(1)}}, 1e6);  // both leave through x0's link
  EXPECT_EQ(symmetric_comm_sets(net, {}, {s.of(0)}, 1), std::vector<char>{0});
}

TEST(FlowSymmetry, AGroupOnASlowerLinkDoesNot) {
  const Network net = star(0.5);
  const Shape s({{x(0), y(0)}, {x(3), y(3)}}, 1e6);
  EXPECT_EQ(symmetric_comm_sets(net, {}, {s.of(0)}, 1), std::vector<char>{0});
}

TEST(FlowSymmetry, AnotherSetOnOneGroupsLinkStopsIt) {
  // Set 0's groups are alike and apart, but set 1 sends over y1's link, which only the
  // second group of set 0 crosses: that group would be slowed, the first not.
  const Network net = star();
  const Shape a({{x(0), y(0)}, {x(1), y(1)}}, 1e6), b({{x(2), y(1)}, {x(3), y(3)}}, 1e6);
  EXPECT_EQ(symmetric_comm_sets(net, {}, {a.of(0), b.of(1)}, 2), (std::vector<char>{0, 0}));
}

TEST(FlowSymmetry, TwoShapesOfOneSetMustAgreeOnWhichLinksTheyShare) {
  // Shape 1 of the set sends y->x, shape 2 x->y: each alike across groups, and groups apart.
  const Network net = star();
  const Shape fwd({{x(0), y(0)}, {x(1), y(1)}}, 1e6), back({{y(0), x(0)}, {y(1), x(1)}}, 2e6);
  EXPECT_EQ(symmetric_comm_sets(net, {}, {fwd.of(0), back.of(0)}, 1), std::vector<char>{1});
  // Group sizes that differ between groups break it.
  const Shape uneven({{x(0), y(0)}, {x(1), y(1)}}, 1e6);
  Shape bigger = uneven;
  bigger.exp.flows[1].bytes = 2e6;
  EXPECT_EQ(symmetric_comm_sets(net, {}, {bigger.of(0)}, 1), std::vector<char>{0});
}

TEST(FlowSymmetry, AFaultOnAGroupsHostOrLinkStopsIt) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(1), y(1)}}, 1e6);
  Faults slow;
  slow.host_speed[x(1)] = {Window{0, 1, 0.5}};
  EXPECT_EQ(symmetric_comm_sets(net, slow, {s.of(0)}, 1), std::vector<char>{0});
  Faults degraded;
  degraded.link_bandwidth[3] = {Window{0, 1, 0.5}};  // y1's link
  EXPECT_EQ(symmetric_comm_sets(net, degraded, {s.of(0)}, 1), std::vector<char>{0});
}

}  // namespace
}  // namespace dejavu::sim
