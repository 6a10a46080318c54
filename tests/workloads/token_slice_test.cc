#include "workloads/token_slice.h"

#include <gtest/gtest.h>

#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::workloads {
namespace {

using dejavu::testing::src;

// A 1024-token model: a GEMM, a causal fused attention and an unfused one, figures per sample.
ModelGraph three_ops() {
  ModelGraph g;
  g.name = "three";
  g.layers = 1;
  g.tokens_per_sample = 1024;
  g.boundary_bytes_per_sample = 4096;
  Op gemm;
  gemm.name = "gemm";
  gemm.fwd_flops = 8e9, gemm.bwd_flops = 16e9, gemm.fwd_bytes = 1e6, gemm.activation_bytes = 2e6;
  gemm.weight_bytes = 5e5, gemm.params = 2.5e5, gemm.tp_sync_bytes = 3e6;
  Op flash = gemm;
  flash.name = "flash";
  flash.op_class = sim::OpClass::FlashAttention;
  flash.causal = true;
  Op unfused = flash;
  unfused.name = "unfused";
  unfused.op_class = sim::OpClass::Attention;
  unfused.selective_recompute_bytes = 1.5e6;  // the stored scores, part of activation_bytes
  g.add_op(gemm);
  g.add_op(flash);
  g.add_op(unfused);
  return g;
}

TEST(TokenSlice, LinearOpsScaleByTokensAttentionByTheQueryKeyPairs) {
  // Tokens [512, 768) of 1024: l = 256, o = 512. Causal pairs l·o + l²/2 = 163,840 of
  // s²/2 = 524,288 (0.3125); the unfused rectangle l(o + l) = 196,608 of s² (0.1875).
  const ModelGraph s = token_slice(three_ops(), 512, 256);
  EXPECT_DOUBLE_EQ(s.op(0).fwd_flops, 2e9);
  EXPECT_DOUBLE_EQ(s.op(0).bwd_flops, 4e9);
  EXPECT_DOUBLE_EQ(s.op(0).activation_bytes, 5e5);
  EXPECT_DOUBLE_EQ(s.op(0).tp_sync_bytes, 7.5e5);
  EXPECT_DOUBLE_EQ(s.op(0).weight_bytes, 5e5);  // weights are read whole
  EXPECT_DOUBLE_EQ(s.op(0).params, 2.5e5);
  EXPECT_DOUBLE_EQ(s.op(1).fwd_flops, 8e9 * 0.3125);
  EXPECT_DOUBLE_EQ(s.op(1).bwd_flops, 16e9 * 0.3125);
  // Q and O of 256 tokens, K and V of 768: (2·256 + 512) / 2048 of the traffic.
  EXPECT_DOUBLE_EQ(s.op(1).fwd_bytes, 1e6 * 0.5);
  EXPECT_DOUBLE_EQ(s.op(1).activation_bytes, 5e5);
  EXPECT_DOUBLE_EQ(s.op(2).fwd_flops, 8e9 * 0.1875);
  EXPECT_DOUBLE_EQ(s.op(2).fwd_bytes, 1e6 * 0.1875);
  // Scores by the rectangle, the other 0.5 MB by the tokens.
  EXPECT_DOUBLE_EQ(s.op(2).selective_recompute_bytes, 1.5e6 * 0.1875);
  EXPECT_DOUBLE_EQ(s.op(2).activation_bytes, 5e5 * 0.25 + 1.5e6 * 0.1875);
  EXPECT_DOUBLE_EQ(s.boundary_bytes_per_sample, 1024);
  EXPECT_DOUBLE_EQ(s.tokens_per_sample, 256);
}

TEST(TokenSlice, CausalSlicesAddUpToTheWholeSequence) {
  // Any cut: Σ (2 l_i o_i + l_i²) = (Σ l_i)² = s².
  const ModelGraph whole = three_ops();
  double flash = 0, gemm = 0, offset = 0;
  for (double l : {100.0, 300.0, 24.0, 600.0}) {
    const ModelGraph s = token_slice(whole, offset, l);
    flash += s.op(1).fwd_flops;
    gemm += s.op(0).fwd_flops;
    offset += l;
  }
  EXPECT_NEAR(flash, 8e9, 1e-3);
  EXPECT_NEAR(gemm, 8e9, 1e-3);
  // Unfused skips the masked rectangles above the diagonal: Σ l_i(o_i + l_i) = (s² + Σ l_i²) / 2.
  EXPECT_NEAR(token_slice(whole, 0, 512).op(2).fwd_flops + token_slice(whole, 512, 512).op(2).fwd_flops, 8e9 * 0.75,
              1e-3);
}

TEST(TokenSlice, OnlyCausalLanguageModelsSlice) {
  EXPECT_TRUE(sliceable_by_tokens(load_workload_file(src("workloads/presets/llama3-8b.yaml"))));
  EXPECT_TRUE(sliceable_by_tokens(load_workload_file(src("workloads/presets/gpt3-13b.yaml"))));
  EXPECT_FALSE(sliceable_by_tokens(load_workload_file(src("workloads/presets/bert-large.yaml"))));
  EXPECT_FALSE(sliceable_by_tokens(load_workload_file(src("workloads/presets/resnet50.yaml"))));
}

}  // namespace
}  // namespace dejavu::workloads
