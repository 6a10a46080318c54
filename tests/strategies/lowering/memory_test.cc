// The memory model against Korthikanti et al. 2022 and the ZeRO paper, and the pipeline
// schedules' activation footprints as the engine plays them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sim/error.h"
#include "sim/memory.h"
#include "strategies/lowering.h"
#include "strategies/search/evaluator.h"
#include "strategies/search/pipeline_model.h"
#include "strategies/simulate.h"
#include "strategies/stage_work.h"
#include "sim/config_node.h"
#include "workloads/generator.h"
#include "workloads/transformer.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;
std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Activation bytes per GPU of one decoder layer for micro-batch b, as the plan keeps them.
double layer_activation(const workloads::ModelGraph& m, const Plan& plan, bool stored) {
  double sum = 0;
  for (size_t v = 0; v < m.size(); ++v)
    if (m.op(v).layer == 0) {
      const ActivationSplit a = activation_of(m.op(v), m, plan, plan.recompute);
      sum += stored ? a.stored : a.full;
    }
  return sum * plan.micro_batch_size;
}

struct Korthikanti : ::testing::Test {
  const double s = 2048, h = 6144, a = 64, b = 4, t = 8;
  workloads::ModelGraph model = workloads::make_transformer({"22b", 48, 6144, 64, 2048, 51200, 0, sim::DType::FP16});
  Plan plan() const {
    Plan p;
    p.tp = 8;
    p.micro_batch_size = 4;
    return p;
  }
};

TEST_F(Korthikanti, NoParallelismKeeps34sbhPlus5as2b) {
  Plan p = plan();
  p.tp = 1;
  EXPECT_NEAR(layer_activation(model, p, true), s * b * h * (34 + 5 * a * s / h), 1);
}

TEST_F(Korthikanti, TensorParallelismSplitsAllButTenSbh) {
  EXPECT_NEAR(layer_activation(model, plan(), true), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1);
}

TEST_F(Korthikanti, SequenceParallelismSplitsEverything) {
  Plan p = plan();
  p.sequence_parallel = true;
  EXPECT_NEAR(layer_activation(model, p, true), s * b * h / t * (34 + 5 * a * s / h), 1);
}

TEST_F(Korthikanti, SelectiveRecomputationDropsTheAttentionScores) {
  Plan p = plan();
  p.sequence_parallel = true;
  p.recompute = "selective";
  EXPECT_NEAR(layer_activation(model, p, true), s * b * h / t * 34, 1);
  EXPECT_NEAR(layer_activation(model, p, false), s * b * h / t * (34 + 5 * a * s / h), 1);  // until backward
}

TEST_F(Korthikanti, ContextParallelismSplitsTheSequence) {
  Plan p = plan();
  p.sequence_parallel = true;
  p.cp = 2;
  EXPECT_NEAR(layer_activation(model, p, true), s * b * h / t * (34 + 5 * a * s / h) / 2, 1);
}

TEST_F(Korthikanti, FullRecomputationKeepsOnlyTheLayerInput) {
  Plan p = plan();
  p.recompute = "full";
  EXPECT_NEAR(layer_activation(model, p, true), 2 * s * b * h, 1);
  p.sequence_parallel = true;
  EXPECT_NEAR(layer_activation(model, p, true), 2 * s * b * h / t, 1);
}

// recompute_layers: N (Megatron-Core's block method): the first N layers of the chunk keep
// their input (2sbh / t without sequence parallelism, here 2sbh: the input is whole on every
// rank), the other L - N everything, sbh(10 + 24/t + 5as/(ht)).
TEST_F(Korthikanti, BlockRecomputationKeepsEverythingPastItsFirstLayers) {
  Plan p = plan();
  p.recompute = "full";
  const double all = build_stage_work(model, p, false)[0].stored_activation_per_sample;
  p.recompute_layers = 5;
  const std::vector<StageWork> work = build_stage_work(model, p, false);
  const double L = 48;
  EXPECT_NEAR((work[0].stored_activation_per_sample - all) * b,
              (L - 5) * s * b * h * (10 + 24 / t + 5 * a * s / (h * t) - 2), 1);
  int replayed = 0;
  for (const Block& blk : work[0].blocks) replayed += blk.is_layer && !blk.recompute.empty();
  EXPECT_EQ(replayed, 5);
}

// After the last layer: the final LayerNorm keeps its input (2sbh), the output layer its input
// (2sbh), the loss its fp32 logits split by the vocabulary (4sbV/t). Under sequence
// parallelism the first two are a rank's sequence shard: Megatron runs the final norm on it,
// and the output layer saves it and gathers it again for the weight gradient.
TEST_F(Korthikanti, SequenceParallelismSplitsTheFinalNormAndTheOutputLayersInput) {
  auto after_layers = [&](const Plan& p) {
    double sum = 0;
    for (size_t v = 0; v < model.size(); ++v)
      if (model.op(v).layer == model.layers) sum += activation_of(model.op(v), model, p, p.recompute).stored;
    return sum * p.micro_batch_size;
  };
  const double V = 51200;
  Plan p = plan();
  EXPECT_NEAR(after_layers(p), s * b * (2 * h + 2 * h + 4 * V / t), 1);
  p.sequence_parallel = true;
  EXPECT_NEAR(after_layers(p), s * b * (2 * h / t + 2 * h / t + 4 * V / t), 1);
}

TEST(ModelStates, SixteenBytesPerParameterAndZeroShardsThem) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan plan;
  plan.dp = 8;
  plan.global_batch_size = 8;
  const double P = model.parameter_count();
  auto resident = [&](int zero) {
    plan.zero = zero;
    const LoweredJob job = lower(model, cluster, plan);
    std::map<std::string, double> parts;
    for (const auto& part : job.graph.devices()[0].resident) parts[part.name] = part.bytes;
    return parts;
  };
  auto z0 = resident(0);
  EXPECT_NEAR(z0["weights"] + z0["gradients"] + z0["optimizer"], 16 * P, 1);
  auto z1 = resident(1);
  EXPECT_NEAR(z1["optimizer"], 12 * P / 8, 1);
  EXPECT_NEAR(z1["gradients"], 2 * P, 1);
  auto z2 = resident(2);
  EXPECT_NEAR(z2["gradients"], 2 * P / 8, 1);
  EXPECT_NEAR(z2["weights"], 2 * P, 1);
  auto z3 = resident(3);
  EXPECT_NEAR(z3["weights"] + z3["gradients"] + z3["optimizer"], 16 * P / 8, 1);
}

// p layers of one GEMM, each keeping A bytes of activations per sample, on free links.
workloads::ModelGraph equal_layers(int layers, double activation) {
  workloads::ModelGraph g;
  g.name = "equal";
  g.layers = layers;
  for (int l = 0; l < layers; ++l) {
    workloads::Op op;
    op.name = "layer" + std::to_string(l);
    op.layer = l;
    op.fwd_flops = 1e12;
    op.bwd_flops = 2e12;
    op.activation_bytes = activation;
    const int v = g.add_op(op);
    if (l > 0) g.add_edge(v - 1, v);
  }
  return g;
}

platforms::Cluster one_server(int n) {
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 1\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(n) +
          "\n    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 0 us}\n"
          "    nic: {bandwidth: 200 Gbps, latency: 0 us}\nnetwork: {kind: fat-tree, latency: 0 us}\n",
      "one.yaml"));
}

// L layers of one GEMM each, with Q bf16 parameters and A bytes of activations per sample.
workloads::ModelGraph weighted_layers(int layers, double params, double activation) {
  workloads::ModelGraph g;
  g.name = "weighted";
  g.layers = layers;
  for (int l = 0; l < layers; ++l) {
    workloads::Op op;
    op.name = "layer" + std::to_string(l);
    op.layer = l;
    op.fwd_flops = 1e12;
    op.bwd_flops = 2e12;
    op.activation_bytes = activation;
    op.params = params;
    op.weight_bytes = 2 * params;
    const int v = g.add_op(op);
    if (l > 0) g.add_edge(v - 1, v);
  }
  return g;
}

platforms::Cluster fast_server(int n) {  // communication takes next to no time
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 1\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(n) +
          "\n    intra: {kind: nvswitch, bandwidth: 10000 TB/s, latency: 0 us}\n"
          "    nic: {bandwidth: 200 Gbps, latency: 0 us}\nnetwork: {kind: fat-tree, latency: 0 us}\n",
      "fast.yaml"));
}

// The first GPU's peak of four layers of Q parameters and A bytes of activations over dp 4 on
// free links, one sample each, at ZeRO stage `zero`, in shard groups of `dp_shard` (0: one).
double four_layer_peak(double Q, double A, int zero, int dp_shard = 0) {
  Plan plan;
  plan.dp = 4;
  plan.dp_shard = dp_shard;
  plan.global_batch_size = 4;
  plan.zero = zero;
  const Simulation s = simulate(weighted_layers(4, Q, A), fast_server(4), plan);
  return sim::memory_profiles(s.job.graph, s.result)[0].peak_bytes;
}

TEST(Zero3Memory, GathersOneLayerAheadAndReleasesItsWeightsAfterUse) {
  // 4 layers of Q parameters over dp 4, one microbatch, no recomputation, free links.
  // A gathered layer or a layer's full gradient is G = 2Q·3/4 beyond the GPU's shard.
  // Gathers run one layer ahead: while layer 3's backward runs, the GPU holds its own
  // gathered weights, the prefetched weights of layer 2, layer 3's full gradients (until
  // their reduce-scatter), and all four layers' activations: 16·4Q/4 + 3G + 4A; and what
  // the process holds before the model, R (CUDA context, NCCL buffers).
  const double Q = 1e9, A = 4e9, G = 2 * Q * 3 / 4, R = platforms::kCudaContextBytes + platforms::kNcclBuffersBytes;
  auto peak = [&](int zero) { return four_layer_peak(Q, A, zero); };
  EXPECT_NEAR(peak(3), 16 * 4 * Q / 4 + 3 * G + 4 * A + R, 1e3);
  // ZeRO-2 keeps every weight (2 bytes) and shards the rest (14 bytes) over the 4 GPUs.
  EXPECT_NEAR(peak(2), (2 + 14.0 / 4) * 4 * Q + 4 * A + R, 1e3);
  EXPECT_LT(peak(3), peak(2));
}

TEST(Zero3Memory, HybridShardingShardsOverItsGroupNotEveryReplica) {
  // GathersOneLayerAheadAndReleasesItsWeightsAfterUse's four layers over dp 4, sharded in
  // two groups of two (dp_shard 2, HSDP): states over 2 GPUs, not 4, and a gathered layer or
  // a layer's full gradient is G = 2Q/2 beyond the shard: 16·4Q/2 + 3G + 4A + R. ZeRO-2:
  // (2 + 14/2)·4Q + 4A + R.
  const double Q = 1e9, A = 4e9, G = Q, R = platforms::kCudaContextBytes + platforms::kNcclBuffersBytes;
  auto peak = [&](int zero) { return four_layer_peak(Q, A, zero, 2); };
  EXPECT_NEAR(peak(3), 16 * 4 * Q / 2 + 3 * G + 4 * A + R, 1e3);
  EXPECT_NEAR(peak(2), (2 + 14.0 / 2) * 4 * Q + 4 * A + R, 1e3);
}

TEST(Zero3Memory, WithoutPipelineStagesGathersALayerNotTheWholeModel) {
  // GPT-3 175B over 384 GPUs with full recomputation, pp 1: a GPU holds its 16 bytes per
  // parameter / 384 plus at most two layers' weights gathered (12·h² parameters each, bf16),
  // the stored layer inputs, and one layer's activations: far below ZeRO-2's 2 bytes of
  // every parameter alone (349 GB).
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-175b.yaml"));
  const auto cluster = platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 48\n    gpu: A100-SXM-80GB\n    gpus_per_server: 8\n"
      "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
      "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "384.yaml"));
  Plan plan;
  plan.dp = 384;
  plan.global_batch_size = 384;
  plan.recompute = "full";
  plan.zero = 3;
  const Simulation s = simulate(model, cluster, plan);
  const double P = model.parameter_count(), h = 12288, seq = 2048, layer = 12 * h * h;
  const double states = 16 * P / 384, gathered = 2 * (2 * layer) * 383 / 384;
  const double inputs = 96 * 2 * seq * h, one_layer = seq * h * (34 + 5 * 96 * seq / h);
  EXPECT_GT(s.report.peak_memory_bytes, states + gathered + inputs);
  // Beyond that only one layer's activations, a gradient buffer, the head's logits, and
  // what the process holds before the model.
  const double R = platforms::kCudaContextBytes + platforms::kNcclBuffersBytes;
  EXPECT_LT(s.report.peak_memory_bytes, states + gathered + inputs + one_layer + 2 * layer * 2 + 2e9 + R);
  EXPECT_FALSE(s.report.oom);
}

TEST(PipelineMemory, OneFOneBHoldsPMinusIMicrobatchesAndGPipeAllOfThem) {
  const int p = 4, m = 8;
  const double A = 1e9;
  const auto model = equal_layers(p, A);
  const auto cluster = one_server(p);
  for (const char* schedule : {"1f1b", "gpipe"}) {
    Plan plan;
    plan.pp = p;
    plan.global_batch_size = m;
    plan.schedule = schedule;
    const Simulation s = simulate(model, cluster, plan);
    const auto memory = sim::memory_profiles(s.job.graph, s.result);
    for (int i = 0; i < p; ++i) {
      const double held = memory[i].peak_bytes - memory[i].resident_bytes;
      const int expected = std::string(schedule) == "1f1b" ? p - i : m;
      EXPECT_NEAR(held, expected * A, 1) << schedule << " stage " << i;
    }
  }
}

// `recompute: [full, none]`: each stage runs and holds what the plan of its mode alone gives
// that stage (the stage's work does not depend on the other's mode), so stage 0 matches the
// all-full plan and stage 1 the all-none plan, in busy time and in peak memory; the step lies
// between theirs, and the search's fast path prices it as its engine does.
TEST(PipelineMemory, RecomputationPerStageIsEachStagesOwnMode) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan plan;
  plan.pp = 2;
  plan.dp = 4;
  plan.global_batch_size = 32;
  plan.comm_sms = 0;  // busy time is the stage's own kernels, not when the other's sends meet them
  auto run = [&](const std::string& rc, std::vector<std::string> stages) {
    Plan p = plan;
    p.recompute = rc;
    p.stage_recompute = std::move(stages);
    return simulate(model, cluster, p).report;
  };
  const Report full = run("full", {}), none = run("none", {}), mixed = run("full", {"full", "none"});
  auto stage = [](const Report& r, int s) {
    for (const DeviceReport& d : r.devices)
      if (d.stage == s && d.dp_rank == 0) return d;
    ADD_FAILURE() << "no stage " << s;
    return DeviceReport{};
  };
  EXPECT_NEAR(stage(mixed, 0).peak_memory_bytes, stage(full, 0).peak_memory_bytes, 1);
  EXPECT_NEAR(stage(mixed, 1).peak_memory_bytes, stage(none, 1).peak_memory_bytes, 1);
  EXPECT_NEAR(stage(mixed, 0).busy_s, stage(full, 0).busy_s, 1e-9);
  EXPECT_NEAR(stage(mixed, 1).busy_s, stage(none, 1).busy_s, 1e-9);
  EXPECT_LT(stage(full, 0).peak_memory_bytes, stage(none, 0).peak_memory_bytes);
  EXPECT_LT(none.iteration_time_s, mixed.iteration_time_s);
  EXPECT_LT(mixed.iteration_time_s, full.iteration_time_s);
  Plan p = plan;
  p.recompute = "full";
  p.stage_recompute = {"full", "none"};
  const search::Problem problem{&model, &cluster, 32};
  search::Score fast;
  ASSERT_TRUE(search::PipelineModel(problem).score(p, fast));
  const double alone = simulate(model, cluster, p, search::kSearchEngine).report.iteration_time_s;
  EXPECT_NEAR(fast.iteration_time_s, alone, 1e-9 * alone);  // both without link sharing
}

TEST(RuntimeMemory, ReservedMemoryIsResidentOnEveryGpuAndTheFastPathAgrees) {
  // By default every GPU holds the CUDA context with its kernels (0.92 GiB) and NCCL's
  // buffers (1.45 GiB), as measured on an A100 80GB; a platform's `reserved_memory` (what
  // the user measured) stands in their place, exactly, in the engine's lowering and in the
  // search's pipeline model alike.
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  std::string text = slurp_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  const auto plain = platforms::load_cluster(ConfigNode::load_string(text, "plain.yaml"));
  text.replace(text.find("    step_latency: 9.5 us"), 0, "    reserved_memory: 1.5 GB\n");
  const auto reserved = platforms::load_cluster(ConfigNode::load_string(text, "reserved.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp4-1f1b.yaml"));
  plan.dp = 1;
  plan.global_batch_size = 8;
  const Simulation a = simulate(model, plain, plan), b = simulate(model, reserved, plan);
  ASSERT_EQ(a.report.simulated.size(), b.report.simulated.size());
  const double defaults = (0.92 + 1.45) * 1073741824.0;
  for (size_t d = 0; d < a.report.simulated.size(); ++d) {
    EXPECT_NEAR(b.report.simulated[d].peak_memory_bytes - a.report.simulated[d].peak_memory_bytes, 1.5e9 - defaults,
                1e-3);
    EXPECT_EQ(a.report.simulated[d].memory_at_peak[3].name, "CUDA context and kernels");
    EXPECT_EQ(a.report.simulated[d].memory_at_peak[3].bytes, 0.92 * 1073741824.0);
    EXPECT_EQ(a.report.simulated[d].memory_at_peak[4].name, "NCCL buffers");
    EXPECT_EQ(a.report.simulated[d].memory_at_peak[4].bytes, 1.45 * 1073741824.0);
    EXPECT_EQ(b.report.simulated[d].memory_at_peak[3].name, "runtime (reserved_memory)");
  }
  const search::Problem problem{&model, &reserved, 8};
  search::SimulationEvaluator slow(problem, "ring", search::SimulationEvaluator::Path::Simulate);
  search::PipelineModel fast(problem);
  search::Score f;
  ASSERT_TRUE(fast.score(plan, f));
  EXPECT_NEAR(f.peak_memory_bytes, slow.evaluate(plan).peak_memory_bytes, 1e-9 * f.peak_memory_bytes);
  text.replace(text.find("1.5 GB"), 6, "-1 GB");
  EXPECT_THROW(platforms::load_cluster(ConfigNode::load_string(text, "bad.yaml")), ConfigError);
}

TEST(CommunicationBuffers, AllToAllAndCompressedGradientsHoldTheirBuffers) {
  // Expert parallelism: each all-to-all holds its receive buffer (the bytes it moves) while
  // it runs. Compression: the compressed gradients live from the compression to the step;
  // gathered top-k gradients arrive from every other replica.
  const auto moe = workloads::load_workload_file(src("workloads/presets/mixtral-8x7b.yaml"));
  const auto four = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan ep = load_plan_file(src("strategies/presets/tp4-pp2-dp4-ep4.yaml"));
  ep.global_batch_size = 8;
  const LoweredJob job = lower(moe, four, ep);
  int a2a = 0;
  for (const auto& t : job.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && t.op == sim::CollectiveOp::AllToAll) {
      ++a2a;
      EXPECT_DOUBLE_EQ(t.alloc_bytes, t.bytes);
      EXPECT_DOUBLE_EQ(t.free_bytes, t.bytes);
    }
  EXPECT_GT(a2a, 0);

  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const auto one = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan topk = load_plan_file(src("strategies/presets/dp8-pcie.yaml"));
  topk.data_parallel.compression = "topk";
  topk.data_parallel.density = 0.01;
  const LoweredJob z = lower(model, one, topk);
  double held = 0, freed = 0, received = 0;
  int gathers = 0;
  for (const auto& t : z.graph.tasks()) {
    const std::string& label = z.graph.labels()[t.label];
    if (label.rfind("compress gradients", 0) == 0) held += t.alloc_bytes;
    if (label == "optimizer step") freed += t.free_bytes;
    if (t.kind == sim::TaskKind::Collective && t.op == sim::CollectiveOp::AllGather) {
      ++gathers;
      received += t.alloc_bytes;
    }
  }
  // Top-k at 1%: values and 32-bit indices of 1% of the bf16 gradients; each of the 7
  // other replicas sends its own.
  const double wire = model.parameter_count() * 0.01 * (2 + 4);
  EXPECT_NEAR(held, wire, 1e-6 * wire);
  EXPECT_DOUBLE_EQ(freed, held);
  EXPECT_EQ(gathers, 1);
  EXPECT_NEAR(received, 7 * wire, 1e-6 * wire);
}

TEST(CommunicationBuffers, TopKAtTenPercentOnEightReplicasPeaksAtTheHandCount) {
  // GPT-3 1.3B, dp 8, full recomputation (activations are small): the peak comes while the
  // gradients are exchanged, the activations freed: the model states (16 B per parameter),
  // the compressed gradients (10% of the values, 2 + 4 bytes each) and what arrives from the
  // 7 other replicas (7 times as much): about 27.4 GB; and R, what the process holds before
  // the model (CUDA context 0.92 GiB, NCCL buffers 1.45 GiB): 29.95 GB.
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const auto one = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/dp8-pcie.yaml"));
  plan.global_batch_size = 8;
  plan.recompute = "full";
  plan.data_parallel.compression = "topk";
  plan.data_parallel.density = 0.1;
  const Simulation s = simulate(model, one, plan);
  const double P = model.parameter_count(), wire = 0.1 * P * 6;
  const double R = (0.92 + 1.45) * 1073741824.0;
  EXPECT_NEAR(s.report.peak_memory_bytes, 16 * P + wire + 7 * wire + R, 1e3);
  EXPECT_NEAR(s.report.peak_memory_bytes, 27.4e9 + 2.545e9, 0.05e9);
}

TEST(Oom, A175BModelOnFourServersDoesNotFitAndSaysByHowMuch) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-175b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp8-pp4-gpipe.yaml"));
  plan.global_batch_size = 8;
  const Simulation s = simulate(model, cluster, plan);
  // 175B over 32 GPUs: about 5.5e9 parameters each, 16 bytes apiece: 87 GB > 80 GiB.
  EXPECT_TRUE(s.report.oom);
  EXPECT_GT(s.report.peak_memory_bytes, 16 * model.parameter_count() / 32);
  EXPECT_NEAR(s.report.shortfall_bytes, s.report.peak_memory_bytes - 80 * 1073741824.0, 1);
}

}  // namespace
}  // namespace dejavu::strategies
