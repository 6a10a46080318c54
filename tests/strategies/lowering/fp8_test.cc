// fp8 GEMMs as Transformer Engine runs them: the GEMM at the fp8 peak, its inputs cast
// beside it, tensors kept in bf16, the weights' fp8 copies in memory. Hand-worked from
// Llama 3 8B's down projection (8,192 tokens x 14,336 -> 4,096) on an H100.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "platforms/cluster.h"
#include "platforms/perf_model.h"
#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/lowering.h"
#include "strategies/lowering/prices.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

workloads::ModelGraph llama3_8b(const std::string& dtype) {
  std::string text =
      "kind: llama\nname: llama3-8b\nlayers: 32\nhidden: 4096\nheads: 32\nkv_heads: 8\n"
      "ffn_hidden: 14336\nseq_len: 8192\nvocab: 128256\nattention: flash\ndtype: " +
      dtype + "\n";
  return workloads::load_workload(ConfigNode::load_string(text, "llama3-8b-" + dtype + ".yaml"));
}

const workloads::Op& layer0_gemm(const workloads::ModelGraph& m, const std::string& suffix) {
  for (size_t v = 0; v < m.size(); ++v)
    if (m.op(v).layer == 0 && m.op(v).op_class == sim::OpClass::Gemm && m.op(v).name.ends_with(suffix)) return m.op(v);
  throw std::runtime_error("no " + suffix + " GEMM in layer 0");
}

const workloads::Op& down_projection(const workloads::ModelGraph& m) { return layer0_gemm(m, "down"); }

Plan one_gpu() {
  Plan p;
  p.micro_batch_size = 1;
  p.global_batch_size = 1;
  return p;
}

// One DGX H100 and a plan of eight one-sequence microbatches a step (degrees set by the test).
const platforms::Cluster& dgx_h100() {
  static const platforms::Cluster c = platforms::load_cluster_file(src("platforms/presets/dgx-h100-1x8.yaml"));
  return c;
}

Plan eight_sequences() {
  Plan p = one_gpu();
  p.global_batch_size = 8;
  return p;
}

// Under sequence parallelism Transformer Engine casts a column-parallel GEMM's input (the
// LayerNorm's output) and a row-parallel one's output gradient on the rank's 1/tp of the
// sequence, then all-gathers them quantized; the other two casts are of local, whole-sequence
// tensors. Llama 3 8B, 8,192 tokens, tp 4: gate_up (4,096 -> 2 x 14,336, column-parallel), down
// (14,336 -> 4,096, row-parallel); 3 bytes an element (bf16 read, fp8 written).
TEST(Fp8, SequenceParallelCastsRunOnTheSequenceShard) {
  const workloads::ModelGraph fp8 = llama3_8b("fp8");
  Plan plan = one_gpu();
  plan.tp = 4;
  plan.sequence_parallel = true;
  const workloads::Op& up = layer0_gemm(fp8, "gate_up");
  const workloads::Op& down = down_projection(fp8);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(up, fp8, plan, Pass::Forward).cast_bytes, 2048.0 * 4096 * 3);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(up, fp8, plan, Pass::BackwardInput).cast_bytes, 8192.0 * 7168 * 3);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(down, fp8, plan, Pass::Forward).cast_bytes, 8192.0 * 3584 * 3);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(down, fp8, plan, Pass::BackwardInput).cast_bytes, 2048.0 * 4096 * 3);
  // Without sequence parallelism every rank casts the whole sequence's input and gradient.
  plan.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(lowering::kernel_of(up, fp8, plan, Pass::Forward).cast_bytes, 8192.0 * 4096 * 3);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(down, fp8, plan, Pass::BackwardInput).cast_bytes, 8192.0 * 4096 * 3);
  // Routed experts take their tokens from the expert exchange, not the sequence gather: with
  // sequence parallelism their casts stay whole. The same model with 8 experts, 2 a token:
  // at ep 8 a GPU holds one expert, which the exchange brings the 16,384 slots of a micro-batch's
  // worth (8,192 tokens x 2, as many as the GPU sends), cast at 4,096 features.
  const workloads::ModelGraph moe = workloads::load_workload(ConfigNode::load_string(
      "kind: llama\nname: moe\nlayers: 2\nhidden: 4096\nheads: 32\nkv_heads: 8\nffn_hidden: 14336\n"
      "seq_len: 8192\nvocab: 128256\nattention: flash\ndtype: fp8\nexperts: 8\ntop_k: 2\n"
      "capacity_factor: 1.0\n",
      "moe-fp8.yaml"));
  plan.sequence_parallel = true;
  plan.ep = 8;
  const workloads::Op& experts_up = layer0_gemm(moe, "gate_up");
  ASSERT_TRUE(experts_up.expert);
  EXPECT_DOUBLE_EQ(lowering::kernel_of(experts_up, moe, plan, Pass::Forward).cast_bytes, 16384.0 * 4096 * 3);
}

TEST(Fp8, AGemmRunsAtTheFp8PeakWithItsInputsCast) {
  const workloads::ModelGraph fp8 = llama3_8b("fp8");
  const workloads::Op& down = down_projection(fp8);
  const sim::Kernel fwd = lowering::kernel_of(down, fp8, one_gpu(), Pass::Forward);
  const sim::Kernel bwd = lowering::kernel_of(down, fp8, one_gpu(), Pass::Backward);
  EXPECT_EQ(fwd.dtype, sim::DType::FP8);
  // Forward: the 8,192 x 14,336 input read in bf16 (2) and written in fp8 (1).
  EXPECT_DOUBLE_EQ(fwd.cast_bytes, 8192.0 * 14336 * 3);
  // Backward: the 8,192 x 4,096 output gradient, likewise.
  EXPECT_DOUBLE_EQ(bwd.cast_bytes, 8192.0 * 4096 * 3);
  // Everything else stays bf16: the element-wise kernels, and the GEMM in a bf16 model.
  const workloads::ModelGraph bf16 = llama3_8b("bf16");
  const sim::Kernel plain = lowering::kernel_of(down_projection(bf16), bf16, one_gpu(), Pass::Forward);
  EXPECT_EQ(plain.dtype, sim::DType::BF16);
  EXPECT_EQ(plain.cast_bytes, 0);

  // Priced on an H100 (gpu_catalog.cc: its fp8 GEMM fit e_max 0.713768, t_half 668.422 ns,
  // launch 5.27425 us, k_fill 144; fp8 peak 1978.9 TFLOPS; 3,350 GB/s), compute-bound:
  // launch + (t_half + 2 m n (k + k_fill) / peak) / e_max, plus the cast: without a recipe,
  // Transformer Engine's default on Hopper, delayed scaling, whose casts Transformer Engine
  // timed on an H200 at 0.7272 of HBM after a 2 us launch (tools/te_gemm_layer.py); under
  // current scaling (tensorwise) at 0.4412.
  const platforms::GpuSpec& h100 = platforms::gpu_spec("H100-SXM-80GB");
  const platforms::Efficiency eff = platforms::Efficiency::defaults_for(h100);
  const double gemm = 5.27425e-6 + (668.422e-9 + 2 * 8192.0 * 4096 * (14336 + 144) / 1978.9e12) / 0.713768;
  const double cast = 2e-6 + 8192.0 * 14336 * 3 / (3350e9 * 0.7272);
  EXPECT_NEAR(platforms::PerfModel(h100, eff).time_s(fwd), gemm + cast, 1e-12);
  Plan tensorwise = one_gpu();
  tensorwise.fp8_recipe = sim::Fp8Recipe::Tensorwise;
  const sim::Kernel current = lowering::kernel_of(down, fp8, tensorwise, Pass::Forward);
  EXPECT_NEAR(platforms::PerfModel(h100, eff).time_s(current), gemm + 2e-6 + 8192.0 * 14336 * 3 / (3350e9 * 0.4412),
              1e-12);
}

TEST(Fp8, ModelStateBytesPerParameter) {
  // bf16: weight 2, gradient 2, fp32 master, momentum and variance 12.
  EXPECT_DOUBLE_EQ(model_state_per_param(sim::DType::BF16, 0, 1).total(), 16);
  // fp8: the bf16 weight plus its fp8 copy and that copy's transpose (1 + 1).
  const ModelStateBytes fp8 = model_state_per_param(sim::DType::FP8, 0, 1);
  EXPECT_DOUBLE_EQ(fp8.weights, 4);
  EXPECT_DOUBLE_EQ(fp8.gradients, 2);
  EXPECT_DOUBLE_EQ(fp8.optimizer, 12);
  // ZeRO-3 over 8 shards every part, the fp8 copies with their weights.
  EXPECT_DOUBLE_EQ(model_state_per_param(sim::DType::FP8, 3, 8).total(), 18.0 / 8);
  // fp4 copies are half a byte each.
  EXPECT_DOUBLE_EQ(model_state_per_param(sim::DType::FP4, 0, 1).weights, 3);
  // The optimizer step recasts the weights: reads bf16 (2), writes fp8 and its transpose (2).
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(sim::DType::FP8), 38 + 4);
  // fp8 primary weights (fp8_param_gather): the fp8 weight and its transpose, no bf16 copy;
  // the step writes those two (1 + 1) where it wrote the bf16 weight (2), and casts nothing.
  EXPECT_DOUBLE_EQ(model_state_per_param(sim::DType::FP8, 0, 1, 0, 4, true).weights, 2);
  EXPECT_DOUBLE_EQ(model_state_per_param(sim::DType::FP8, 3, 8, 0, 4, true).total(), 16.0 / 8);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(sim::DType::FP8, 4, true), 38);
}

// Megatron-Core's fp8_param_gather on a distributed optimizer (zero 1) over 8 H100s: each
// GPU holds 2 bytes of weights a parameter instead of 4, and the updated weights are
// all-gathered in fp8, half the bytes of the bf16 gather.
TEST(Fp8, Fp8PrimaryWeightsHalveTheWeightsAndTheirGather) {
  const platforms::Cluster& cluster = dgx_h100();
  Plan plan = eight_sequences();
  plan.dp = 8;
  plan.zero = 1;
  const workloads::ModelGraph fp8 = llama3_8b("fp8");
  const Simulation a = simulate(fp8, cluster, plan);
  plan.fp8_param_gather = true;
  const Simulation b = simulate(fp8, cluster, plan);
  auto part = [](const Simulation& s, const std::string& name) {
    for (const sim::MemoryPart& m : s.report.simulated[0].memory_at_peak)
      if (m.name == name) return m.bytes;
    return -1.0;
  };
  const double params = fp8.parameter_count();
  EXPECT_DOUBLE_EQ(part(a, "weights"), 4 * params);
  EXPECT_DOUBLE_EQ(part(b, "weights"), 2 * params);
  auto gathered = [](const Simulation& s) {
    double bytes = 0;
    for (size_t i = 0; i < s.job.graph.size(); ++i) {
      const sim::Task& t = s.job.graph.task(static_cast<sim::TaskId>(i));
      if (t.label >= 0 && s.job.graph.labels()[t.label] == "dp weight all-gather") bytes += t.bytes;
    }
    return bytes;
  };
  EXPECT_DOUBLE_EQ(gathered(a), 2 * params);  // the whole model's bf16 weights, gathered
  EXPECT_DOUBLE_EQ(gathered(b), params);
  // A bf16 model has no fp8 weights to keep.
  plan.fp8_param_gather = true;
  EXPECT_THROW(simulate(llama3_8b("bf16"), cluster, plan), Error);
}

TEST(Fp8, ALlamaStepIsFasterButNotTwiceAndHoldsTheFp8Copies) {
  const platforms::Cluster& cluster = dgx_h100();
  Plan plan = eight_sequences();
  plan.tp = 8;
  plan.sequence_parallel = true;
  const workloads::ModelGraph bf16 = llama3_8b("bf16"), fp8 = llama3_8b("fp8");
  const Simulation a = simulate(bf16, cluster, plan), b = simulate(fp8, cluster, plan);
  EXPECT_LT(b.result.makespan_s, a.result.makespan_s);
  EXPECT_GT(b.result.makespan_s, a.result.makespan_s / 2);  // attention, norms, casts stay
  // The memory peak grows by the fp8 copies, 2 bytes per parameter over tp 8, less what the
  // layers' GEMMs keep in fp8 of one microbatch's inputs: s·(h + f) bytes a layer (below),
  // split by sequence parallelism.
  const double params = bf16.parameter_count();
  const double copies = 2 * params / 8, kept = 32 * 8192.0 * (4096 + 14336) / 8;
  EXPECT_NEAR(b.report.devices[0].peak_memory_bytes - a.report.devices[0].peak_memory_bytes, copies - kept,
              0.01 * (copies - kept));
}

// Under sequence parallelism Transformer Engine gathers a GEMM's input already quantized:
// the LayerNorm's fp8 output forward, the fp8-cast output gradient backward. Llama 3 8B on
// tp 2, one 8,192-token sequence: every reduce-scatter moves 8,192 x 4,096 bf16 elements
// (64 MiB, a rank's half out), every all-gather the same elements in fp8 (32 MiB), but for
// the two beside the bf16 ends: the one before the LM head (its input in bf16) and, in the
// backward, the one after layer 0 (the embedding's gradient). The LM head's own backward
// reduce-scatters its input gradient, and the gather after it feeds the last layer's fp8
// down projection. In bf16 all move 64 MiB.
TEST(Fp8, TensorParallelGathersMoveTheQuantizedInput) {
  Plan plan = one_gpu();
  plan.tp = 2;
  plan.sequence_parallel = true;
  const double rs = 8192.0 * 4096 * 2;
  auto gathers = [&](const std::string& dtype) {
    const auto model = llama3_8b(dtype);
    std::map<double, int> out;  // all-gather bytes -> count
    int syncs = 0;
    for (const StageWork& w : build_stage_work(model, plan))
      for (const Block& blk : w.blocks)
        for (const auto* pass : {&blk.fwd, &blk.bwd})
          for (const Segment& seg : *pass) {
            if (seg.sync_bytes_per_sample <= 0) continue;
            EXPECT_EQ(seg.sync_bytes_per_sample, rs) << seg.name;
            ++syncs;
            ++out[seg.sync_bytes_of(sim::CollectiveOp::AllGather)];
          }
    // forward: 2 a layer and the embedding's; backward: 2 a layer and the LM head's
    EXPECT_EQ(syncs, 2 * 32 + 1 + 2 * 32 + 1) << dtype;
    return out;
  };
  EXPECT_EQ(gathers("bf16"), (std::map<double, int>{{rs, 130}}));
  EXPECT_EQ(gathers("fp8"), (std::map<double, int>{{rs / 2, 128}, {rs, 2}}));

  // The lowered step on one DGX H100 (4 replicas): its tensor-parallel all-gathers carry
  // those bytes, 128 quantized for every 2 in bf16.
  plan.dp = 4;
  plan.global_batch_size = 4;
  const LoweredJob job = lower(llama3_8b("fp8"), dgx_h100(), plan);
  std::map<double, int> tasks;
  for (const sim::Task& t : job.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && t.op == sim::CollectiveOp::AllGather &&
        job.graph.labels()[t.label].rfind("tp ", 0) == 0)
      ++tasks[t.bytes];
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_GT(tasks[rs], 0);
  EXPECT_EQ(tasks[rs / 2], 64 * tasks[rs]);
}

double layer0_activation(const workloads::ModelGraph& m) {
  double sum = 0;
  for (size_t v = 0; v < m.size(); ++v)
    if (m.op(v).layer == 0) sum += m.op(v).activation_bytes;
  return sum;
}

// Transformer Engine's linear layers keep their quantized input for the weight gradient
// (1 byte an element in fp8, not bf16's 2), while a fused attention kernel keeps its own bf16
// output beside the projection's fp8 copy. Llama per sample: qkv's input s·h and the MLP's
// s·h and s·f shrink by a byte an element, the output projection's s·h grows by one
// (O kept twice): s·(h + f) less in all.
TEST(Fp8, ALayersGemmsKeepTheirInputsQuantized) {
  const double s = 8192, h = 4096, f = 14336;
  EXPECT_DOUBLE_EQ(layer0_activation(llama3_8b("bf16")) - layer0_activation(llama3_8b("fp8")), s * (h + f));
  // fp4: half a byte an element, 1.5 less per element than bf16 (the projection's copy 0.5 more).
  EXPECT_DOUBLE_EQ(layer0_activation(llama3_8b("bf16")) - layer0_activation(llama3_8b("fp4")),
                   1.5 * s * (h + h + f) - 0.5 * s * h);
  // GPT with unfused attention keeps no O of its own: the projection's input shrinks too,
  // 3·s·h + s·f (h = 2048, f = 4h, s = 2048).
  auto gpt = [](const std::string& dtype, const std::string& attention) {
    return workloads::load_workload(ConfigNode::load_string(
        "kind: transformer\nname: gpt\nlayers: 2\nhidden: 2048\nheads: 16\nseq_len: 2048\nvocab: 51200\n"
        "attention: " +
            attention + "\ndtype: " + dtype + "\n",
        "gpt.yaml"));
  };
  const double gs = 2048, gh = 2048;
  EXPECT_DOUBLE_EQ(layer0_activation(gpt("bf16", "unfused")) - layer0_activation(gpt("fp8", "unfused")),
                   3 * gs * gh + gs * 4 * gh);
  EXPECT_DOUBLE_EQ(layer0_activation(gpt("bf16", "flash")) - layer0_activation(gpt("fp8", "flash")),
                   gs * gh + gs * 4 * gh);
}

// The language-model head stays in bf16 under fp8 (Megatron-Core's output layer is outside
// Transformer Engine): no fp8 peak, no casts; the layers' GEMMs run in fp8.
TEST(Fp8, TheLmHeadRunsInBf16) {
  const workloads::ModelGraph fp8 = llama3_8b("fp8");
  for (size_t v = 0; v < fp8.size(); ++v) {
    const workloads::Op& op = fp8.op(v);
    if (op.op_class != sim::OpClass::Gemm) continue;
    const sim::Kernel k = lowering::kernel_of(op, fp8, one_gpu(), Pass::Forward);
    const bool head = op.name == "lm_head";
    EXPECT_EQ(k.dtype, head ? sim::DType::BF16 : sim::DType::FP8) << op.name;
    EXPECT_EQ(k.cast_bytes > 0, !head) << op.name;
  }
}

}  // namespace
}  // namespace dejavu::strategies
