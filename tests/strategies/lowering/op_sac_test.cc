// torchtitan's op-level selective checkpointing (`recompute: selective-op`) on layers small
// enough to count by hand: what a layer keeps from its forward to its backward, and what its
// backward replays.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "strategies/lowering/prices.h"
#include "strategies/stage_work.h"
#include "workloads/llama.h"
#include "workloads/transformer.h"

namespace dejavu::strategies {
namespace {

// Llama of 2 layers: s 128 tokens, h 64, 4 heads of 16, 2 key/value heads (32 wide), SwiGLU
// of f 96, bf16 (2 bytes).
workloads::ModelGraph tiny_llama() {
  workloads::LlamaConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.kv_heads = 2;
  c.ffn_hidden = 96;
  c.seq_len = 128;
  c.vocab = 1000;
  return workloads::make_llama(c);
}

// GPT of 2 layers, s 128, h 64, 4 heads, f 4h, FlashAttention, no dropout.
workloads::ModelGraph tiny_gpt() {
  workloads::TransformerConfig c{"gpt", 2, 64, 4, 128, 1000, 0, sim::DType::BF16};
  c.attention = workloads::AttentionKind::Flash;
  c.dropout = false;
  return workloads::make_transformer(c);
}

Plan plan_with(const std::string& recompute) {
  Plan p;
  p.recompute = recompute;
  return p;
}

double layer0_stored(const workloads::ModelGraph& m, const Plan& p) {
  double sum = 0;
  for (size_t v = 0; v < m.size(); ++v)
    if (m.op(static_cast<int>(v)).layer == 0) sum += activation_of(m.op(static_cast<int>(v)), m, p, p.recompute).stored;
  return sum;
}

// Layer 0's replay: the ops it runs and the GEMM products (rows, cols, depth) it prices.
// `back`: the ops it brings back without running them (their outputs kept).
struct Replay {
  std::vector<std::string> ops;
  std::vector<std::tuple<double, double, double>> products;
  std::vector<std::string> back;
};
Replay layer0_replay(const workloads::ModelGraph& m, const Plan& p) {
  Replay out;
  const std::vector<StageWork> work = build_stage_work(m, p, false);
  for (const Block& blk : work[0].blocks) {
    if (!blk.is_layer || m.op(blk.fwd.front().ops.front()).layer != 0) continue;
    for (const Segment& seg : blk.recompute)
      for (int v : seg.ops) {
        if (replayed_share(m.op(v), seg) <= 0) {
          out.back.push_back(m.op(v).name);
          continue;
        }
        out.ops.push_back(m.op(v).name);
        const sim::Kernel k = lowering::kernel_of(m.op(v), m, p, seg.pass);
        for (int i = 0; i < k.product_count; ++i)
          out.products.emplace_back(k.products[i].rows, k.products[i].cols, k.products[i].depth);
      }
  }
  return out;
}

// Of the linears wq wk wv wo w1 w3 w2 the policy saves the 1st, 3rd, 5th and 7th outputs, and
// the attention kernel's output with its log-sum-exp: x, q, v, O, lse, w1's and w2's outputs.
TEST(OpSac, ALlamaLayerKeepsItsInputQVTheAttentionOutputW1AndW2) {
  const workloads::ModelGraph m = tiny_llama();
  const double s = 128, h = 64, kv = 32, f = 96, a = 4, e = 2;
  const double kept = layer0_stored(m, plan_with("selective-op"));
  EXPECT_DOUBLE_EQ(kept, s * h * e + s * (h + kv) * e + s * h * e + 4 * a * s + s * f * e + s * h * e);
  EXPECT_LT(kept, layer0_stored(m, plan_with("none")));
  EXPECT_GT(kept, layer0_stored(m, plan_with("full")));
}

// The backward replays the norms, wk (a quarter of the fused qkv: 32 of its 128 columns), wo,
// w3 (half the fused gate and up) and SwiGLU; not the attention kernel, nor w2, whose output
// it kept.
TEST(OpSac, ALlamaLayerReplaysWkWoW3AndThePointwiseOps) {
  const workloads::ModelGraph m = tiny_llama();
  const Replay r = layer0_replay(m, plan_with("selective-op"));
  EXPECT_EQ(r.ops, (std::vector<std::string>{"L0.rmsnorm1", "L0.qkv", "L0.out_proj", "L0.rmsnorm2", "L0.gate_up",
                                             "L0.swiglu"}));
  using P = std::tuple<double, double, double>;
  EXPECT_EQ(r.products, (std::vector<P>{P{128, 32, 64}, P{128, 64, 64}, P{128, 96, 64}}));
}

// GPT's linears are qkv, proj, fc1, fc2: qkv's and fc1's outputs kept; proj replayed (the
// second norm needs its sum), fc2 not (no backward needs its output: the replay stops before
// it, as PyTorch's non-reentrant checkpoint does).
TEST(OpSac, AGptLayerKeepsQkvAndFc1AndReplaysTheProjection) {
  const workloads::ModelGraph m = tiny_gpt();
  const double s = 128, h = 64, a = 4, e = 2;
  EXPECT_DOUBLE_EQ(layer0_stored(m, plan_with("selective-op")),
                   s * h * e + s * 3 * h * e + s * h * e + 4 * a * s + s * 4 * h * e);
  const Replay r = layer0_replay(m, plan_with("selective-op"));
  using P = std::tuple<double, double, double>;
  EXPECT_EQ(r.products, (std::vector<P>{P{128, 64, 64}}));
  EXPECT_EQ(std::find(r.ops.begin(), r.ops.end(), "L0.fc2"), r.ops.end());
}

// MaxText's save_dot_except_mlpwi: a Llama layer keeps its input, the fused q, k and v
// projection's output (h + 2 kv wide) and the output projection's (h); the gate and up
// projection's output and the down projection's (read by no backward) are not kept, nor the
// attention kernel's.
TEST(DotSac, ALlamaLayerKeepsItsInputAndTheAttentionProjectionsOutputs) {
  const workloads::ModelGraph m = tiny_llama();
  const double s = 128, h = 64, kv = 32, e = 2;
  EXPECT_DOUBLE_EQ(layer0_stored(m, plan_with("save-dot-except-mlpwi")), s * h * e + s * (h + 2 * kv) * e + s * h * e);
}

// Its backward replays the norms, the attention kernel, the gate and up projection (both
// halves: 192 columns) and SwiGLU; not qkv nor out_proj, whose outputs it kept, nor the down
// projection, whose output no backward reads: their inputs come back, their kernels do not run.
TEST(DotSac, ALlamaLayerReplaysTheAttentionKernelAndTheMlpsInputProjection) {
  const workloads::ModelGraph m = tiny_llama();
  const Replay r = layer0_replay(m, plan_with("save-dot-except-mlpwi"));
  EXPECT_EQ(r.ops, (std::vector<std::string>{"L0.rmsnorm1", "L0.attention", "L0.rmsnorm2", "L0.gate_up", "L0.swiglu"}));
  EXPECT_EQ(r.back, (std::vector<std::string>{"L0.qkv", "L0.out_proj", "L0.down"}));
  using P = std::tuple<double, double, double>;
  ASSERT_FALSE(r.products.empty());
  EXPECT_EQ(r.products.back(), (P{128, 192, 64}));
}

// MaxText's save_qkv_proj: only the q, k and v projection's output kept beside the input;
// the attention's output projection replayed with the rest.
TEST(DotSac, SaveQkvProjKeepsOnlyTheQkvOutputAndReplaysTheOutputProjection) {
  const workloads::ModelGraph m = tiny_llama();
  const double s = 128, h = 64, kv = 32, e = 2;
  EXPECT_DOUBLE_EQ(layer0_stored(m, plan_with("save-qkv-proj")), s * h * e + s * (h + 2 * kv) * e);
  const Replay r = layer0_replay(m, plan_with("save-qkv-proj"));
  EXPECT_EQ(r.ops, (std::vector<std::string>{"L0.rmsnorm1", "L0.attention", "L0.out_proj", "L0.rmsnorm2", "L0.gate_up",
                                             "L0.swiglu"}));
  EXPECT_EQ(r.back, (std::vector<std::string>{"L0.qkv", "L0.down"}));
}

// GPT: qkv's and the projection's outputs kept; fc1 replayed; fc2 neither.
TEST(DotSac, AGptLayerKeepsQkvAndTheProjectionAndReplaysFc1) {
  const workloads::ModelGraph m = tiny_gpt();
  const double s = 128, h = 64, e = 2;
  EXPECT_DOUBLE_EQ(layer0_stored(m, plan_with("save-dot-except-mlpwi")), s * h * e + s * 3 * h * e + s * h * e);
  const Replay r = layer0_replay(m, plan_with("save-dot-except-mlpwi"));
  EXPECT_NE(std::find(r.ops.begin(), r.ops.end(), "L0.fc1"), r.ops.end());
  EXPECT_EQ(std::find(r.ops.begin(), r.ops.end(), "L0.fc2"), r.ops.end());
  EXPECT_EQ(std::find(r.ops.begin(), r.ops.end(), "L0.qkv"), r.ops.end());
}

}  // namespace
}  // namespace dejavu::strategies
