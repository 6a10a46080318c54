// TeraPipe: token slices priced by their tokens, pipelined as a proportionate flow shop, and
// the slice lengths its dynamic program picks.
#include <gtest/gtest.h>

#include <functional>

#include "platforms/perf_model.h"
#include "strategies/lowering/token_slices.h"
#include "strategies/simulate.h"
#include "tests/strategies/lowering/test_clusters.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

// p layers of a GEMM (G FLOPs a sample) and a causal fused attention (A), 1024 tokens.
workloads::ModelGraph gemm_and_attention(int p, double G, double A) {
  workloads::ModelGraph g;
  g.name = "slices";
  g.layers = p;
  g.tokens_per_sample = 1024;
  int prev = -1;
  for (int l = 0; l < p; ++l) {
    workloads::Op gemm;
    gemm.name = "L" + std::to_string(l) + ".gemm";
    gemm.layer = l;
    gemm.fwd_flops = G, gemm.bwd_flops = 2 * G;
    workloads::Op attn = gemm;
    attn.name = "L" + std::to_string(l) + ".attention";
    attn.op_class = sim::OpClass::FlashAttention;
    attn.causal = true;
    attn.fwd_flops = A, attn.bwd_flops = 2 * A;
    const int a = g.add_op(gemm), b = g.add_op(attn);
    if (prev >= 0) g.add_edge(prev, a);
    g.add_edge(a, b);
    prev = b;
  }
  return g;
}

TEST(TeraPipe, StepIsTheProportionateFlowShopOfItsSlices) {
  // k = 4 equal slices of 256 tokens, m = 2 microbatches, p = 4 stages, sends free. Slice i
  // (offset 256 i) does G/4 of the GEMM and (2i + 1)/16 of the attention (its causal pairs);
  // each stage runs all 8 forwards, then all 8 backwards in reverse, so the step is
  //   m Σ_i (F_i + B_i) + (p − 1)(F_3 + B_3) + the optimizer step,
  // the last slice the heaviest, and the bubble (p − 1)(F_3 + B_3) of the pipeline's span.
  const int p = 4, m = 2, k = 4;
  const double G = 4e12, A = 2e12;
  const auto model = gemm_and_attention(p, G, A);
  const auto cluster = free_network(p);
  Plan plan;
  plan.pp = p;
  plan.global_batch_size = m;
  plan.schedule = "terapipe";
  plan.token_slice_count = k;
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  auto t = [&](sim::OpClass c, double flops) { return pm.time_s({c, flops, 0, sim::DType::BF16}); };
  double sum = 0, last = 0;
  for (int i = 0; i < k; ++i) {
    const double a = A * (2 * i + 1) / 16;
    last = t(sim::OpClass::Gemm, G / k) + t(sim::OpClass::FlashAttention, a) + t(sim::OpClass::Gemm, 2 * G / k) +
           t(sim::OpClass::FlashAttention, 2 * a);
    sum += last;
  }
  const double span = m * sum + (p - 1) * last;
  const double step = pm.time_s({sim::OpClass::Optimizer, 0, 0, sim::DType::BF16});
  for (const char* engine : {"analytic", "simgrid"}) {
    const Simulation s = simulate(model, cluster, plan, engine);
    EXPECT_NEAR(s.result.makespan_s, span + step, 1e-9 * span) << engine;
    EXPECT_NEAR(s.report.bubble_fraction, (p - 1) * last / span, 1e-9) << engine;
    EXPECT_EQ(s.report.token_slices, std::vector<int>(k, 256)) << engine;
  }
}

TEST(TeraPipe, OneSliceIsGPipe) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  const Plan gpipe = load_plan_file(src("strategies/presets/tp8-pp4-gpipe.yaml"));
  Plan tera = gpipe;
  tera.schedule = "terapipe";
  tera.token_slice_count = 1;
  for (const char* engine : {"analytic", "simgrid"})
    EXPECT_NEAR(simulate(model, cluster, tera, engine).result.makespan_s,
                simulate(model, cluster, gpipe, engine).result.makespan_s, 1e-12)
        << engine;
}

TEST(TeraPipe, DynamicProgramFindsTheBestCut) {
  // Against every cut of n = 10 units (2^9 of them): a fixed cost per slice, one per token
  // and one per causal query-key pair.
  const int n = 10;
  const std::function<double(int, int)> time = [](int a, int b) {
    const double l = b - a;
    return 3 + l + 0.4 * l * (a + l / 2);
  };
  for (auto [m, p] : {std::pair{1, 4}, {4, 8}, {8, 2}, {2, 16}}) {
    double best = 1e300;
    for (int mask = 0; mask < (1 << (n - 1)); ++mask) {
      std::vector<int> cut{0};
      for (int i = 1; i < n; ++i)
        if (mask & (1 << (i - 1))) cut.push_back(i);
      cut.push_back(n);
      best = std::min(best, lowering::cut_objective(cut, time, m, p));
    }
    const std::vector<int> cut = lowering::best_cut(n, time, m, p);
    ASSERT_GE(cut.size(), 2u);
    EXPECT_EQ(cut.front(), 0);
    EXPECT_EQ(cut.back(), n);
    EXPECT_NEAR(lowering::cut_objective(cut, time, m, p), best, 1e-9) << m << " x " << p;
  }
}

TEST(TeraPipe, LaterSlicesAreShorterWhereAttentionDominates) {
  // Causal attention makes a slice's cost grow with its offset; the dynamic program gives
  // the later slices fewer tokens.
  const auto model = gemm_and_attention(4, 1e10, 4e12);
  Plan plan;
  plan.pp = 4;
  plan.global_batch_size = 1;
  plan.schedule = "terapipe";
  const auto slices = lowering::token_slices(model, free_network(4), plan, "ring");
  ASSERT_GT(slices.count(), 1);
  EXPECT_TRUE(slices.chosen);
  EXPECT_GT(slices.lengths.front(), slices.lengths.back());
}

}  // namespace
}  // namespace dejavu::strategies
