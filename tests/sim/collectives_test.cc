// Collective algorithms: closed forms worked by hand on small groups, the fidelities
// against each other, and the bytes an algorithm puts on the NICs.
#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/analytic_engine.h"
#include "sim/collective.h"
#include "sim/simgrid_engine.h"

namespace dejavu::sim {
namespace {

// n hosts on one switch: host-to-host latency a, bandwidth B per direction, and a step
// latency s per host.
Network star(int n, double B, double a, double s = 0) {
  Network net;
  const int sw = net.add_switch("switch");
  for (int i = 0; i < n; ++i)
    net.add_link("l" + std::to_string(i), net.add_host("h" + std::to_string(i), -1, s), sw, B, a / 2);
  return net;
}

std::vector<int> hosts(int n) {  // star(): host i is node i+1
  std::vector<int> g;
  for (int i = 1; i <= n; ++i) g.push_back(i);
  return g;
}

double closed(const std::string& algo, const Network& net, const std::vector<int>& g, CollectiveOp op, double S) {
  return collective_algorithms().make(algo)->time_s(net, g, op, S);
}

const double B = 100e9, a = 2e-6, s = 3e-6, MiB = 1048576;

TEST(Collectives, RingAllReducePaysTheStepLatencyEveryStep) {
  const Network net = star(4, B, a, s);
  EXPECT_NEAR(closed("ring", net, hosts(4), CollectiveOp::AllReduce, 64 * MiB), 6 * (64 * MiB / (4 * B) + a + s),
              1e-15);
}

TEST(Collectives, RingBroadcastIsAChunkedChain) {
  // 16 MiB in 4 chunks of 4 MiB along 3 hops: 3 + 4 - 1 = 6 steps of one chunk each.
  const Network net = star(4, B, a);
  EXPECT_NEAR(closed("ring", net, hosts(4), CollectiveOp::Broadcast, 16 * MiB), 6 * (4 * MiB / B + a), 1e-15);
  EXPECT_NEAR(closed("ring", net, hosts(4), CollectiveOp::Reduce, 16 * MiB), 6 * (4 * MiB / B + a), 1e-15);
}

TEST(Collectives, SendRecvIsOneShiftOfTheWholeBuffer) {
  const Network net = star(4, B, a, s);
  for (const char* algo : {"ring", "direct"})
    EXPECT_NEAR(closed(algo, net, hosts(4), CollectiveOp::SendRecv, 64 * MiB), 64 * MiB / B + a + s, 1e-15) << algo;
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::SendRecv, 4), 1.0);
}

TEST(Collectives, DirectAllToAllIsOneStepOfThreeQuartersOfTheBuffer) {
  // Each of 4 hosts sends S/4 to each of the 3 others through its one link.
  const Network net = star(4, B, a);
  EXPECT_NEAR(closed("direct", net, hosts(4), CollectiveOp::AllToAll, 64 * MiB), 3 * 16 * MiB / B + a, 1e-15);
  EXPECT_FALSE(collective_algorithms().make("ring")->supports(net, hosts(4), CollectiveOp::AllToAll));
}

TEST(Collectives, HalvingDoublingAllReduceOnFourHosts) {
  // Halving: S/2 then S/4; doubling: S/4 then S/2; four latencies.
  const Network net = star(4, B, a);
  const double S = 64 * MiB;
  EXPECT_NEAR(closed("halving-doubling", net, hosts(4), CollectiveOp::AllReduce, S), 4 * a + 1.5 * S / B, 1e-15);
  EXPECT_FALSE(collective_algorithms().make("halving-doubling")->supports(net, hosts(6), CollectiveOp::AllReduce));
}

TEST(Collectives, DoubleBinaryTreeAllReduceOnThreeHosts) {
  // 8 MiB: two trees of 4 MiB, one chunk each, depth 1. Reduce step: h1 sends S/2 to both
  // roots (its link carries S); broadcast step: each root sends S/2 to both others.
  const Network net = star(3, B, a);
  const double S = 8 * MiB;
  EXPECT_NEAR(closed("tree", net, hosts(3), CollectiveOp::AllReduce, S), 2 * (a + S / B), 1e-15);
}

platforms::Cluster servers(int m, int k, const std::string& extra = "") {
  return platforms::load_cluster(
      ConfigNode::load_string("servers:\n  - count: " + std::to_string(m) +
                                  "\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(k) +
                                  "\n    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
                                  "    nic: {bandwidth: 200 Gbps, latency: 2 us}\n" +
                                  extra + "network: {kind: fat-tree, latency: 1 us}\n",
                              "servers.yaml"));
}

std::vector<int> all_hosts(const platforms::Cluster& c) {
  std::vector<int> g;
  for (const auto& slot : c.gpus) g.push_back(slot.host);
  return g;
}

TEST(Collectives, HierarchicalAllReduceClosedForm) {
  // 2 servers x 2 GPUs: reduce-scatter of S/2 inside, all-reduce of S/4 per step twice
  // across (each local rank through its own NIC), all-gather of S/2 inside.
  const auto c = servers(2, 2);
  const double S = 64 * MiB, inside = 300e9, nic = 25e9, a_in = 1e-6, a_x = 3e-6;
  EXPECT_NEAR(closed("hierarchical", c.network, all_hosts(c), CollectiveOp::AllReduce, S),
              2 * (S / 2 / inside + a_in) + 2 * (S / 4 / nic + a_x), 1e-15);
}

TEST(Collectives, HierarchicalAllReduceMovesExactlyItsBytesAcrossTheNics) {
  // 4 servers x 8 GPUs: every GPU sends 2(m-1) shards of S/(k·m) through its NIC, so the
  // NICs carry 2(m-1)·S out of the GPUs in all.
  const auto c = servers(4, 8);
  const double S = 256 * MiB;
  TaskGraph g;
  const auto group = all_hosts(c);
  const sim::DeviceId d = g.add_device("all", group);
  g.add_collective(g.add_participants({d}), g.stream("comm"), CollectiveOp::AllReduce, g.add_comm_set(CommSet{{group}}),
                   S, g.label("ar"), -1);
  g.finalize();
  EngineOptions o;
  o.collective_algorithm = "hierarchical";
  auto nic_out = [&](const Result& r) {
    double bytes = 0;
    for (int l = 0; l < c.network.link_count(); ++l) {
      const Link& link = c.network.link(l);
      if (link.name.size() > 4 && link.name.compare(link.name.size() - 4, 4, "/nic") == 0) bytes += r.link_bytes[2 * l];
    }
    return bytes;
  };
  EXPECT_NEAR(nic_out(AnalyticEngine().run(g, c.network, o)), 2 * 3 * S, 1e-3);
  o.fidelity = "step";
  EXPECT_NEAR(nic_out(SimGridEngine().run(g, c.network, o)), 2 * 3 * S, 1e-3);
}

double run_collective(const Network& net, const std::vector<int>& group, CollectiveOp op, double S,
                      const std::string& algo, const std::string& engine, const std::string& fidelity = "closed") {
  TaskGraph g;
  const sim::DeviceId d = g.add_device("all", group);
  g.add_collective(g.add_participants({d}), g.stream("comm"), op, g.add_comm_set(CommSet{{group}}), S, g.label("c"),
                   -1);
  g.finalize();
  EngineOptions o;
  o.collective_algorithm = algo;
  o.fidelity = fidelity;
  if (engine == "analytic") return AnalyticEngine().run(g, net, o).makespan_s;
  return SimGridEngine().run(g, net, o).makespan_s;
}

TEST(Collectives, FidelitiesAgreeWithoutContention) {
  // Where every step loads the links alike, flow (all steps' traffic at once) and step
  // (every transfer with its dependencies) both match the closed form: the ring on a
  // two-server cluster; direct and halving-doubling on one switch.
  const auto c = servers(2, 4, "    step_latency: 5 us\n");
  const Network sw = star(8, B, a, s);
  struct Case {
    const Network* net;
    std::vector<int> group;
    const char* algo;
    CollectiveOp op;
  } cases[] = {{&c.network, all_hosts(c), "ring", CollectiveOp::AllReduce},
               {&c.network, all_hosts(c), "ring", CollectiveOp::ReduceScatter},
               {&c.network, all_hosts(c), "ring", CollectiveOp::AllGather},
               {&sw, hosts(8), "direct", CollectiveOp::AllToAll},
               {&sw, hosts(8), "direct", CollectiveOp::AllReduce},
               {&sw, hosts(8), "halving-doubling", CollectiveOp::AllReduce},
               {&sw, hosts(8), "halving-doubling", CollectiveOp::AllGather}};
  for (const Case& k : cases) {
    const double ref = run_collective(*k.net, k.group, k.op, 64 * MiB, k.algo, "analytic");
    for (const char* f : {"closed", "flow", "step"})
      EXPECT_NEAR(run_collective(*k.net, k.group, k.op, 64 * MiB, k.algo, "simgrid", f) / ref, 1.0, 1e-3)
          << k.algo << " " << to_string(k.op) << " " << f;
  }
}

TEST(Collectives, MultiPhaseAlgorithmsAndTheirFidelities) {
  // Hierarchical runs its phases one after another; step keeps that order and matches the
  // closed form. The tree's closed form adds every step's slowest transfer as if all hosts
  // waited for each other; step lets a host go on once its own inputs arrived, so it is a
  // little faster, never slower. Flow plays all traffic at once: it overlaps phases that
  // use different links and is optimistic for both.
  const auto c = servers(2, 4);
  const auto group = all_hosts(c);
  const double S = 64 * MiB;
  for (const char* algo : {"tree", "hierarchical"}) {
    const double ref = run_collective(c.network, group, CollectiveOp::AllReduce, S, algo, "analytic");
    const double step = run_collective(c.network, group, CollectiveOp::AllReduce, S, algo, "simgrid", "step");
    const double flow = run_collective(c.network, group, CollectiveOp::AllReduce, S, algo, "simgrid", "flow");
    if (std::string(algo) == "hierarchical") {
      EXPECT_NEAR(step / ref, 1.0, 1e-3);
    }
    EXPECT_LE(step, ref * (1 + 1e-9)) << algo;
    EXPECT_GT(step, 0.9 * ref) << algo;
    EXPECT_LT(flow, step) << algo;
  }
}

TEST(Collectives, NvlsAllReduceIsTheSwitchsLatencyPlusTheBufferOverItsRate) {
  // 8 hosts on a switch that reduces at R after Lr: an all-reduce of S over all eight takes
  // s + Lr + S/R (each host's link carries S each way: S/B + a + s, shorter here), and
  // the ring yields to it; over four of the eight, or for an all-gather, the ring runs.
  Network net = star(8, B, a, s);
  const double R = 50e9, Lr = 20e-6, S = 64 * MiB;
  net.set_in_switch_reduction(0, R, Lr, 8);
  EXPECT_NEAR(closed("nvls", net, hosts(8), CollectiveOp::AllReduce, S), s + Lr + S / R, 1e-15);
  const auto ring = collective_algorithms().make("ring");
  const CollectiveAlgorithm& runs = algorithm_for(*ring, net, hosts(8), CollectiveOp::AllReduce);
  EXPECT_EQ(runs.name(), "nvls");
  EXPECT_EQ(algorithm_for(*ring, net, hosts(4), CollectiveOp::AllReduce).name(), "ring");
  EXPECT_EQ(algorithm_for(*ring, net, hosts(8), CollectiveOp::AllGather).name(), "ring");
  EXPECT_FALSE(collective_algorithms().make("nvls")->supports(star(8, B, a, s), hosts(8), CollectiveOp::AllReduce));
  std::vector<int> repeated = hosts(8);
  repeated[7] = repeated[0];  // eight entries, seven GPUs: not every GPU of the switch
  EXPECT_FALSE(collective_algorithms().make("nvls")->supports(net, repeated, CollectiveOp::AllReduce));
  // Every engine and fidelity plays the same time, and the links carry S out of and into
  // each host.
  for (const char* f : {"closed", "flow", "step"})
    EXPECT_NEAR(run_collective(net, hosts(8), CollectiveOp::AllReduce, S, "ring", "simgrid", f) / (s + Lr + S / R), 1.0,
                1e-3)
        << f;
  TaskGraph g;
  const sim::DeviceId d = g.add_device("all", hosts(8));
  g.add_collective(g.add_participants({d}), g.stream("comm"), CollectiveOp::AllReduce,
                   g.add_comm_set(CommSet{{hosts(8)}}), S, g.label("ar"), -1);
  g.finalize();
  const Result r = AnalyticEngine().run(g, net, EngineOptions{});
  EXPECT_NEAR(r.makespan_s, s + Lr + S / R, 1e-12);
  for (int l = 0; l < net.link_count(); ++l) {
    EXPECT_NEAR(r.link_bytes[2 * l], S, 1e-3) << net.link(l).name;
    EXPECT_NEAR(r.link_bytes[2 * l + 1], S, 1e-3) << net.link(l).name;
  }
}

TEST(Collectives, AutoPicksTheFastestAndSaysWhich) {
  const auto c = servers(4, 8);
  const auto group = all_hosts(c);
  const auto autopick = collective_algorithms().make("auto");
  for (double S : {64.0 * 1024, 1024 * MiB}) {
    const CollectiveAlgorithm& chosen = autopick->resolve(c.network, group, CollectiveOp::AllReduce, S);
    EXPECT_NE(chosen.name(), "auto");
    for (const char* other : {"ring", "tree", "direct", "hierarchical", "halving-doubling"}) {
      const auto alg = collective_algorithms().make(other);
      if (alg->supports(c.network, group, CollectiveOp::AllReduce)) {
        EXPECT_LE(chosen.time_s(c.network, group, CollectiveOp::AllReduce, S),
                  alg->time_s(c.network, group, CollectiveOp::AllReduce, S) * (1 + 1e-12))
            << other;
      }
    }
    EXPECT_DOUBLE_EQ(autopick->time_s(c.network, group, CollectiveOp::AllReduce, S),
                     chosen.time_s(c.network, group, CollectiveOp::AllReduce, S));
  }
}

}  // namespace
}  // namespace dejavu::sim
