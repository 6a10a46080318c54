#include "sim/sm_sharing.h"

#include <gtest/gtest.h>

#include "sim/analytic_engine.h"
#include "sim/device_time.h"
#include "sim/simgrid_engine.h"

namespace dejavu::sim {
namespace {

// Three GPUs (a, b, c: hosts 1, 2, 3) and a host memory node (4) on one switch, 1 GB/s links
// without latency: a 4 MB transfer takes 4 ms. GPU a's communication kernels hold a quarter
// of its SMs.
constexpr double kShare = 0.25, kCompute = 10e-3, kBytes = 4e6, kSend = 4e-3;

Network star() {
  Network net;
  const int sw = net.add_switch("switch");
  for (const char* name : {"a", "b", "c", "memory"})
    net.add_link(std::string(name) + "-link", net.add_host(name), sw, 1e9, 0);
  return net;
}

struct Graph {
  TaskGraph g;
  DeviceId a, b, c;
  TaskId work = -1;
};

// A compute task of 10 ms on GPU a (or b), and transfers (src, dst) on their own streams, all
// starting at 0.
Graph graph(const std::vector<std::pair<int, int>>& sends, bool work_on_b = false) {
  Graph x;
  x.a = x.g.add_device("a", {1});
  x.b = x.g.add_device("b", {2});
  x.c = x.g.add_device("c", {3});
  for (DeviceId d : {x.a, x.b, x.c}) x.g.device(d).comm_share = kShare;
  x.work = x.g.add_compute(work_on_b ? x.b : x.a, x.g.stream("compute"), kCompute, x.g.label("work"), 0);
  int n = 0;
  for (auto [src, dst] : sends) {
    const DeviceId from = src == 1 ? x.a : src == 2 ? x.b : x.c;
    x.g.add_transfer(from, x.g.stream("comm" + std::to_string(n++)), x.g.add_comm_set(CommSet{{{src, dst}}}), kBytes,
                     x.g.label("send"), 0);
  }
  x.g.finalize();
  return x;
}

Result analytic(const TaskGraph& g, bool contention = true) { return AnalyticEngine(contention).run(g, star(), {}); }

Result simgrid(const TaskGraph& g) {
  EngineOptions o;
  o.timeout_s = 120;
  return SimGridEngine().run(g, star(), o);
}

TEST(SmSharing, AComputeKernelBesideOneCommunicationKernelRunsOnTheSmsLeft) {
  // a sends 4 ms to b: a's compute runs at (1 - c) / (1 - c + c) = 0.75 for 4 ms (3 ms of its
  // work), then alone for the 7 ms left: 11 ms = 10 + 4 c ms.
  const Graph x = graph({{1, 2}});
  const double expected = kCompute + kShare * kSend;
  const Result r = analytic(x.g);
  EXPECT_NEAR(r.end_s[x.work], expected, 1e-12);
  EXPECT_NEAR(device_times(x.g, r)[x.a].compute_slowed_s, kShare * kSend, 1e-12);  // what the report says
  EXPECT_NEAR(simgrid(x.g).end_s[x.work], expected, 1e-9);
  // The receiver's kernel holds b's SMs as the sender's holds a's.
  const Graph y = graph({{1, 2}}, true);
  EXPECT_NEAR(analytic(y.g).end_s[y.work], expected, 1e-12);
  EXPECT_NEAR(simgrid(y.g).end_s[y.work], expected, 1e-9);
  // Without resources shared, every kernel has the whole GPU.
  EXPECT_DOUBLE_EQ(analytic(x.g, false).end_s[x.work], kCompute);
}

TEST(SmSharing, TwoCommunicationKernelsShareTheSmsByWeight) {
  // a sends to b while c sends to a (each direction of a's link once: 4 ms each): beside two
  // kernels a's compute runs at 0.75 / (0.75 + 2 x 0.25) = 0.6 for 4 ms (2.4 ms of work),
  // then 7.6 ms alone.
  const Graph x = graph({{1, 2}, {3, 1}});
  const double expected = kSend + (kCompute - 0.6 * kSend);
  EXPECT_NEAR(analytic(x.g).end_s[x.work], expected, 1e-12);
  EXPECT_NEAR(simgrid(x.g).end_s[x.work], expected, 1e-9);
}

TEST(SmSharing, ACopyToHostMemoryRunsOnTheCopyEngines) {
  const Graph x = graph({{1, 4}});
  EXPECT_DOUBLE_EQ(analytic(x.g).end_s[x.work], kCompute);
  EXPECT_NEAR(simgrid(x.g).end_s[x.work], kCompute, 1e-9);
  EXPECT_TRUE(SmSharing(x.g, 5).kernel_devices(x.g.task(1)).empty());
}

TEST(SmSharing, ACollectiveHoldsEveryParticipantsSms) {
  // An all-reduce over a and b beside a's compute: whatever the collective's own time T,
  // the compute ends c T later than alone.
  Graph x;
  x.a = x.g.add_device("a", {1});
  x.b = x.g.add_device("b", {2});
  x.g.device(x.a).comm_share = x.g.device(x.b).comm_share = kShare;
  x.work = x.g.add_compute(x.a, x.g.stream("compute"), kCompute, x.g.label("work"), 0);
  const TaskId all_reduce =
      x.g.add_collective(x.g.add_participants({x.a, x.b}), x.g.stream("comm"), CollectiveOp::AllReduce,
                         x.g.add_comm_set(CommSet{{{1, 2}}}), kBytes, x.g.label("all-reduce"), 0);
  x.g.finalize();
  EXPECT_EQ(SmSharing(x.g, 5).kernel_devices(x.g.task(all_reduce)), (std::vector<int>{x.a, x.b}));
  const Result r = analytic(x.g);
  const double T = r.end_s[all_reduce] - r.start_s[all_reduce];
  ASSERT_GT(T, 0);
  ASSERT_LT(T, kCompute);
  EXPECT_NEAR(r.end_s[x.work], kCompute + kShare * T, 1e-12);
}

TEST(SmSharing, SpeedBesideKernels) {
  EXPECT_DOUBLE_EQ(SmSharing::compute_speed(0.25, 0), 1.0);
  EXPECT_DOUBLE_EQ(SmSharing::compute_speed(0.25, 1), 0.75);
  EXPECT_DOUBLE_EQ(SmSharing::compute_speed(0.25, 3), 0.75 / 1.5);
  EXPECT_DOUBLE_EQ(SmSharing::compute_speed(0, 5), 1.0);
}

}  // namespace
}  // namespace dejavu::sim
