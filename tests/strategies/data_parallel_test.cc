#include "strategies/data_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/config_node.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct DataParallelFixture : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan plan() const {
    Plan p;
    p.dp = 8;
    p.global_batch_size = 8;
    return p;
  }
  // Bytes through each GPU's NVSwitch link, both directions, over the iteration.
  std::vector<double> gpu_link_bytes(const Plan& p) {
    const Simulation s = simulate(model, cluster, p);
    std::vector<double> out;
    for (const auto& slot : cluster.gpus)
      for (int l = 0; l < cluster.network.link_count(); ++l)
        if (cluster.network.link(l).a == slot.host &&
            cluster.network.link(l).name.find("nvswitch") != std::string::npos)
          out.push_back(s.result.link_bytes[2 * l] + s.result.link_bytes[2 * l + 1]);
    return out;
  }
};

TEST_F(DataParallelFixture, OneParameterServersLinkCarriesTwiceTheGradientPerWorker) {
  Plan p = plan();
  p.data_parallel.sync = "parameter-server";
  const double S = model.parameter_count() * 2;  // bf16 gradients
  const auto bytes = gpu_link_bytes(p);
  ASSERT_EQ(bytes.size(), 8u);
  EXPECT_NEAR(bytes[0] / (2 * S * 7), 1.0, 1e-9);  // the server: 7 workers push, 7 pull
  EXPECT_NEAR(bytes[1] / (2 * S), 1.0, 1e-9);      // a worker: one push, one pull
}

TEST_F(DataParallelFixture, RollingParameterServerSpreadsTheLoadOverEveryWorker) {
  Plan p = plan();
  p.data_parallel.sync = "rolling-parameter-server";
  const double S = model.parameter_count() * 2;
  for (double b : gpu_link_bytes(p)) EXPECT_NEAR(b / (2 * S * 7 / 8 * 2), 1.0, 1e-9);
  // as server of one shard: 7 pushes and 7 pulls of S/8; as worker of 7: one of each
}

TEST_F(DataParallelFixture, GossipIsSeededAndSendsTheWholeGradientToEachPeer) {
  Plan p = plan();
  p.data_parallel.sync = "gossip";
  p.data_parallel.peers = 2;
  const double S = model.parameter_count() * 2;
  const auto a = gpu_link_bytes(p), b = gpu_link_bytes(p);
  EXPECT_EQ(a, b);
  double total = 0;
  for (double x : a) total += x;
  EXPECT_NEAR(total / (8 * 2 * S * 2), 1.0, 1e-9);  // 16 transfers of S, each leaving one link and entering one
  p.data_parallel.step = 1;
  EXPECT_NE(gpu_link_bytes(p), a);  // partners are drawn afresh each step
}

// Eight servers of one GPU behind a 100 Gbps NIC each, no latency anywhere: every
// exchange is limited by the NICs, B = 12.5 GB/s.
struct EightNics : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 8\n    gpu: A100-SXM-80GB\n    gpus_per_server: 1\n"
      "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 0 us}\n"
      "    nic: {bandwidth: 100 Gbps, latency: 0 us}\nnetwork: {kind: fat-tree, latency: 0 us}\n",
      "eight.yaml"));
  const double B = 12.5e9, S = model.parameter_count() * 2;  // bf16 gradients
  // The time from the first gradient exchange's start to the last one's end.
  double exchange_s(const std::string& sync, int peers, const std::string& engine) {
    Plan p;
    p.dp = 8;
    p.global_batch_size = 8;
    p.data_parallel.sync = sync;
    p.data_parallel.peers = peers;
    const Simulation s = simulate(model, cluster, p, engine);
    double from = 1e300, to = 0;
    for (size_t i = 0; i < s.job.graph.size(); ++i)
      if (s.job.graph.task(static_cast<sim::TaskId>(i)).kind != sim::TaskKind::Compute) {
        from = std::min(from, s.result.start_s[i]);
        to = std::max(to, s.result.end_s[i]);
      }
    return to - from;
  }
};

TEST_F(EightNics, ExchangeTimesAreTheBusiestNicsBytesOverItsBandwidth) {
  // One parameter server: 7 workers push S through its NIC, then pull S back: 14 S / B.
  // Rolling: each GPU serves an eighth and sends 7 eighths: 2 · 7/8 S / B, as a ring
  // all-reduce. Gossip with 7 peers: every GPU sends S to each other one: 7 S / B.
  // (SimGrid shares a link among the flows crossing it; these are its hand-worked values.)
  const std::string engine = "simgrid";
  EXPECT_NEAR(exchange_s("parameter-server", 1, engine), 14 * S / B, 1e-6 * 14 * S / B);
  EXPECT_NEAR(exchange_s("rolling-parameter-server", 1, engine), 2 * 7 * S / 8 / B, 1e-6 * S / B);
  EXPECT_NEAR(exchange_s("all-reduce", 1, engine), 2 * 7 * S / 8 / B, 1e-6 * S / B);
  EXPECT_NEAR(exchange_s("gossip", 7, engine), 7 * S / B, 1e-6 * 7 * S / B);
}

TEST_F(EightNics, TheReportNeverCallsALinkMoreThanBusyAndSaysWhatItsTrafficNeeds) {
  // Gossip with 7 peers sends 7 S through every NIC. Priced alone (analytic-no-contention)
  // each of the 7 transfers gets the whole NIC, so in its iteration time T the NIC would need
  // 7 S / (B T) > 1: the report says so and calls it 100% busy, never more. The default
  // engine shares the NIC among them, so that demand stays within 1.
  Plan p;
  p.dp = 8;
  p.global_batch_size = 8;
  p.data_parallel.sync = "gossip";
  p.data_parallel.peers = 7;
  for (const char* engine : {"analytic-no-contention", "analytic"}) {
    SCOPED_TRACE(engine);
    const Simulation s = simulate(model, cluster, p, engine);
    const double T = s.report.iteration_time_s, demand = 7 * S / (B * T);
    EXPECT_NEAR(s.report.busiest_link.demand, demand, 1e-9 * demand);
    EXPECT_EQ(s.report.busiest_link.utilization, std::min(demand, 1.0));
    if (std::string(engine) == "analytic") {
      EXPECT_LE(demand, 1 + 1e-9);
    } else {
      EXPECT_GT(demand, 1);
    }
  }
}

TEST(Compression, WireBytesFollowTheEncodings) {
  Plan::DataParallel c;
  const double S = 2e9;  // 1e9 bf16 gradients
  c.compression = "1bit";
  EXPECT_DOUBLE_EQ(compress(c, S, sim::DType::BF16, {}).wire_bytes, 1e9 / 8);
  c.compression = "terngrad";
  EXPECT_DOUBLE_EQ(compress(c, S, sim::DType::BF16, {}).wire_bytes, 1e9 / 4);
  c.compression = "topk";
  c.density = 0.01;
  const Compression topk = compress(c, S, sim::DType::BF16, {});
  EXPECT_DOUBLE_EQ(topk.wire_bytes, 0.01 * 1e9 * (2 + 4));
  EXPECT_TRUE(topk.sparse);
  c.compression = "powersgd";
  c.rank = 4;
  // one 1000 x 500 matrix (1e6 bytes) among 2e9 bytes of gradients: factors 4·1500·2 bytes
  const Compression psgd = compress(c, S, sim::DType::BF16, {{1000, 500}});
  EXPECT_DOUBLE_EQ(psgd.wire_bytes, S - 1e6 + 4 * 1500 * 2);
  EXPECT_DOUBLE_EQ(psgd.kernel.flops, 4 * 4 * 1000 * 500);
}

TEST_F(DataParallelFixture, CompressionShrinksTheGradientExchange) {
  Plan p = plan();
  const double plain = simulate(model, cluster, p).report.iteration_time_s;
  p.data_parallel.compression = "1bit";
  const Simulation s = simulate(model, cluster, p);
  EXPECT_LT(s.report.iteration_time_s, plain);
  bool compressed = false;
  for (const auto& t : s.job.graph.tasks())
    compressed = compressed || s.job.graph.labels()[t.label] == "compress gradients (1bit)";
  EXPECT_TRUE(compressed);
}

TEST_F(DataParallelFixture, BucketsOverlapTheGradientAllReduceWithTheBackward) {
  Plan p = plan();
  const Simulation whole = simulate(model, cluster, p);
  p.data_parallel.bucket_bytes = 25e6;
  const Simulation bucketed = simulate(model, cluster, p);
  EXPECT_LT(bucketed.report.iteration_time_s, whole.report.iteration_time_s);
  std::vector<double> sizes;
  for (const auto& t : bucketed.job.graph.tasks())
    if (bucketed.job.graph.labels()[t.label] == "dp gradient bucket") sizes.push_back(t.bytes);
  ASSERT_GT(sizes.size(), 10u);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_GE(sizes[i], 25e6);  // only the last may be short
  double bytes = 0;
  for (double x : sizes) bytes += x;
  EXPECT_NEAR(bytes, model.parameter_count() * 2, 1);  // every gradient, once
}

}  // namespace
}  // namespace dejavu::strategies
