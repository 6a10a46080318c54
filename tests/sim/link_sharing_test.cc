#include "sim/link_sharing.h"

#include <gtest/gtest.h>

#include "sim/analytic_engine.h"
#include "sim/engine.h"

#include <cmath>

namespace dejavu::sim {
namespace {

// n hosts on one switch, each by its own link of bandwidth bw and no latency: host i is
// node i, its link link i.
Network star(int n, double bw) {
  Network net;
  for (int i = 0; i < n; ++i) net.add_host("gpu" + std::to_string(i));
  const int sw = net.add_switch("switch");
  for (int i = 0; i < n; ++i) net.add_link("link" + std::to_string(i), i, sw, bw, 0);
  return net;
}

// The link direction host i sends on (host -> switch) and receives on.
int up(int i) { return 2 * i; }
int down(int i) { return 2 * i + 1; }

TEST(FairRates, TasksThatFitTogetherKeepTheirAloneSpeed) {
  const Network net = star(3, 10e9);
  const LinkDemand a = {{up(0), 4e9}, {down(2), 4e9}}, b = {{up(1), 5e9}, {down(2), 5e9}};
  const std::vector<double> r = fair_rates(net, {&a, &b});
  EXPECT_EQ(r, (std::vector<double>{1.0, 1.0}));  // 9 GB/s into a 10 GB/s link: no one waits
}

TEST(FairRates, TwoFullSpeedTasksOnOneLinkGetHalfEach) {
  const Network net = star(3, 10e9);
  const LinkDemand a = {{up(0), 10e9}, {down(2), 10e9}}, b = {{up(1), 10e9}, {down(2), 10e9}};
  const std::vector<double> r = fair_rates(net, {&a, &b});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
}

TEST(FairRates, WhatTheBottleneckedTaskLeavesGoesToTheOther) {
  // a and b share host 2's 10 GB/s inbound link; b also shares host 1's
  // outbound link with c; each wants 10 GB/s alone. Both links fill at rate 0.5. With a
  // wanting 4 GB/s alone instead, host 1's link still holds b at 0.5, which leaves a 5 GB/s
  // of host 2's link, more than its 4: a keeps its alone speed.
  const Network net = star(4, 10e9);
  const LinkDemand a = {{up(0), 10e9}, {down(2), 10e9}}, b = {{up(1), 10e9}, {down(2), 10e9}},
                   c = {{up(1), 10e9}, {down(3), 10e9}};
  std::vector<double> r = fair_rates(net, {&a, &b, &c});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.5);
  const LinkDemand small = {{up(0), 4e9}, {down(2), 4e9}};
  r = fair_rates(net, {&small, &b, &c});
  EXPECT_DOUBLE_EQ(r[0], 1.0);
}

TEST(FluidDrain, SevenPushesIntoOneServerTakeSevenTimesOne) {
  // A parameter server's inbound link carries 7 x 1 GB at 10 GB/s: 0.7 s.
  const Network net = star(8, 10e9);
  std::vector<Flow> flows;
  for (int i = 1; i < 8; ++i) flows.push_back({{up(i), down(0)}, 1e9});
  EXPECT_NEAR(fluid_drain_s(net, flows), 0.7, 1e-12);
}

TEST(FluidDrain, AShortFlowLeavesItsShareToTheLongOne) {
  // 1 GB and 3 GB into one 10 GB/s link: 5 GB/s each until the first ends at 0.2 s, then
  // the second alone with 2 GB left: 0.2 + 0.2 = 0.4 s, the link never idle.
  const Network net = star(3, 10e9);
  EXPECT_NEAR(fluid_drain_s(net, {{{up(0), down(2)}, 1e9}, {{up(1), down(2)}, 3e9}}), 0.4, 1e-12);
}

// Two 1 GB transfers into host 2 at 10 GB/s, the second starting 0.05 s after the first:
// the first runs alone for 0.05 s (0.5 GB), then both share the link at 5 GB/s; the first's
// last 0.5 GB takes 0.1 s (ends 0.15 s), the second has then moved 0.5 GB and finishes its
// other 0.5 GB alone by 0.2 s. Priced alone, each would take 0.1 s.
TEST(AnalyticEngine, TransfersInFlightShareALinkFromTheMomentTheSecondStarts) {
  const Network net = star(3, 10e9);
  TaskGraph g;
  const DeviceId d0 = g.add_device("gpu0", {0}), d1 = g.add_device("gpu1", {1});
  const StreamId c = g.stream("compute"), comm = g.stream("comm");
  const TaskId a = g.add_transfer(d0, comm, g.add_comm_set(CommSet{{{0, 2}}}), 1e9, g.label("a"), 0);
  const TaskId wait = g.add_compute(d1, c, 0.05, g.label("wait"), 0);
  const TaskId b = g.add_transfer(d1, comm, g.add_comm_set(CommSet{{{1, 2}}}), 1e9, g.label("b"), 0);
  g.depend(wait, b);
  g.finalize();
  const Result shared = AnalyticEngine(true).run(g, net, {});
  EXPECT_NEAR(shared.end_s[a], 0.15, 1e-12);
  EXPECT_NEAR(shared.end_s[b], 0.2, 1e-12);
  const Result alone = AnalyticEngine(false).run(g, net, {});
  EXPECT_NEAR(alone.end_s[a], 0.1, 1e-12);
  EXPECT_NEAR(alone.end_s[b], 0.15, 1e-12);
}

// Two 1 GB transfers into host 2 at 10 GB/s, both from the start: 5 GB/s each, both done at
// 0.2 s (the tasks that start the run share links too).
TEST(AnalyticEngine, TransfersStartingTogetherShareFromTheStart) {
  const Network net = star(3, 10e9);
  TaskGraph g;
  const DeviceId d0 = g.add_device("gpu0", {0}), d1 = g.add_device("gpu1", {1});
  const StreamId comm = g.stream("comm");
  const TaskId a = g.add_transfer(d0, comm, g.add_comm_set(CommSet{{{0, 2}}}), 1e9, g.label("a"), 0);
  const TaskId b = g.add_transfer(d1, comm, g.add_comm_set(CommSet{{{1, 2}}}), 1e9, g.label("b"), 0);
  g.finalize();
  const Result r = AnalyticEngine(true).run(g, net, {});
  EXPECT_NEAR(r.end_s[a], 0.2, 1e-12);
  EXPECT_NEAR(r.end_s[b], 0.2, 1e-12);
}

// The same two transfers, host 2's link degraded to half from 0.1 s: each has moved 0.5 GB
// by then at 5 GB/s, and moves the other 0.5 GB at 2.5 GB/s: both end at 0.3 s, on either
// engine. Down from 0.1 s instead, neither finishes: the iteration stops at 0.1 s.
TEST(AnalyticEngine, ALinkDegradedUnderSharedTransfersSlowsThemFromThatMoment) {
  register_builtins();
  const Network net = star(3, 10e9);
  TaskGraph g;
  const DeviceId d0 = g.add_device("gpu0", {0}), d1 = g.add_device("gpu1", {1});
  const StreamId comm = g.stream("comm");
  const TaskId a = g.add_transfer(d0, comm, g.add_comm_set(CommSet{{{0, 2}}}), 1e9, g.label("a"), 0);
  const TaskId b = g.add_transfer(d1, comm, g.add_comm_set(CommSet{{{1, 2}}}), 1e9, g.label("b"), 0);
  g.finalize();
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    EngineOptions o;
    o.faults.link_bandwidth[2] = {Window{0.1, INFINITY, 0.5}};
    const Result r = engines().make(engine)->run(g, net, o);
    EXPECT_NEAR(r.end_s[a], 0.3, 1e-9);
    EXPECT_NEAR(r.end_s[b], 0.3, 1e-9);
    o.faults.link_bandwidth[2] = {Window{0.1, INFINITY, 0}};
    const Result down = engines().make(engine)->run(g, net, o);
    ASSERT_TRUE(down.stopped());
    EXPECT_NEAR(down.stopped_at_s, 0.1, 1e-9);
  }
}

}  // namespace
}  // namespace dejavu::sim
