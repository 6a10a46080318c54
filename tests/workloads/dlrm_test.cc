#include "workloads/dlrm.h"

#include <gtest/gtest.h>

#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::workloads {
namespace {

using dejavu::testing::src;

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

// Two table groups sharded their own ways: each sharding is one lookup op holding its
// groups' tables, with its own exchange (the column-wise group's pooled vectors all-to-all'd:
// 4 tables x 16 wide x 4 bytes x 10 samples; the replicated group none), expert parallelism
// must divide the column-wise group's 16 columns, and the model holds every table.
TEST(Dlrm, TableGroupsShardedTheirOwnWays) {
  const std::string tables =
      "kind: dlrm\nbottom_mlp: [32, 16]\ntop_mlp: [8, 1]\ntables:\n"
      "  - {count: 4, rows: 100000, dim: 16, pooling: 4, sharding: column-wise}\n"
      "  - {count: 4, rows: 100, dim: 16, pooling: 4, sharding: data-parallel}\n";
  const ModelGraph g = load_workload(ConfigNode::load_string(tables, "two.yaml"));
  EXPECT_EQ(g.embedding_sharding, (std::vector<std::string>{"column-wise", "data-parallel"}));
  EXPECT_EQ(g.experts, 16);
  std::vector<std::string> lookups;
  double table_params = 0;
  for (int v = 0; v < static_cast<int>(g.size()); ++v)
    if (g.op(v).name.rfind("embedding_lookup", 0) == 0) {
      lookups.push_back(g.op(v).name);
      table_params += g.op(v).params;
      EXPECT_EQ(g.op(v).ep_a2a_fwd_bytes, g.op(v).expert ? 4 * 16 * 4 : 0) << g.op(v).name;
    }
  EXPECT_EQ(lookups, (std::vector<std::string>{"embedding_lookup.column-wise", "embedding_lookup.data-parallel"}));
  EXPECT_DOUBLE_EQ(table_params, 4.0 * 100000 * 16 + 4.0 * 100 * 16);
}

// A plan's embedding_sharding regenerates the model as the workload with that `sharding`
// would be: the same step, for every sharding.
TEST(Dlrm, APlansShardingIsTheWorkloadsShardingOverridden) {
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  const ModelGraph loaded = load_workload_file(src("workloads/presets/dlrm-criteo.yaml"));
  ASSERT_EQ(loaded.embedding_sharding, (std::vector<std::string>{"column-wise"}));
  for (const std::string& mode : embedding_shardings()) {
    strategies::Plan plan;
    plan.dp = 8;
    plan.ep = mode == "data-parallel" ? 1 : 2;
    plan.micro_batch_size = 2048;
    plan.global_batch_size = 16384;
    std::string yaml = read_input_file(src("workloads/presets/dlrm-criteo.yaml"));
    yaml.replace(yaml.find("sharding: column-wise"), 21, "sharding: " + mode);
    const ModelGraph direct = load_workload(ConfigNode::load_string(yaml, "w.yaml"));
    const ModelGraph regenerated = with_embedding_sharding(loaded, {mode});
    EXPECT_EQ(regenerated.embedding_sharding, (std::vector<std::string>{mode}));
    EXPECT_EQ(regenerated.experts, direct.experts) << mode;
    const double a = strategies::simulate(direct, cluster, plan).report.iteration_time_s;
    const double b = strategies::simulate(regenerated, cluster, plan).report.iteration_time_s;
    EXPECT_DOUBLE_EQ(a, b) << mode;
  }
}

}  // namespace
}  // namespace dejavu::workloads
