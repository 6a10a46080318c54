// Alike steps played as time (sim/step_periods.h): the period found from hand-fed times,
// and on SimGrid a ring that ends where its closed form and its every-step play end.
#include "sim/step_periods.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/simgrid_engine.h"

namespace dejavu::sim {
namespace {

// A cut run of 8 kept steps of two flows each (steps 2 and 5 are its window's edges), 100
// more cut.
Expansion eight_steps() {
  Expansion e;
  for (int i = 0; i < 16; ++i) e.flows.push_back(FlowSpec{0, 1, 1e6, 0, 0});
  e.cut.push_back(AlikeSteps{0, 2, 8, 100});
  return e;
}

TEST(StepPeriods, APeriodicWindowGivesTheCutStepsTheirPeriodEach) {
  const Expansion e = eight_steps();
  StepPeriods p(e);
  std::vector<int> edges;
  for (int step = 0; step < 8; ++step)
    for (int k = 0; k < 2; ++k) {
      const int32_t f = 2 * step + k;
      p.started(f, 0.5 * step + 0.1 * k);
      const int edge = p.ended(f, 0.5 * step + 0.3 + 0.1 * k);
      if (edge >= 0) edges.push_back(edge);
    }
  EXPECT_EQ(edges, (std::vector<int>{0, 1}));  // the ends of steps 2 and 5
  EXPECT_EQ(p.window_steps(0), 3);
  EXPECT_NEAR(p.cut_time_s(), 100 * 0.5, 1e-12);
  EXPECT_NEAR(p.cut_windows(0), 100.0 / 3, 1e-12);
}

TEST(StepPeriods, AWindowThatIsNotPeriodicSaysSo) {
  const Expansion e = eight_steps();
  StepPeriods p(e);
  for (int step = 0; step < 8; ++step)
    for (int k = 0; k < 2; ++k) {
      const int32_t f = 2 * step + k;
      // Step 4's second flow ends 1 us late: the window (steps 2..5) is not periodic.
      p.started(f, 0.5 * step);
      p.ended(f, 0.5 * step + 0.3 + (step == 4 && k == 1 ? 1e-6 : 0));
    }
  EXPECT_LT(p.cut_time_s(), 0);
}

Result ring_all_reduce(const Network& net, const std::vector<int>& ring, double bytes, int keep,
                       const std::string& algorithm = "ring") {
  TaskGraph g;
  const DeviceId d = g.add_device("ring", ring);
  g.add_collective(g.add_participants({d}), g.stream("comm"), CollectiveOp::AllReduce, g.add_comm_set(CommSet{{ring}}),
                   bytes, g.label("all-reduce"), -1);
  g.finalize();
  EngineOptions o;
  o.fidelity = "step";
  o.collective_algorithm = algorithm;
  o.keep_alike_steps = keep;
  o.timeout_s = 120;
  return SimGridEngine().run(g, net, o);
}

TEST(StepPeriods, ARingOnAStarEndsAtItsClosedForm) {
  // 40 hosts, each on its own 10 GB/s link of 1 us to one switch: every step, host i sends
  // S/n to i+1 over its own up-link and i+1's down-link, nothing shared. 2(n-1) = 78 steps
  // of 2 us + (S/n)/B; 32 played, 46 as time.
  const int n = 40;
  const double B = 10e9, lat = 1e-6, S = 1e9;
  Network net;
  const int sw = net.add_switch("switch");
  std::vector<int> ring;
  for (int i = 0; i < n; ++i) {
    ring.push_back(net.add_host("h" + std::to_string(i)));
    net.add_link("l" + std::to_string(i), ring.back(), sw, B, lat);
  }
  const Result cut = ring_all_reduce(net, ring, S, 32);
  EXPECT_NEAR(cut.makespan_s, 2 * (n - 1) * (2 * lat + S / n / B), 1e-9);
  const Result every = ring_all_reduce(net, ring, S, 0);
  EXPECT_LT(cut.activities * 2, every.activities);
  // Each link carries 2(n-1) chunks of S/n each way, whichever way they were played.
  for (size_t l = 0; l < cut.link_bytes.size(); ++l) EXPECT_NEAR(cut.link_bytes[l], 2.0 * (n - 1) * S / n, 1e-3);
}

// Servers of 8 A100s (NVSwitch inside, a 200 Gb/s NIC per GPU, a fat-tree between).
platforms::Cluster servers(int count) {
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: " + std::to_string(count) +
          "\n    gpu: A100-SXM-80GB\n    gpus_per_server: 8\n"
          "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
          "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "servers.yaml"));
}

void expect_same_run(const Result& cut, const Result& every, const std::string& what) {
  EXPECT_NEAR(cut.makespan_s / every.makespan_s, 1.0, 1e-9) << what;
  EXPECT_LT(cut.activities, every.activities) << what;
  for (size_t l = 0; l < cut.link_bytes.size(); ++l) {
    EXPECT_NEAR(cut.link_bytes[l], every.link_bytes[l], 1e-9 * (1 << 30)) << what << " link " << l;
    EXPECT_NEAR(cut.link_busy_s[l], every.link_busy_s[l], 1e-6 * every.makespan_s) << what << " link " << l;
    EXPECT_EQ(cut.link_peak_flows[l], every.link_peak_flows[l]) << what << " link " << l;
  }
}

TEST(StepPeriods, CutStepsEndWhereEveryStepPlayedEnds) {
  // A ring's channels over 64 and 256 GPUs: 126 and 510 steps, 32 kept.
  for (int count : {8, 32}) {
    const platforms::Cluster c = servers(count);
    std::vector<int> ring;
    for (const auto& slot : c.gpus) ring.push_back(slot.host);
    expect_same_run(ring_all_reduce(c.network, ring, 1 << 30, 32), ring_all_reduce(c.network, ring, 1 << 30, 0),
                    "ring over " + std::to_string(8 * count));
    // Hierarchical: its all-reduce across the 8 servers has 14 steps, 8 kept.
    if (count == 8)
      expect_same_run(ring_all_reduce(c.network, ring, 1 << 30, 8, "hierarchical"),
                      ring_all_reduce(c.network, ring, 1 << 30, 0, "hierarchical"), "hierarchical");
  }
}

TEST(StepPeriods, ACollectiveThatMeetsAnotherIsPlayedInFull) {
  // A ring over both servers and, on a stream of its own, one over the first server: they
  // share NVLink, so neither runs alone and both are played step by step.
  const platforms::Cluster c = servers(2);
  std::vector<int> all, first;
  for (const auto& slot : c.gpus) all.push_back(slot.host);
  first.assign(all.begin(), all.begin() + 8);
  const auto run = [&](int keep) {
    TaskGraph g;
    const DeviceId a = g.add_device("all", all), f = g.add_device("first", first);
    g.add_collective(g.add_participants({a}), g.stream("x"), CollectiveOp::AllReduce, g.add_comm_set(CommSet{{all}}),
                     1 << 28, g.label("all"), -1);
    g.add_collective(g.add_participants({f}), g.stream("y"), CollectiveOp::AllReduce, g.add_comm_set(CommSet{{first}}),
                     1 << 28, g.label("first"), -1);
    g.finalize();
    EngineOptions o;
    o.fidelity = "step";
    o.keep_alike_steps = keep;
    return SimGridEngine().run(g, c.network, o);
  };
  const Result cut = run(8), every = run(0);
  EXPECT_EQ(cut.makespan_s, every.makespan_s);
  EXPECT_EQ(cut.end_s, every.end_s);
  EXPECT_EQ(cut.activities, every.activities);
}

}  // namespace
}  // namespace dejavu::sim
