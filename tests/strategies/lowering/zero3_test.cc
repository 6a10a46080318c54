// ZeRO-3 (FSDP) and hybrid sharding as lower() emits them, on layer chains small enough to
// price by hand: the gathers' prefetch, FSDP's backward prefetch and issue order, resharding,
// and HSDP's groups.
#include <gtest/gtest.h>

#include <string>

#include "platforms/perf_model.h"
#include "strategies/lowering.h"
#include "strategies/simulate.h"
#include "tests/strategies/lowering/test_clusters.h"
#include "tests/strategies/lowering/test_models.h"

namespace dejavu::strategies {
namespace {

// ZeRO-3 over two replicas, one sample each.
Plan zero3_dp2() {
  Plan plan;
  plan.dp = 2;
  plan.global_batch_size = 2;
  plan.zero = 3;
  return plan;
}

// n layers of F FLOPs and Q bf16 parameters (weighted_layers) over dp 2 on free links of
// `link_Bps`, with each layer's forward f and backward b and the optimizer step priced alone.
struct Zero3Case {
  workloads::ModelGraph model;
  platforms::Cluster cluster;
  double f, b, step;
};

Zero3Case zero3_case(int n, double F, double Q, double link_Bps) {
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  return {weighted_layers(n, F, Q), free_network(2, link_Bps),
          pm.time_s({sim::OpClass::Gemm, F, 2 * Q, sim::DType::BF16}),
          pm.time_s({sim::OpClass::Gemm, 2 * F, 4 * Q, sim::DType::BF16}),
          pm.time_s(
              {sim::OpClass::Optimizer, 0, n * Q / 2 * optimizer_bytes_per_param(sim::DType::BF16), sim::DType::BF16})};
}

TEST(Zero3, TheNextLayersGatherRunsUnderThisLayersCompute) {
  // 4 layers of Q = 1e9 bf16 parameters over dp 2 on 1000 GB/s links with no latency: each
  // gather (ring, 2 GPUs) moves S/2 = 1 GB, g = 1 ms, less than any layer's compute, and so
  // does each layer's gradient reduce-scatter. With one layer of prefetch only the first
  // gather is exposed: g + 4f + 4b + r + step. Without prefetch each of the 8 passes waits
  // for its gather: 7 g more.
  const double g = 1e-3;
  const auto [model, cluster, f, b, step] = zero3_case(4, 4e12, 1e9, 1e12);
  Plan plan = zero3_dp2();
  ASSERT_GT(f, g);
  // Hand-worked with every collective priced alone (the prefetched gather and the previous
  // layer's reduce-scatter share the links on the default engine).
  const Simulation ahead = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(ahead.result.makespan_s, g + 4 * f + 4 * b + g + step, 1e-9);
  plan.zero_prefetch = 0;
  const Simulation none = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(none.result.makespan_s - ahead.result.makespan_s, 7 * g, 1e-9);
}

TEST(Zero3, HybridShardingGathersInsideItsGroupAndAllReducesTheShardAcrossGroups) {
  // The layers of TheNextLayersGatherRunsUnderThisLayersCompute over dp 4 on four GPUs,
  // sharded in groups of two (HSDP). Each gather and reduce-scatter runs in a ring of 2 and
  // moves S/2 = 1 GB (g = 1 ms, as at dp 2); each reduced shard (1 GB) is then all-reduced
  // with the other group's, a ring of 2 moving 2(n-1)/n x 1 GB: g again. Each GPU steps
  // half the model, as at dp 2. All of it runs under the compute but the first gather and
  // the last layer's reduce-scatter and all-reduce: g + 4f + 4b + 2g + step.
  const double g = 1e-3;
  const auto [model, dp2_cluster, f, b, step] = zero3_case(4, 4e12, 1e9, 1e12);
  const auto cluster = free_network(4, 1e12);
  Plan plan = zero3_dp2();
  plan.dp = 4;
  plan.global_batch_size = 4;
  plan.dp_shard = 2;
  ASSERT_GT(b, 3 * g);  // a backward layer's gather, reduce-scatter and all-reduce fit under it
  const Simulation s = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(s.result.makespan_s, g + 4 * f + 4 * b + 2 * g + step, 1e-9);
  size_t across = 0;
  for (const sim::Task& t : s.job.graph.tasks())
    if (s.job.graph.labels()[t.label].find("across shard groups") != std::string::npos) {
      ++across;
      EXPECT_EQ(t.bytes, 1e9);  // half of a layer's 2 GB of bf16 gradients
    }
  EXPECT_EQ(across, 4u);  // one per layer
}

TEST(Zero2, HybridShardingReducesInsideItsGroupThenAcrossAndGathersInsideIt) {
  // The same four layers (4Q = 4e9 bf16 parameters, 8 GB of gradients and of weights) over dp
  // 4 in groups of two at ZeRO-2, one reduction after the backward: the reduce-scatter in a
  // ring of 2 moves 4 GB (4 ms at 1e12 B/s), the 4 GB shard all-reduced across the groups
  // in a ring of 2 moves 4 GB (4 ms), each GPU steps half the model (the step of dp 2), and
  // the updated weights all-gathered in the group move 4 GB (4 ms): 4f + 4b + 12 ms + step.
  const double g = 4e-3;
  const auto [model, dp2_cluster, f, b, step] = zero3_case(4, 4e12, 1e9, 1e12);
  Plan plan = zero3_dp2();
  plan.zero = 2;
  plan.dp = 4;
  plan.global_batch_size = 4;
  plan.dp_shard = 2;
  const Simulation s = simulate(model, free_network(4, 1e12), plan, "analytic-no-contention");
  EXPECT_NEAR(s.result.makespan_s, 4 * f + 4 * b + 3 * g + step, 1e-9);
}

TEST(Zero3, BackwardPrefetchPostAndNoneWaitForTheLayerBefore) {
  // The layers of TheNextLayersGatherRunsUnderThisLayersCompute (g = 1 ms < f, b), as
  // PyTorch documents FSDP's backward_prefetch. post: each backward gather is issued after
  // the previous layer's compute (the last forward, then each backward) and runs alone,
  // while the previous layer's reduce-scatter runs under this layer's backward: 4 g more
  // than pre. none: the gather also waits for that reduce-scatter, which waits for the
  // previous backward: the first backward layer pays g, the three after it 2 g each, 7 g.
  const double g = 1e-3;
  const auto [model, cluster, f, b, step] = zero3_case(4, 4e12, 1e9, 1e12);
  Plan plan = zero3_dp2();
  ASSERT_GT(f, 2 * g);
  const double pre = simulate(model, cluster, plan, "analytic-no-contention").result.makespan_s;
  plan.zero_backward_prefetch = "post";
  const double post = simulate(model, cluster, plan, "analytic-no-contention").result.makespan_s;
  EXPECT_NEAR(post - pre, 4 * g, 1e-9);
  plan.zero_backward_prefetch = "none";
  const double none = simulate(model, cluster, plan, "analytic-no-contention").result.makespan_s;
  EXPECT_NEAR(none - pre, 7 * g, 1e-9);
}

TEST(Zero3, GathersAndReductionsTakeTurnsOnOneStreamInFsdpsIssueOrder) {
  // PyTorch runs a process group's collectives on one NCCL stream, in issue order, and FSDP
  // issues the next block's gather before this block's reduce-scatter. 2 layers over dp 2,
  // every gather and reduce-scatter g = 10 ms (1 GB over 100 GB/s), longer than any pass
  // (f, b < g), one layer of prefetch. The stream runs G1 G2 | G2' G1' R2 R1 back to back:
  // G1' waits for F2 to end (2g + f < 3g), R2 for B2 (3g + b < 4g), R1 for B1 (4g + b < 5g),
  // so the step is 6g + the optimizer step. (On streams of their own the reductions
  // would run beside the gathers: 5g + b + step.)
  const double g = 1e-2;
  const auto [model, cluster, f, b, step] = zero3_case(2, 1e12, 1e9, 1e11);
  const Plan plan = zero3_dp2();
  ASSERT_LT(f, g);
  ASSERT_LT(b, g);
  for (const char* engine : {"analytic", "analytic-no-contention"}) {
    const Simulation s = simulate(model, cluster, plan, engine);
    EXPECT_NEAR(s.result.makespan_s, 6 * g + step, 1e-9) << engine;
  }
}

TEST(Zero3, WithoutReshardingAfterTheForwardTheBackwardGathersNothing) {
  // The two layers of GathersAndReductionsTakeTurnsOnOneStreamInFsdpsIssueOrder (g = 10 ms
  // longer than any pass), kept gathered from forward to backward (FSDP's SHARD_GRAD_OP).
  // The stream runs G1 G2 | R2 R1: F1 waits for G1 (g), F2 for G2 (2g), B2 follows F2 and
  // B1 follows B2 at once (nothing to gather); R2 waits for B2 (2g + f + b), R1 for R2 on
  // the stream (3g + f + b), so the step is 4g + f + b + the optimizer step, where
  // resharding pays 6g.
  const double F = 1e12, Q = 1e9, g = 1e-2;
  const auto [model, cluster, f, b, step] = zero3_case(2, F, Q, 1e11);
  Plan plan = zero3_dp2();
  ASSERT_LT(f, g);
  ASSERT_LT(b, g);
  const Simulation resharded = simulate(model, cluster, plan, "analytic-no-contention");
  plan.zero_reshard_after_forward = false;
  const Simulation kept = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(kept.result.makespan_s, 4 * g + f + b + step, 1e-9);
  EXPECT_NEAR(resharded.result.makespan_s, 6 * g + step, 1e-9);
  // Four such layers: the peak is at the turn from forward to backward, every layer's
  // activations held, where resharding holds prefetch + 1 = 2 gathered layers and keeping
  // all 4: 2 x Q x 2 B x (dp - 1) / dp more.
  const auto four = weighted_layers(4, F, Q);
  Plan p4 = zero3_dp2();
  const double r4 = simulate(four, cluster, p4, "analytic-no-contention").report.peak_memory_bytes;
  p4.zero_reshard_after_forward = false;
  const double k4 = simulate(four, cluster, p4, "analytic-no-contention").report.peak_memory_bytes;
  EXPECT_NEAR(k4 - r4, 2 * Q * 2 / 2, 1e-6 * k4);
}

}  // namespace
}  // namespace dejavu::strategies
