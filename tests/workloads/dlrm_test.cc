#include "workloads/dlrm.h"

#include <gtest/gtest.h>

#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace dejavu::workloads {
namespace {

std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

double mlp_params(std::vector<int> widths) {
  double p = 0;
  for (size_t i = 1; i < widths.size(); ++i) p += static_cast<double>(widths[i - 1]) * widths[i] + widths[i];
  return p;
}

TEST(Dlrm, ParametersByHand) {
  const ModelGraph g = load_workload_file(src("workloads/presets/dlrm-criteo.yaml"));
  // 26 tables of 4e6 x 128; bottom 13-512-256-128; top (128 + 27·26/2 = 479)-1024-1024-512-256-1
  const double expected =
      26.0 * 4e6 * 128 + mlp_params({13, 512, 256, 128}) + mlp_params({479, 1024, 1024, 512, 256, 1});
  EXPECT_DOUBLE_EQ(g.parameter_count(), expected);
}

std::vector<sim::Task> exchanges(const std::string& sharding) {
  const auto model = load_workload(ConfigNode::load_string(
      "kind: dlrm\ntables: [{count: 8, rows: 1000, dim: 16, pooling: 4}]\nbottom_mlp: [32, 16]\ntop_mlp: [8, 1]\n"
      "sharding: " +
          sharding + "\n",
      "d.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  strategies::Plan plan;
  plan.dp = 8;
  plan.ep = sharding == "data-parallel" ? 1 : 4;  // replicated tables are not sharded
  plan.micro_batch_size = 10;
  plan.global_batch_size = 80;
  const auto s = strategies::simulate(model, cluster, plan);
  std::vector<sim::Task> out;
  for (const auto& t : s.job.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && s.job.graph.stream_names()[t.stream] == "ep-comm") out.push_back(t);
  return out;
}

TEST(Dlrm, ShardingDecidesTheExchange) {
  // Each sample's 8 pooled 16-wide fp32 vectors: 512 bytes, 10 samples per micro-batch.
  auto tw = exchanges("table-wise");
  ASSERT_EQ(tw.size(), 2u);  // forward and backward
  for (const auto& t : tw) {
    EXPECT_EQ(t.op, sim::CollectiveOp::AllToAll);
    EXPECT_DOUBLE_EQ(t.bytes, 512 * 10);
  }
  // Row-wise: partial sums for every sample of the 4 GPUs, reduce-scattered; gradients all-gathered.
  auto rw = exchanges("row-wise");
  ASSERT_EQ(rw.size(), 2u);
  EXPECT_EQ(rw[0].op, sim::CollectiveOp::ReduceScatter);
  EXPECT_EQ(rw[1].op, sim::CollectiveOp::AllGather);
  EXPECT_DOUBLE_EQ(rw[0].bytes, 512 * 10 * 4);
  EXPECT_TRUE(exchanges("data-parallel").empty());
}

}  // namespace
}  // namespace dejavu::workloads
