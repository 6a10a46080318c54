#include "sim/simgrid_engine.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/analytic_engine.h"
#include "sim/collective.h"

namespace dejavu::sim {
namespace {

Result simgrid(const TaskGraph& g, const Network& net, const std::string& fidelity = "flow") {
  EngineOptions o;
  o.fidelity = fidelity;
  o.timeout_s = 120;
  return SimGridEngine().run(g, net, o);
}

// Two hosts through one switch; each host link has latency a/2.
Network pair_network(double bw, double a) {
  Network net;
  const int sw = net.add_switch("switch");
  const int x = net.add_host("x"), y = net.add_host("y");
  net.add_link("x-link", x, sw, bw, a / 2);
  net.add_link("y-link", y, sw, bw, a / 2);
  return net;
}

// One transfer task standing for the given (src, dst) pairs, all started together.
TaskGraph transfers(const std::vector<std::vector<int>>& pairs, double bytes) {
  TaskGraph g;
  const sim::DeviceId d = g.add_device("sender", {pairs[0][0]});
  const sim::CommSetId set = g.add_comm_set(CommSet{pairs});
  g.add_transfer(d, g.stream("comm"), set, bytes, g.label("send"), 0);
  g.finalize();
  return g;
}

TEST(SimGridEngine, TwoTransfersSharingALinkEachTakeTwiceAsLong) {
  const double B = 10e9, a = 2e-6, S = 1e9;
  const Network net = pair_network(B, a);
  const int x = 1, y = 2;
  EXPECT_NEAR(simgrid(transfers({{x, y}}, S), net).makespan_s, a + S / B, 1e-9);
  EXPECT_NEAR(simgrid(transfers({{x, y}, {x, y}}, S), net).makespan_s, a + 2 * S / B, 1e-9);
}

TEST(SimGridEngine, OppositeDirectionsOnAFullDuplexLinkDoNotSlowEachOther) {
  const double B = 10e9, a = 2e-6, S = 1e9;
  const Network net = pair_network(B, a);
  EXPECT_NEAR(simgrid(transfers({{1, 2}, {2, 1}}, S), net).makespan_s, a + S / B, 1e-9);
}

platforms::Cluster two_servers(double oversubscription) {
  return platforms::load_cluster(
      ConfigNode::load_string("servers:\n"
                              "  - count: 2\n"
                              "    gpu: A100-SXM-80GB\n"
                              "    gpus_per_server: 8\n"
                              "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
                              "    nic: {bandwidth: 200 Gbps, latency: 2 us}\n"
                              "network: {kind: fat-tree, latency: 1 us, oversubscription: " +
                                  std::to_string(oversubscription) + "}\n",
                              "two-servers.yaml"));
}

TEST(SimGridEngine, AllToAllAcrossA4To1SpineTakesFourTimesLonger) {
  // Every GPU of each server sends S to every GPU of the other: 64 flows each way.
  const double S = 100e6, a = 3e-6;  // nic + network latency
  auto all_to_all = [&](const platforms::Cluster& c) {
    std::vector<std::vector<int>> pairs;
    for (int i = 0; i < 8; ++i)
      for (int j = 8; j < 16; ++j) {
        pairs.push_back({c.gpus[i].host, c.gpus[j].host});
        pairs.push_back({c.gpus[j].host, c.gpus[i].host});
      }
    return simgrid(transfers(pairs, S), c.network).makespan_s;
  };
  const double nic = 25e9;
  const double blocking_free = all_to_all(two_servers(1));
  const double oversubscribed = all_to_all(two_servers(4));
  // Non-blocking: each NIC carries 8 flows. 4:1: the uplink (8 NICs / 4) carries 64.
  EXPECT_NEAR(blocking_free, a + 8 * S / nic, 1e-9);
  EXPECT_NEAR(oversubscribed, a + 64 * S / (8 * nic / 4), 1e-9);
  EXPECT_NEAR((oversubscribed - a) / (blocking_free - a), 4.0, 1e-9);
}

TEST(SimGridEngine, RingAllReduceFidelitiesAgreeWithoutContention) {
  for (int n : {2, 8, 64}) {
    const platforms::Cluster c = platforms::load_cluster(ConfigNode::load_string(
        "servers:\n  - count: " + std::to_string(std::max(1, n / 8)) +
            "\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(std::min(n, 8)) +
            "\n    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
            "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
        "ring.yaml"));
    std::vector<int> ring;
    for (const auto& slot : c.gpus) ring.push_back(slot.host);
    TaskGraph g;
    const sim::DeviceId d = g.add_device("group", ring);
    const double S = 1 << 30;
    g.add_collective(g.add_participants({d}), g.stream("comm"), CollectiveOp::AllReduce,
                     g.add_comm_set(CommSet{{ring}}), S, g.label("all-reduce"), -1);
    g.finalize();
    const double closed_form = AnalyticEngine().run(g, c.network, {}).makespan_s;
    for (const char* f : {"closed", "flow", "step"})
      EXPECT_NEAR(simgrid(g, c.network, f).makespan_s / closed_form, 1.0, 1e-3) << n << " GPUs, " << f;
  }
}

}  // namespace
}  // namespace dejavu::sim
