#include "workloads/op_builders.h"

#include <gtest/gtest.h>

#include <sstream>

#include "platforms/perf_model.h"
#include "strategies/lowering.h"
#include "workloads/inspect.h"
#include "workloads/transformer.h"

namespace dejavu::workloads {
namespace {

TransformerConfig gpt(AttentionKind kind) {
  TransformerConfig c;
  c.name = "gpt";
  c.layers = 2;
  c.hidden = 2048;
  c.heads = 16;
  c.seq_len = 2048;
  c.vocab = 51200;
  c.attention = kind;
  return c;
}

double layer_activation(const ModelGraph& g) {
  double sum = 0;
  for (size_t v = 0; v < g.size(); ++v)
    if (g.op(static_cast<int>(v)).layer == 0) sum += g.op(static_cast<int>(v)).activation_bytes;
  return sum;
}

// Korthikanti et al. 2022 count 34·s·h + 5·a·s² bytes per layer and sample (16-bit), the
// 5·a·s² the score matrix, its softmax and dropout; FlashAttention stores none of it, only
// the softmax statistics (a·s fp32 values).
TEST(Attention, FlashStoresNoScoreMatrix) {
  const double s = 2048, h = 2048, a = 16;
  const ModelGraph unfused = make_transformer(gpt(AttentionKind::Unfused));
  const ModelGraph flash = make_transformer(gpt(AttentionKind::Flash));
  EXPECT_DOUBLE_EQ(layer_activation(unfused), 34 * s * h + 5 * a * s * s);
  EXPECT_DOUBLE_EQ(layer_activation(flash), 34 * s * h + 4 * a * s);
  // Model FLOPs follow Megatron's convention whatever the kernel.
  EXPECT_DOUBLE_EQ(unfused.model_flops(1), flash.model_flops(1));
}

// Without dropout (MPT, Llama) the two residual dropout masks (s·h bytes each) and the
// scores' mask (a·s² bytes) are not stored: 32·s·h + 4·a·s² unfused; the adds still run.
TEST(Attention, WithoutDropoutNoMaskIsStored) {
  const double s = 2048, h = 2048, a = 16;
  TransformerConfig c = gpt(AttentionKind::Unfused);
  c.dropout = false;
  const ModelGraph unfused = make_transformer(c);
  EXPECT_DOUBLE_EQ(layer_activation(unfused), 32 * s * h + 4 * a * s * s);
  c.attention = AttentionKind::Flash;
  EXPECT_DOUBLE_EQ(layer_activation(make_transformer(c)), 32 * s * h + 4 * a * s);
  EXPECT_EQ(unfused.size(), make_transformer(gpt(AttentionKind::Unfused)).size());
}

// The FlashAttention-2 README's benchmark (hidden 2048, head dim 128, causal, 4 x 4096
// tokens), counted as 3.5 x 4·b·s²·h / 2: the TFLOP/s dejavu's forward and backward
// kernels of that op reach on `gpu`.
double flash_benchmark_tflops(const char* gpu, AttentionKind kind = AttentionKind::Flash) {
  const double s = 4096, h = 2048, b = 4;
  const Op op = attention_op("attention", 0, s, h, 16, h, 2, kind, true);
  const platforms::PerfModel pm(platforms::gpu_spec(gpu));
  auto kernel = [&](double flops, double bytes) {
    sim::Kernel k{op.op_class, flops * b, bytes * b, sim::DType::BF16};
    k.head_dim = op.head_dim;  // as the lowering passes them (strategies/lowering/prices.cc)
    k.causal = op.causal;
    return k;
  };
  EXPECT_DOUBLE_EQ(op.head_dim, 128);
  const double t = pm.time_s(kernel(op.fwd_flops, op.fwd_bytes)) + pm.time_s(kernel(op.bwd_flops, op.bwd_bytes));
  return 3.5 * 4 * b * s * s * h / 2 / t / 1e12;
}

// Published: 173 TFLOP/s on an A100, 294 on an H100 (30% of its peak where the A100
// reached 55% of its own); priced within 5% (the fit by head size; 10% as a roofline).
TEST(Attention, FlashPricedNearItsPublishedA100Throughput) {
  EXPECT_NEAR(flash_benchmark_tflops("A100-SXM-80GB"), 173, 0.05 * 173);
}

TEST(Attention, FlashPricedNearItsPublishedH100Throughput) {
  EXPECT_NEAR(flash_benchmark_tflops("H100-SXM-80GB"), 294, 0.05 * 294);
}

// The same README figure times the Triton kernel (MosaicML's `attn_impl: triton`) on that
// benchmark at 74 TFLOP/s, well under half FlashAttention-2's 173; priced within 10%.
TEST(Attention, TritonPricedNearItsPublishedA100Throughput) {
  EXPECT_NEAR(flash_benchmark_tflops("A100-SXM-80GB", AttentionKind::Triton), 74, 0.10 * 74);
}

// cuDNN's fused attention (Transformer Engine's FusedAttention) on an H100, on the FlashAttention
// READMEs' benchmark (hidden 2048, 4 x 4096 tokens, bf16). Published: its forward, 518 TFLOP/s at
// heads of 128 causal, 609 not causal, 363 at heads of 64 causal (the FlashAttention-3 README's
// figure, beside FlashAttention-2's forward at 319, 368 and 284); no figure times its backward,
// which is taken to keep the forward's speed-up over FlashAttention-2, whose forward + backward
// the FlashAttention-2 README times at 294, 326 and 257: so 518 x 294 / 319 = 477, 539 and 329
// forward + backward. dejavu's kernels of that op within 7% of each; on an A100, where no figure
// times cuDNN's kernel and Transformer Engine runs FlashAttention-2, FlashAttention-2's price.
double fwd_bwd_tflops(const char* gpu, AttentionKind kind, double head_dim, bool causal) {
  const double s = 4096, h = 2048, b = 4;
  const Op op = attention_op("attention", 0, s, h, h / head_dim, h, 2, kind, causal);
  const platforms::PerfModel pm(platforms::gpu_spec(gpu));
  auto kernel = [&](double flops, double bytes) {
    sim::Kernel k{op.op_class, flops * b, bytes * b, sim::DType::BF16};
    k.head_dim = op.head_dim;
    k.causal = op.causal;
    return k;
  };
  const double t = pm.time_s(kernel(op.fwd_flops, op.fwd_bytes)) + pm.time_s(kernel(op.bwd_flops, op.bwd_bytes));
  return 3.5 * op.fwd_flops * b / t / 1e12;
}

TEST(Attention, CudnnPricedNearItsPublishedH100Throughput) {
  EXPECT_NEAR(fwd_bwd_tflops("H100-SXM-80GB", AttentionKind::Cudnn, 128, true), 518.0 * 294 / 319, 0.07 * 477);
  EXPECT_NEAR(fwd_bwd_tflops("H100-SXM-80GB", AttentionKind::Cudnn, 128, false), 609.0 * 326 / 368, 0.07 * 539);
  EXPECT_NEAR(fwd_bwd_tflops("H100-SXM-80GB", AttentionKind::Cudnn, 64, true), 363.0 * 257 / 284, 0.07 * 329);
  EXPECT_DOUBLE_EQ(fwd_bwd_tflops("A100-SXM-80GB", AttentionKind::Cudnn, 128, true),
                   fwd_bwd_tflops("A100-SXM-80GB", AttentionKind::Flash, 128, true));
}

// Triton runs FlashAttention's algorithm: the same work, traffic and stored bytes, only its
// kernel class (and so its speed) differs.
TEST(Attention, TritonIsFlashAttentionsWorkInItsOwnKernelClass) {
  const Op flash = attention_op("a", 0, 2048, 2048, 16, 512, 2, AttentionKind::Flash, true);
  const Op triton = attention_op("a", 0, 2048, 2048, 16, 512, 2, AttentionKind::Triton, true);
  EXPECT_EQ(triton.op_class, sim::OpClass::TritonAttention);
  EXPECT_DOUBLE_EQ(triton.fwd_flops, 4 * 2048.0 * 2048 * 2048 / 2);
  EXPECT_DOUBLE_EQ(triton.bwd_flops, flash.bwd_flops);
  EXPECT_DOUBLE_EQ(triton.fwd_bytes, flash.fwd_bytes);
  EXPECT_DOUBLE_EQ(triton.activation_bytes, flash.activation_bytes);
  EXPECT_EQ(triton.selective_recompute_bytes, 0);
}

// The loss in fp32 over the vocabulary, hand-counted per logit for a bf16 model (e = 2):
// forward reads the logits (2) and writes fp32 (4), reads for the max (4), exponentiates in
// place (4 + 4), reads for the sum (4): 22 bytes; the backward reads the kept fp32 softmax
// (4) and writes the bf16 gradient (2): 6 bytes; kept: 4 bytes, split by tensor parallelism
// (vocabulary-parallel). GPT-2's 50257-word vocabulary over 1024 tokens on an H100 (HBM at
// the default 80% of 3.35 TB/s): 22 x 51.5M bytes, 0.42 ms plus the launch.
TEST(CrossEntropy, Fp32OverTheVocabularyCountsEveryPass) {
  const ModelGraph g = make_transformer(gpt(AttentionKind::Flash));
  const Op& loss = g.op(static_cast<int>(g.size()) - 1);
  ASSERT_EQ(loss.name, "loss");
  const double logits = 2048.0 * 51200;
  EXPECT_DOUBLE_EQ(loss.fwd_bytes, 22 * logits);
  EXPECT_DOUBLE_EQ(loss.bwd_bytes, 6 * logits);
  EXPECT_DOUBLE_EQ(loss.activation_bytes, 4 * logits);
  EXPECT_TRUE(loss.activation_split);
  const Op gpt2 = cross_entropy_op("loss", 12, 1024, 50257, 2);
  const platforms::PerfModel pm(platforms::gpu_spec("H100-SXM-80GB"));
  const double t = pm.time_s({sim::OpClass::Elementwise, gpt2.fwd_flops, gpt2.fwd_bytes, sim::DType::BF16});
  EXPECT_NEAR(t, 2e-6 + 22 * 1024.0 * 50257 / (0.8 * 3350e9), 1e-9);
}

// Fused losses (op_builders.h), per bf16 logit: Transformer Engine's Triton kernels read the
// logits twice and write the gradient in place (6 bytes), scale it in the backward (4), and
// keep the logits' 2 bytes; FlashAttention's xentropy reads them twice (4), reads them and
// writes the gradient in the backward (4), keeps 2. Unfused: 22, 6 and 4 (above). Llama 3
// 70B's head at tp 4 (32064 words a rank) over 8192 tokens on an H100 (HBM at the default
// 80% of 3.35 TB/s): 2.63e8 logits, 10 bytes each under te against 28 unfused: 0.98 ms
// against 2.75 ms a microbatch, launches aside.
TEST(CrossEntropy, FusedKernelsMoveOnlyTheirOwnPasses) {
  const double logits = 8192.0 * 32064;
  const Op te = cross_entropy_op("loss", 80, 8192, 32064, 2, CrossEntropyKind::TransformerEngine);
  EXPECT_DOUBLE_EQ(te.fwd_bytes, 6 * logits);
  EXPECT_DOUBLE_EQ(te.bwd_bytes, 4 * logits);
  EXPECT_DOUBLE_EQ(te.activation_bytes, 2 * logits);
  const Op flash = cross_entropy_op("loss", 80, 8192, 32064, 2, CrossEntropyKind::Flash);
  EXPECT_DOUBLE_EQ(flash.fwd_bytes, 4 * logits);
  EXPECT_DOUBLE_EQ(flash.bwd_bytes, 4 * logits);
  EXPECT_DOUBLE_EQ(flash.activation_bytes, 2 * logits);
  const Op unfused = cross_entropy_op("loss", 80, 8192, 32064, 2);
  const platforms::PerfModel pm(platforms::gpu_spec("H100-SXM-80GB"));
  const auto step = [&](const Op& op) {
    return pm.time_s({sim::OpClass::Elementwise, op.fwd_flops, op.fwd_bytes, sim::DType::BF16}) +
           pm.time_s({sim::OpClass::Elementwise, op.bwd_flops, op.bwd_bytes, sim::DType::BF16}) - 4e-6;
  };
  EXPECT_NEAR(step(te), 10 * logits / (0.8 * 3350e9), 1e-8);
  EXPECT_NEAR(step(unfused), 28 * logits / (0.8 * 3350e9), 1e-8);
}

TEST(CrossEntropy, TheWorkloadKeyChoosesAndIsChecked) {
  const auto loss = [](const std::string& kind, const std::string& extra) {
    const ModelGraph g = load_workload(ConfigNode::load_string(
        "kind: " + kind + "\nlayers: 1\nhidden: 64\nheads: 4\nffn_hidden: 256\nseq_len: 16\nvocab: 10\n" + extra,
        "w.yaml"));
    return g.op(static_cast<int>(g.size()) - 1);
  };
  EXPECT_DOUBLE_EQ(loss("transformer", "").fwd_bytes, 160 * 22);
  EXPECT_DOUBLE_EQ(loss("transformer", "cross_entropy: te\n").fwd_bytes, 160 * 6);
  EXPECT_DOUBLE_EQ(loss("llama", "cross_entropy: flash\n").fwd_bytes, 160 * 4);
  EXPECT_DOUBLE_EQ(loss("llama", "cross_entropy: unfused\n").fwd_bytes, 160 * 22);
  EXPECT_THROW(loss("llama", "cross_entropy: apex\n"), ConfigError);
}

// Selective recomputation replays what it dropped: the unfused scores; flash drops nothing.
TEST(Attention, SelectiveRecomputationReplaysNothingUnderFlash) {
  const ModelGraph flash = make_transformer(gpt(AttentionKind::Flash));
  for (size_t v = 0; v < flash.size(); ++v) EXPECT_EQ(flash.op(static_cast<int>(v)).selective_recompute_bytes, 0);
}

TEST(Attention, TheWorkloadKeyChoosesAndIsChecked) {
  const auto load = [](const std::string& extra) {
    return load_workload(ConfigNode::load_string(
        "kind: transformer\nlayers: 1\nhidden: 64\nheads: 4\nseq_len: 16\nvocab: 10\n" + extra, "w.yaml"));
  };
  EXPECT_EQ(load("").op(3).op_class, sim::OpClass::Attention);
  EXPECT_EQ(load("attention: flash\n").op(3).op_class, sim::OpClass::FlashAttention);
  EXPECT_EQ(load("attention: triton\n").op(3).op_class, sim::OpClass::TritonAttention);
  EXPECT_EQ(load("attention: cudnn\n").op(3).op_class, sim::OpClass::CudnnAttention);
  EXPECT_THROW(load("attention: sparse\n"), ConfigError);
}

// `inspect` names the kernel on its first line, as the user chose it.
TEST(Attention, InspectSaysWhichKernel) {
  for (const char* kind : {"flash", "cudnn", "triton", "unfused"}) {
    const ModelGraph g = load_workload(ConfigNode::load_string(
        std::string("kind: transformer\nlayers: 1\nhidden: 64\nheads: 4\nseq_len: 16\nvocab: 10\nattention: ") + kind +
            "\n",
        "w.yaml"));
    std::ostringstream out;
    write_inspection(out, g, 8);
    const std::string first = out.str().substr(0, out.str().find('\n'));
    EXPECT_NE(first.find(std::string(", ") + kind + " attention"), std::string::npos) << first;
  }
}

}  // namespace
}  // namespace dejavu::workloads
