// Which comm sets' groups may be played once, and the guard that watches speculated ones:
// hand-built networks where the answer is plain from the picture.
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

std::vector<Play> plays(const Network& net, const Faults& faults, const std::vector<GroupedFlows>& shapes, int sets) {
  std::vector<Play> out;
  for (const SetSymmetry& s : symmetric_comm_sets(net, faults, shapes, sets)) out.push_back(s.play);
  return out;
}

TEST(FlowSymmetry, GroupsOnTheirOwnAlikeLinksPlayOnce) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(1), y(1)}, {x(2), y(2)}}, 1e6);
  EXPECT_EQ(plays(net, {}, {s.of(0)}, 1), std::vector<Play>{Play::Once});
}

TEST(FlowSymmetry, GroupsSharingALinkDoNot) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(0), y(1)}}, 1e6);  // both leave through x0's link
  EXPECT_EQ(plays(net, {}, {s.of(0)}, 1), std::vector<Play>{Play::Every});
}

TEST(FlowSymmetry, AGroupOnASlowerLinkDoesNot) {
  const Network net = star(0.5);
  const Shape s({{x(0), y(0)}, {x(3), y(3)}}, 1e6);
  EXPECT_EQ(plays(net, {}, {s.of(0)}, 1), std::vector<Play>{Play::Every});
}

TEST(FlowSymmetry, AnotherSetOnOneGroupsLinkMakesBothSpeculated) {
  // Set 0's groups are alike and apart, but set 1 sends over y1's link, which only the
  // second group of set 0 crosses: played once, set 0 is exact only while set 1 is not
  // sending (and the other way round), which a guard watches as they run.
  const Network net = star();
  const Shape a({{x(0), y(0)}, {x(1), y(1)}}, 1e6), b({{x(2), y(1)}, {x(3), y(3)}}, 1e6);
  EXPECT_EQ(plays(net, {}, {a.of(0), b.of(1)}, 2), (std::vector<Play>{Play::Speculate, Play::Speculate}));
}

TEST(FlowSymmetry, GroupsSharingALinkFormAClassAndAlikeClassesPlayOnce) {
  // Groups 0 and 1 leave through x0's link, groups 2 and 3 through x1's: two classes.
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(0), y(1)}, {x(1), y(2)}, {x(1), y(3)}}, 1e6);
  const auto sets = symmetric_comm_sets(net, {}, {s.of(0)}, 1);
  EXPECT_EQ(sets[0].play, Play::Once);
  EXPECT_EQ(sets[0].classes, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  // Groups interleaved: classes gather them by the link they share, in order of their lowest group.
  const Shape mixed({{x(0), y(0)}, {x(1), y(2)}, {x(0), y(1)}, {x(1), y(3)}}, 1e6);
  EXPECT_EQ(symmetric_comm_sets(net, {}, {mixed.of(0)}, 1)[0].classes, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
}

TEST(SymmetryGuard, ATaskBreaksWhenAnotherKindCrossesItsLinksWhileItRuns) {
  SymmetryGuard guard(8);
  const std::vector<int32_t> mine = {1, 2}, other = {2, 5}, apart = {5, 6};
  guard.claim(7, 0, mine);
  guard.flow_enters(0, mine.data(), mine.size());  // its own flows
  guard.flow_enters(3, apart.data(), apart.size());
  EXPECT_TRUE(guard.broken().empty());
  guard.flow_enters(3, other.data(), other.size());  // direction 2 is claimed
  EXPECT_EQ(guard.broken(), std::set<TaskId>{7});
}

TEST(SymmetryGuard, AFlowInFlightWhenATaskStartsBreaksIt) {
  SymmetryGuard guard(8);
  const std::vector<int32_t> flow = {4}, claim = {3, 4};
  guard.flow_enters(1, flow.data(), flow.size());
  guard.claim(9, 0, claim);
  EXPECT_EQ(guard.broken(), std::set<TaskId>{9});
  // Once the flow left and the claim was released, nothing breaks a new one.
  SymmetryGuard later(8);
  later.flow_enters(1, flow.data(), flow.size());
  later.flow_leaves(1, flow.data(), flow.size());
  later.claim(9, 0, claim);
  later.release(9, claim);
  later.flow_enters(1, flow.data(), flow.size());
  EXPECT_TRUE(later.broken().empty());
}

TEST(SymmetryGuard, ClaimsOfTwoKindsOnOneLinkBreakBoth) {
  SymmetryGuard guard(8);
  guard.claim(1, 0, {2, 3});
  guard.claim(2, 0, {3});  // same kind: the same set, played once alike
  EXPECT_TRUE(guard.broken().empty());
  guard.claim(3, 2, {3});
  EXPECT_EQ(guard.broken(), (std::set<TaskId>{1, 2, 3}));
}

TEST(FlowSymmetry, TwoShapesOfOneSetMustAgreeOnWhichLinksTheyShare) {
  // Shape 1 of the set sends y->x, shape 2 x->y: each alike across groups, and groups apart.
  const Network net = star();
  const Shape fwd({{x(0), y(0)}, {x(1), y(1)}}, 1e6), back({{y(0), x(0)}, {y(1), x(1)}}, 2e6);
  EXPECT_EQ(plays(net, {}, {fwd.of(0), back.of(0)}, 1), std::vector<Play>{Play::Once});
  // Group sizes that differ between groups break it.
  const Shape uneven({{x(0), y(0)}, {x(1), y(1)}}, 1e6);
  Shape bigger = uneven;
  bigger.exp.flows[1].bytes = 2e6;
  EXPECT_EQ(plays(net, {}, {bigger.of(0)}, 1), std::vector<Play>{Play::Every});
}

TEST(FlowSymmetry, AFaultOnAGroupsHostOrLinkStopsIt) {
  const Network net = star();
  const Shape s({{x(0), y(0)}, {x(1), y(1)}}, 1e6);
  Faults slow;
  slow.host_speed[x(1)] = {Window{0, 1, 0.5}};
  EXPECT_EQ(plays(net, slow, {s.of(0)}, 1), std::vector<Play>{Play::Every});
  Faults degraded;
  degraded.link_bandwidth[3] = {Window{0, 1, 0.5}};  // y1's link
  EXPECT_EQ(plays(net, degraded, {s.of(0)}, 1), std::vector<Play>{Play::Every});
}

}  // namespace
}  // namespace dejavu::sim
