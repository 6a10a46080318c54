#include "sim/analytic_engine.h"

#include <gtest/gtest.h>

#include "sim/collective.h"
#include "sim/device_time.h"
#include "sim/error.h"

namespace dejavu::sim {
namespace {

// n hosts on one switch; each host link has latency a/2, so host-to-host latency is a.
Network star(int n, double bw, double a) {
  Network net;
  const int sw = net.add_switch("switch");
  for (int i = 0; i < n; ++i) {
    const int h = net.add_host("gpu" + std::to_string(i));
    net.add_link("link" + std::to_string(i), h, sw, bw, a / 2);
  }
  return net;
}

Result run(const TaskGraph& g, const Network& net) { return AnalyticEngine().run(g, net, {}); }

TEST(AnalyticEngine, ChainOnOneStreamAddsUp) {
  Network net = star(1, 1e9, 0);
  TaskGraph g;
  const sim::DeviceId d = g.add_device("gpu0", {1});
  const sim::StreamId c = g.stream("compute");
  const TaskId a = g.add_compute(d, c, 1.0, g.label("a"), 0);
  const TaskId b = g.add_compute(d, c, 2.0, g.label("b"), 0);
  g.depend(a, b);
  g.finalize();
  const Result r = run(g, net);
  EXPECT_DOUBLE_EQ(r.makespan_s, 3.0);
  EXPECT_DOUBLE_EQ(r.start_s[b], 1.0);
}

TEST(AnalyticEngine, StreamsRunInInsertionOrder) {
  // b is ready at once but sits behind a on the same stream; a waits 5 s for x.
  Network net = star(2, 1e9, 0);
  TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {1}), d1 = g.add_device("gpu1", {2});
  const sim::StreamId c = g.stream("compute");
  const TaskId x = g.add_compute(d1, c, 5.0, g.label("x"), 0);
  const TaskId a = g.add_compute(d0, c, 1.0, g.label("a"), 0);
  const TaskId b = g.add_compute(d0, c, 1.0, g.label("b"), 0);
  g.depend(x, a);
  g.finalize();
  const Result r = run(g, net);
  EXPECT_DOUBLE_EQ(r.start_s[a], 5.0);
  EXPECT_DOUBLE_EQ(r.start_s[b], 6.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 7.0);
}

TEST(AnalyticEngine, CommunicationOverlapsComputeOnItsOwnStream) {
  const double bw = 10e9, a = 4e-6, bytes = 1e9;
  Network net = star(2, bw, a);
  TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {1});
  g.add_device("gpu1", {2});
  const sim::StreamId c = g.stream("compute"), comm = g.stream("comm");
  const sim::CommSetId pair = g.add_comm_set(CommSet{{{1, 2}}});
  g.add_compute(d0, c, 0.05, g.label("work"), 0);
  const TaskId t = g.add_transfer(d0, comm, pair, bytes, g.label("send"), 0);
  g.finalize();
  const Result r = run(g, net);
  EXPECT_DOUBLE_EQ(r.start_s[t], 0.0);
  EXPECT_DOUBLE_EQ(r.end_s[t], a + bytes / bw);  // alpha + S / B
  EXPECT_DOUBLE_EQ(r.makespan_s, 0.1 + a);
  const auto times = device_times(g, r);
  EXPECT_DOUBLE_EQ(times[d0].compute_s, 0.05);
  EXPECT_NEAR(times[d0].exposed_communication_s, 0.1 + a - 0.05, 1e-15);
  EXPECT_NEAR(times[d0].idle_s, 0.0, 1e-15);
}

TEST(RingAllReduce, MatchesClosedFormWithoutContention) {
  const int n = 4;
  const double S = 1e9, B = 100e9, a = 2e-6;
  Network net = star(n, B, a);
  TaskGraph g;
  const sim::DeviceId d = g.add_device("group", {1, 2, 3, 4});
  const sim::ParticipantsId part = g.add_participants({d});
  const sim::CommSetId set = g.add_comm_set(CommSet{{{1, 2, 3, 4}}});
  const TaskId ar = g.add_collective(part, g.stream("comm"), CollectiveOp::AllReduce, set, S, g.label("ar"), -1);
  g.finalize();
  const Result r = run(g, net);
  EXPECT_NEAR(r.end_s[ar], 2.0 * (n - 1) * (S / (n * B) + a), 1e-15);
  // Every link direction carries 2(n-1)/n of the buffer.
  for (double bytes : r.link_bytes) EXPECT_DOUBLE_EQ(bytes, 2.0 * (n - 1) / n * S);
}

TEST(RingAllReduce, ReduceScatterTakesHalfTheSteps) {
  const int n = 8;
  const double S = 64e6, B = 25e9, a = 3e-6;
  Network net = star(n, B, a);
  std::vector<int> group;
  for (int i = 1; i <= n; ++i) group.push_back(i);
  const auto ring = collective_algorithms().make("ring");
  EXPECT_NEAR(ring->time_s(net, group, CollectiveOp::ReduceScatter, S), (n - 1) * (S / (n * B) + a), 1e-15);
  EXPECT_DOUBLE_EQ(ring->time_s(net, {1}, CollectiveOp::AllReduce, S), 0.0);
}

TEST(AnalyticEngine, CollectiveWaitsForEveryParticipant) {
  Network net = star(2, 1e9, 0);
  TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {1}), d1 = g.add_device("gpu1", {2});
  const sim::StreamId c = g.stream("compute"), comm = g.stream("comm");
  g.add_compute(d1, comm, 3.0, g.label("busy comm stream"), 0);
  const sim::ParticipantsId both = g.add_participants({d0, d1});
  const TaskId ar =
      g.add_collective(both, comm, CollectiveOp::AllReduce, g.add_comm_set(CommSet{{{1, 2}}}), 0, g.label("ar"), -1);
  g.add_compute(d0, c, 1.0, g.label("x"), 0);
  g.finalize();
  const Result r = run(g, net);
  EXPECT_DOUBLE_EQ(r.start_s[ar], 3.0);
}

TEST(AnalyticEngine, CycleIsReportedNotHung) {
  Network net = star(1, 1e9, 0);
  TaskGraph g;
  const sim::DeviceId d = g.add_device("gpu0", {1});
  const sim::StreamId c = g.stream("compute");
  const TaskId a = g.add_compute(d, c, 1.0, g.label("a"), 0);
  const TaskId b = g.add_compute(d, c, 1.0, g.label("b"), 0);
  g.depend(a, b);
  g.depend(b, a);
  g.finalize();
  EXPECT_THROW(run(g, net), ModelError);
}

TEST(AnalyticEngine, DependencyAgainstStreamOrderIsReported) {
  // b is queued before a on the stream but depends on a: it can never run.
  Network net = star(1, 1e9, 0);
  TaskGraph g;
  const sim::DeviceId d = g.add_device("gpu0", {1});
  const sim::StreamId c = g.stream("compute");
  const TaskId b = g.add_compute(d, c, 1.0, g.label("b"), 0);
  const TaskId a = g.add_compute(d, c, 1.0, g.label("a"), 0);
  g.depend(a, b);
  g.finalize();
  EXPECT_THROW(run(g, net), ModelError);
}

}  // namespace
}  // namespace dejavu::sim
