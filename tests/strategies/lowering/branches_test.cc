#include "strategies/lowering/branches.h"

#include <gtest/gtest.h>

#include "strategies/simulate.h"
#include "tests/strategies/lowering/test_clusters.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

// The same ops in the same order, each reading only the one before: what every model
// was before the graph had branches.
workloads::ModelGraph as_chain(const workloads::ModelGraph& m) {
  workloads::ModelGraph c;
  c.name = m.name;
  c.layers = m.layers;
  c.heads = m.heads;
  c.experts = m.experts;
  c.boundary_bytes_per_sample = m.boundary_bytes_per_sample;
  c.dtype = m.dtype;
  c.tokens_per_sample = m.tokens_per_sample;
  c.global_batch_size = m.global_batch_size;
  int prev = -1;
  for (int v : m.topological_order()) {
    const int u = c.add_op(m.op(v));
    if (prev >= 0) c.add_edge(prev, u);
    prev = u;
  }
  return c;
}

// A DLRM in miniature: sharded lookups (an exchange after them, and of their gradients
// before their backward) beside a dense MLP, both read by a join.
workloads::ModelGraph lookups_beside_mlp() {
  workloads::ModelGraph g;
  g.name = "branches";
  g.layers = 1;
  g.heads = 1;
  g.experts = 2;
  auto op = [&](const std::string& name, int layer, double flops) {
    workloads::Op o;
    o.name = name;
    o.layer = layer;
    o.fwd_flops = flops;
    o.bwd_flops = 2 * flops;
    o.counts_as_model_flops = true;
    return o;
  };
  workloads::Op lookups = op("lookups", -1, 1e11);
  lookups.expert = true;
  lookups.ep_a2a_fwd_bytes = 1e6;
  lookups.ep_a2a_bwd_before_bytes = 1e6;
  const int a = g.add_op(lookups);
  const int m = g.add_op(op("mlp", -1, 4e12));
  const int j = g.add_op(op("join", 0, 1e12));
  g.add_edge(a, j);
  g.add_edge(m, j);
  return g;
}

struct Times {
  double start = -1, end = -1;
};
Times task(const Simulation& s, const std::string& label) {
  for (size_t i = 0; i < s.job.graph.size(); ++i) {
    const sim::Task& t = s.job.graph.task(static_cast<sim::TaskId>(i));
    if (s.job.graph.labels()[t.label] == label && t.tag == 0) return {s.result.start_s[i], s.result.end_s[i]};
  }
  ADD_FAILURE() << "no task " << label;
  return {};
}

// Forward: the lookups, then their exchange (x) beside the MLP's compute (m) on the
// in-order compute stream; the join waits for both: lookups' end + max(x, m), where the
// chain waited x + m. Backward: the join, then the gradients' exchange beside the MLP's
// backward; the lookups' backward waits for both. L small and large puts either branch on
// the critical path.
TEST(Branches, AnExchangeRunsBesideTheOtherBranchsCompute) {
  for (double L : {1e-5, 0.05}) {
    const workloads::ModelGraph model = lookups_beside_mlp();
    const platforms::Cluster cluster = free_network(2, 1e300, L);
    Plan plan;
    plan.dp = 2;
    plan.ep = 2;
    plan.global_batch_size = 2;
    plan.comm_sms = 0;  // the exchanges leave the compute beside them every SM
    const Simulation s = simulate(model, cluster, plan);
    const Times lookups = task(s, "fwd lookups"), mlp = task(s, "fwd mlp"), join = task(s, "fwd join");
    const Times x = task(s, "ep all_to_all after fwd lookups");
    const double m = mlp.end - mlp.start, xf = x.end - x.start;
    EXPECT_NEAR(x.start, lookups.end, 1e-12) << L;
    EXPECT_NEAR(mlp.start, lookups.end, 1e-12) << L;
    EXPECT_NEAR(join.start, lookups.end + std::max(xf, m), 1e-12) << L;

    const Times join_b = task(s, "bwd join"), mlp_b = task(s, "bwd mlp"), lookups_b = task(s, "bwd lookups");
    const Times xb = task(s, "ep all_to_all before bwd lookups");
    EXPECT_NEAR(xb.start, join_b.end, 1e-12) << L;
    EXPECT_NEAR(mlp_b.start, join_b.end, 1e-12) << L;
    EXPECT_NEAR(lookups_b.start, join_b.end + std::max(xb.end - xb.start, mlp_b.end - mlp_b.start), 1e-12) << L;

    // The same ops as a chain: each exchange waits for the compute before it and holds up
    // the compute after it.
    const Simulation chain = simulate(as_chain(model), cluster, plan);
    const double saved = std::min(xf, m) + std::min(xb.end - xb.start, mlp_b.end - mlp_b.start);
    EXPECT_GT(saved, 0);
    EXPECT_NEAR(chain.result.makespan_s - s.result.makespan_s, saved, 1e-9) << L;
  }
}

// Prices on the chain-shaped presets stay what they were before the graph had branches:
// residual connections beside attention and the MLP add edges no cut or overlap depends on.
TEST(Branches, ChainShapedModelsPriceAsTheirChains) {
  struct Case {
    const char *platform, *workload, *plan;
  } cases[] = {
      {"dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-1f1b"},
      {"dgx-a100-4x8", "llama3-8b", "tp4-cp2-pp2-dp2"},
      {"dgx-a100-4x8", "mixtral-8x7b", "tp4-pp2-dp4-ep4"},
      {"dgx-a100-1x8", "resnet50", "dp8-mb128"},
      {"dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-interleaved-sp"},
  };
  for (const Case& c : cases) {
    const auto model = workloads::load_workload_file(src("workloads/presets/" + std::string(c.workload) + ".yaml"));
    const auto cluster = platforms::load_cluster_file(src("platforms/presets/" + std::string(c.platform) + ".yaml"));
    const Plan plan = load_plan_file(src("strategies/presets/" + std::string(c.plan) + ".yaml"));
    const Simulation dag = simulate(model, cluster, plan), chain = simulate(as_chain(model), cluster, plan);
    EXPECT_EQ(dag.job.graph.size(), chain.job.graph.size()) << c.workload;
    EXPECT_EQ(dag.result.makespan_s, chain.result.makespan_s) << c.workload;
    EXPECT_EQ(dag.report.devices.front().peak_memory_bytes, chain.report.devices.front().peak_memory_bytes)
        << c.workload;
  }
}

// Segments issue in a topological order of what they wait for; among the ready ones, a
// segment that waits for no collective goes before one that does.
TEST(Branches, ReadySegmentsWaitingForNoCollectiveIssueFirst) {
  std::vector<Segment> segs(4);
  segs[1].ep_before_per_sample = 1;  // a root, but its exchange comes first
  segs[2].after = {{0, false}};      // reads a middle op of 0: its compute is enough
  segs[3].after = {{1, true}, {2, true}};
  EXPECT_EQ(lowering::issue_order(segs), (std::vector<size_t>{0, 2, 1, 3}));
  std::vector<Segment> chain(3);
  chain[1].after = {{0, true}};
  chain[2].after = {{1, true}};
  EXPECT_EQ(lowering::issue_order(chain), (std::vector<size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace dejavu::strategies
