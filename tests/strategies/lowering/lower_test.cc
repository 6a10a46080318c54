#include "strategies/lowering.h"

#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

#include "platforms/perf_model.h"
#include "tools/report/chrome_trace.h"
#include "tools/report/iteration.h"
#include "strategies/simulate.h"
#include "strategies/lowering/prices.h"
#include "strategies/stage_work.h"
#include "tests/strategies/lowering/test_clusters.h"
#include "tests/strategies/lowering/test_models.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct Inputs {
  workloads::ModelGraph model;
  platforms::Cluster cluster;
  Plan plan;
};

Inputs presets(const std::string& platform, const std::string& workload, const std::string& plan) {
  return {workloads::load_workload_file(src("workloads/presets/" + workload + ".yaml")),
          platforms::load_cluster_file(src("platforms/presets/" + platform + ".yaml")),
          load_plan_file(src("strategies/presets/" + plan + ".yaml"))};
}

void expect_pipeline_closed_form(const std::string& schedule) {
  const int p = 4, m = 8;
  const double F = 4e12;
  const auto model = equal_layers(p, F);
  const auto cluster = free_network(p);
  Plan plan;
  plan.pp = p;
  plan.global_batch_size = m;
  plan.schedule = schedule;
  const Simulation s = simulate(model, cluster, plan);

  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 0, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 0, sim::DType::BF16});
  const double step = pm.time_s({sim::OpClass::Optimizer, 0, 0, sim::DType::BF16});
  EXPECT_NEAR(s.result.makespan_s, (m + p - 1) * (f + b) + step, 1e-9) << schedule;
  EXPECT_NEAR(s.report.bubble_fraction, double(p - 1) / (m + p - 1), 1e-9) << schedule;
}

TEST(Pipeline, GPipeMakespanIsMPlusPMinusOneTimesFPlusB) { expect_pipeline_closed_form("gpipe"); }

TEST(Pipeline, InterleavingVChunksDividesTheBubbleByV) {
  // p·v equal layers; each GPU runs v chunks of f/v and b/v: the makespan is
  // m(f+b) + (p-1)(f+b)/v with free communication.
  const int p = 4, m = 8, v = 2;
  const double F = 4e12;
  const auto model = equal_layers(p * v, F);
  const auto cluster = free_network(p);
  Plan plan;
  plan.pp = p;
  plan.virtual_stages = v;
  plan.global_batch_size = m;
  plan.schedule = "interleaved-1f1b";
  const Simulation s = simulate(model, cluster, plan);
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 0, sim::DType::BF16});  // one chunk
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 0, sim::DType::BF16});
  const double step = pm.time_s({sim::OpClass::Optimizer, 0, 0, sim::DType::BF16});
  EXPECT_NEAR(s.result.makespan_s, m * v * (f + b) + (p - 1) * (f + b) + step, 1e-9);
  // versus 1F1B over the same p stages of v layers each: bubble (p-1)·v·(f+b)
  plan.virtual_stages = 1;
  plan.schedule = "1f1b";
  const Simulation plain = simulate(model, cluster, plan);
  EXPECT_NEAR((plain.result.makespan_s - m * v * (f + b) - step) / (s.result.makespan_s - m * v * (f + b) - step),
              double(v), 1e-6);
}

TEST(Pipeline, ZeroBubbleH1IdlesAThirdOf1F1BsBubbleWithItsPeakMemory) {
  for (int p : {2, 4, 8}) {
    const int m = 2 * p;
    auto model = equal_layers(p, 4e12);
    for (size_t v = 0; v < model.size(); ++v) {  // give the GEMMs weights: W is half the backward
      auto& op = const_cast<workloads::Op&>(model.op(static_cast<int>(v)));
      op.weight_bytes = 1;
      op.activation_bytes = 1e6;
    }
    const auto cluster = free_network(p);
    Plan plan;
    plan.pp = p;
    plan.global_batch_size = m;
    plan.schedule = "1f1b";
    const Simulation one = simulate(model, cluster, plan);
    plan.schedule = "zb-h1";
    const Simulation zb = simulate(model, cluster, plan);
    // Qi et al. 2023: 1F1B idles (p-1)(F+B+W), ZB-H1 (p-1)(F+B-W), a third when F = B = W
    // (here each is a 4e12-FLOP GEMM: the backward's 8e12 split in halves).
    const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
    const double f = pm.time_s({sim::OpClass::Gemm, 4e12, 1, sim::DType::BF16});
    const double bw = pm.time_s({sim::OpClass::Gemm, 8e12, 2, sim::DType::BF16});
    const double b = pm.time_s({sim::OpClass::Gemm, 4e12, 1, sim::DType::BF16}), w = b;
    const double step = pm.time_s({sim::OpClass::Optimizer, 0, 0, sim::DType::BF16});
    EXPECT_NEAR(one.result.makespan_s, (m + p - 1) * (f + bw) + step, 1e-9) << p << " stages";
    EXPECT_NEAR(zb.result.makespan_s, m * (f + b + w) + (p - 1) * (f + b - w) + step, 1e-9) << p << " stages";
    EXPECT_LT(zb.report.bubble_fraction, one.report.bubble_fraction) << p << " stages";
    // Same work: the split moves time, it does not add compute beyond one launch per W.
    // (each W kernel pays one more launch and GEMM ramp: launch + t_half / e_max = b + w - bw)
    EXPECT_NEAR(zb.report.simulated[0].compute_s, one.report.simulated[0].compute_s, m * (b + w - bw) * 1.01);
    // ZB-H1 keeps 1F1B's peak: later stages hold more than under 1F1B, never more than stage 0.
    double zb_peak = 0, one_peak = 0;
    for (size_t d = 0; d < zb.report.simulated.size(); ++d) {
      zb_peak = std::max(zb_peak, zb.report.simulated[d].peak_memory_bytes);
      one_peak = std::max(one_peak, one.report.simulated[d].peak_memory_bytes);
    }
    EXPECT_LE(zb_peak, one_peak) << p << " stages";
  }
}

TEST(Pipeline, ChimeraBubbleIsPMinus2Over2MPlusPMinus2) {
  // Equal forward and backward: each GPU computes m(f+b); Chimera's bubble is (p-2)/2
  // passes of f+b (Li and Hoefler 2021, Table 2: (p-2)/(2m+p-2) of the pipeline), 1F1B's
  // p-1. The pair all-reduce and the step come after.
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p}) {
      auto model = equal_layers(p, 4e12);
      for (size_t i = 0; i < model.size(); ++i) {
        auto& op = const_cast<workloads::Op&>(model.op(static_cast<int>(i)));
        op.bwd_flops = 4e12;
        op.params = 1e6;
      }
      const auto cluster = free_network(p);
      Plan plan;
      plan.pp = p;
      plan.global_batch_size = m;
      plan.schedule = "chimera";
      const Simulation s = simulate(model, cluster, plan);
      const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
      const double f = pm.time_s({sim::OpClass::Gemm, 4e12, 0, sim::DType::BF16});
      EXPECT_NEAR(s.report.bubble_fraction, double(p - 2) / (2 * m + p - 2), 1e-9) << p << " stages, " << m;
      plan.schedule = "1f1b";
      const Simulation one = simulate(model, cluster, plan);
      EXPECT_NEAR(one.report.bubble_fraction, double(p - 1) / (m + p - 1), 1e-9);
      // Each GPU holds two stages: twice 1F1B's weights.
      const auto& w = s.job.graph.devices()[0].resident[0];
      EXPECT_EQ(w.name, "weights");
      EXPECT_GT(w.bytes, 0);
      EXPECT_DOUBLE_EQ(w.bytes, 2 * one.job.graph.devices()[0].resident[0].bytes);
      (void)f;
    }
}

TEST(Pipeline, ChimeraBeats1F1BWithBackwardTwiceTheForward) {
  const int p = 4, m = 4;
  const auto model = equal_layers(p, 4e12);
  const auto cluster = free_network(p);
  Plan plan;
  plan.pp = p;
  plan.global_batch_size = m;
  plan.schedule = "chimera";
  const Simulation chimera = simulate(model, cluster, plan);
  plan.schedule = "1f1b";
  const Simulation one = simulate(model, cluster, plan);
  EXPECT_LT(chimera.report.bubble_fraction, one.report.bubble_fraction);
  // Two pipelines, one model: the same FLOPs, recomputation included.
  plan.recompute = "full";
  plan.schedule = "chimera";
  const LoweredJob a = lower(model, cluster, plan);
  plan.schedule = "1f1b";
  const LoweredJob b = lower(model, cluster, plan);
  EXPECT_GT(a.hardware_flops, a.model_flops);
  EXPECT_DOUBLE_EQ(a.hardware_flops, b.hardware_flops);
  plan.schedule = "chimera";
  plan.pp = 4;
  plan.global_batch_size = 3;
  EXPECT_THROW(simulate(model, cluster, plan), ConfigError);  // an odd number of microbatches
}

// Two layers of the same chain of ops, each op's backward twice its forward, the first op
// taking the layer's input.
struct ChainOp {
  const char* name;
  sim::OpClass cls;
  double flops, saved_bytes;
};
workloads::ModelGraph two_layers_of(const std::string& name, const std::vector<ChainOp>& chain) {
  workloads::ModelGraph g;
  g.name = name;
  g.layers = 2;
  int prev = -1;
  for (int l = 0; l < 2; ++l)
    for (const ChainOp& c : chain) {
      workloads::Op op;
      op.name = "L" + std::to_string(l) + "." + c.name;
      op.layer = l;
      op.op_class = c.cls;
      op.fwd_flops = c.flops;
      op.bwd_flops = 2 * c.flops;
      op.activation_bytes = c.saved_bytes;
      op.layer_input = &c == &chain.front();
      const int v = g.add_op(op);
      if (prev >= 0) g.add_edge(prev, v);
      prev = v;
    }
  return g;
}

// Two layers of a -> b -> c on one GPU, one microbatch: a and b are GEMMs that save their
// inputs, c a residual add that saves nothing.
struct ThreeOpLayers {
  const double Fa = 3e12, Fb = 5e12, Fc = 1e9;
  const workloads::ModelGraph g = two_layers_of("three-op layers", {{"a", sim::OpClass::Gemm, Fa, 1e6},
                                                                    {"b", sim::OpClass::Gemm, Fb, 1e6},
                                                                    {"c", sim::OpClass::Elementwise, Fc, 0}});
  const platforms::PerfModel pm{platforms::gpu_spec("A100-SXM-80GB")};
  const platforms::Cluster cluster = free_network(1);
  double fwd(sim::OpClass cls, double flops) const { return pm.time_s({cls, flops, 0, sim::DType::BF16}); }
  double layer_replay_s() const {  // a, b and c forward once
    return fwd(sim::OpClass::Gemm, Fa) + fwd(sim::OpClass::Gemm, Fb) + fwd(sim::OpClass::Elementwise, Fc);
  }
  double makespan(const Plan& plan) const { return simulate(g, cluster, plan).result.makespan_s; }
};

TEST(Recompute, EarlyStopReplaysUpToTheLastSavingOpButNotItsGemm) {
  // Megatron's full recomputation replays a, b and c before each layer's backward; PyTorch's
  // early stop replays a only (b's inputs are saved as b starts, before its GEMM runs; c
  // comes after).
  const ThreeOpLayers t;
  Plan plan;
  const double none = t.makespan(plan);
  plan.recompute = "full";
  const double full = t.makespan(plan);
  plan.recompute_early_stop = true;
  const double early = t.makespan(plan);
  EXPECT_NEAR(full - none, 2 * t.layer_replay_s(), 1e-9);
  EXPECT_NEAR(early - none, 2 * t.fwd(sim::OpClass::Gemm, t.Fa), 1e-9);
}

TEST(Recompute, BlockMethodReplaysOnlyTheFirstLayers) {
  // recompute_layers: 1 (Megatron-Core's block method): layer 0 is replayed before its
  // backward, layer 1 keeps everything, so one replay of a, b and c over no recomputation,
  // half of every layer's.
  const ThreeOpLayers t;
  Plan plan;
  const double none = t.makespan(plan);
  plan.recompute = "full";
  plan.recompute_layers = 1;
  EXPECT_NEAR(t.makespan(plan) - none, t.layer_replay_s(), 1e-9);
  plan.recompute_layers = 2;  // every layer of the chunk: full recomputation
  const double all = t.makespan(plan);
  plan.recompute_layers = 0;
  EXPECT_DOUBLE_EQ(all, t.makespan(plan));
}

TEST(Recompute, SelectiveReplaysAFusedAttentionKernelThatStoresNoScores) {
  // Two layers of a -> f -> c on one GPU, one microbatch: a GEMM, a FlashAttention kernel
  // (no score matrix stored: nothing for selective recomputation to drop) and a residual
  // add. Megatron-Core's selective recomputation checkpoints the core attention whatever its
  // kernel, so each layer's backward first replays f's forward: 2 t(f) over no
  // recomputation, and nothing of a or c.
  const double Fa = 3e12, Ff = 2e12, Fc = 1e9;
  const workloads::ModelGraph g = two_layers_of("attention layers", {{"a", sim::OpClass::Gemm, Fa, 1e6},
                                                                     {"f", sim::OpClass::FlashAttention, Ff, 1e6},
                                                                     {"c", sim::OpClass::Elementwise, Fc, 1e6}});
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const platforms::Cluster cluster = free_network(1);
  Plan plan;
  const double none = simulate(g, cluster, plan).result.makespan_s;
  plan.recompute = "selective";
  const double selective = simulate(g, cluster, plan).result.makespan_s;
  EXPECT_NEAR(selective - none, 2 * pm.time_s({sim::OpClass::FlashAttention, Ff, 0, sim::DType::BF16}), 1e-9);
}

TEST(Pipeline, AsynchronousPipelinesHaveNoFlushAndRecordTheirStaleness) {
  // Without a flush, the steady state has no fill or drain: m(f+b) per iteration plus the
  // optimizer's steps (one for 2BW, one per microbatch for PipeDream), against 1F1B's
  // (m+p-1)(f+b) + one step.
  const int p = 4, m = 8;
  auto model = equal_layers(p, 4e12);
  for (size_t i = 0; i < model.size(); ++i) const_cast<workloads::Op&>(model.op(static_cast<int>(i))).params = 1e6;
  const auto cluster = free_network(p);
  Plan plan;
  plan.pp = p;
  plan.global_batch_size = m;
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, 4e12, 0, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 8e12, 0, sim::DType::BF16});
  const double step = pm.time_s(
      sim::Kernel{sim::OpClass::Optimizer, 0, 1e6 * optimizer_bytes_per_param(sim::DType::BF16), sim::DType::BF16});
  plan.schedule = "1f1b";
  const Simulation flush = simulate(model, cluster, plan);
  EXPECT_NEAR(flush.report.iteration_time_s, (m + p - 1) * (f + b) + step, 1e-9);
  EXPECT_TRUE(flush.report.pipeline_flush);
  EXPECT_EQ(flush.report.mean_staleness, 0);

  plan.schedule = "pipedream-2bw";
  const Simulation two = simulate(model, cluster, plan);
  EXPECT_NEAR(two.report.iteration_time_s, m * (f + b) + step, 1e-9);
  EXPECT_FALSE(two.report.pipeline_flush);
  EXPECT_NEAR(two.report.bubble_fraction, 0, 1e-9);
  EXPECT_EQ(two.report.staleness, std::vector<double>(p, 1.0));
  EXPECT_EQ(two.report.weight_versions, std::vector<int>(p, 2));
  // Double-buffered weights: one more copy than 1F1B keeps.
  const auto& stash = two.job.graph.devices()[0].resident.back();
  EXPECT_EQ(stash.name, "stashed weights");
  EXPECT_DOUBLE_EQ(stash.bytes, 1e6 * 2);  // one layer of 1e6 bf16 parameters

  plan.schedule = "pipedream";
  const Simulation pd = simulate(model, cluster, plan);
  EXPECT_NEAR(pd.report.iteration_time_s, m * (f + b) + m * step, 1e-9);
  EXPECT_EQ(pd.report.optimizer_steps, m);
  EXPECT_EQ(pd.report.staleness, (std::vector<double>{3, 2, 1, 0}));     // p - i - 1
  EXPECT_EQ(pd.report.weight_versions, (std::vector<int>{4, 3, 2, 1}));  // p - i
  EXPECT_DOUBLE_EQ(pd.report.mean_staleness, 1.5);
  for (int d = 0; d < p; ++d) {
    const auto& parts = pd.job.graph.devices()[d].resident;
    const int stage = pd.job.device_stage[d];
    if (stage == p - 1) {
      EXPECT_NE(parts.back().name, "stashed weights");
    } else {
      EXPECT_DOUBLE_EQ(parts.back().bytes, (p - stage - 1) * 2e6) << "stage " << stage;
    }
  }
}

TEST(DataParallel, DelayedAveragingHidesTheExchangeBehindDSteps) {
  // Two replicas on a link of latency L and no bandwidth limit: the ring all-reduce takes
  // 2(n-1) = 2 latencies. Averaging every step, a step is f + b + 2L + the optimizer step;
  // with the result applied D steps later, the longer of f + b + step and 2L/D.
  const double L = 0.5;
  auto model = equal_layers(1, 4e12);
  const_cast<workloads::Op&>(model.op(0)).params = 1e6;
  platforms::Cluster cluster = free_network(2);
  cluster.groups[0].intra.latency_s = L;
  cluster.groups[0].nic.latency_s = L;  // whichever way the route goes
  cluster.network = sim::Network{};
  build_network(cluster);
  Plan plan;
  plan.dp = 2;
  plan.global_batch_size = 2;
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double compute = pm.time_s({sim::OpClass::Gemm, 4e12, 0, sim::DType::BF16}) +
                         pm.time_s({sim::OpClass::Gemm, 8e12, 0, sim::DType::BF16});
  const double step = pm.time_s(
      sim::Kernel{sim::OpClass::Optimizer, 0, 1e6 * optimizer_bytes_per_param(sim::DType::BF16), sim::DType::BF16});
  const Simulation every = simulate(model, cluster, plan);
  ASSERT_NEAR(every.report.iteration_time_s, compute + 2 * L + step, 1e-9);
  for (int D : {1, 2, 4, 8}) {
    plan.data_parallel.delay = D;
    const Simulation s = simulate(model, cluster, plan);
    EXPECT_NEAR(s.report.iteration_time_s, std::max(compute + step, 2 * L / D), 1e-9) << D;
    EXPECT_EQ(s.report.delayed_averaging, D);
    EXPECT_DOUBLE_EQ(s.report.mean_staleness, D);
  }
  plan.zero = 1;
  EXPECT_THROW(simulate(model, cluster, plan), ConfigError);
}

TEST(Lowering, SequenceParallelismTradesEachAllReduceForAReduceScatterAndAnAllGather) {
  Inputs in = presets("dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  in.plan.global_batch_size = 16;
  auto count = [&](bool sp) {
    in.plan.sequence_parallel = sp;
    const LoweredJob job = lower(in.model, in.cluster, in.plan);
    std::map<sim::CollectiveOp, int> n;
    for (const auto& t : job.graph.tasks())
      if (t.kind == sim::TaskKind::Collective && t.stream == 1) ++n[t.op];  // tp-comm
    return n;
  };
  auto plain = count(false), sp = count(true);
  EXPECT_GT(plain[sim::CollectiveOp::AllReduce], 0);
  EXPECT_EQ(sp[sim::CollectiveOp::AllReduce], 0);
  EXPECT_EQ(sp[sim::CollectiveOp::ReduceScatter], plain[sim::CollectiveOp::AllReduce]);
  EXPECT_EQ(sp[sim::CollectiveOp::AllGather], plain[sim::CollectiveOp::AllReduce]);
}

// Megatron's tensor-parallel all-reduces, hand-counted for GPT-3 1.3B (24 layers) on tp 4
// without sequence parallelism, one microbatch a replica (the 8 replicas fold into one): forward, g after each layer's
// output projection and second MLP GEMM and after the vocabulary-parallel embedding (2·24 + 1); backward, f before each
// layer's QKV and first MLP GEMM and before the LM head, whose input gradient each rank holds a part of (2·24 + 1).
// Each carries s·h 16-bit elements.
TEST(Lowering, TensorParallelismAllReducesTwiceALayerAndOnceAtEachEndEachWay) {
  Inputs in = presets("dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  in.plan.pp = 1;
  in.plan.dp = 8;
  in.plan.micro_batch_size = 1;
  in.plan.global_batch_size = 8;
  in.plan.sequence_parallel = false;
  in.plan.recompute = "none";
  const LoweredJob job = lower(in.model, in.cluster, in.plan);
  std::map<double, int> sizes;  // bytes -> count, one tensor-parallel rank's all-reduces
  int count = 0;
  for (const auto& t : job.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && t.stream == 1 && t.op == sim::CollectiveOp::AllReduce) {
      ++sizes[t.bytes];
      ++count;
    }
  EXPECT_EQ(sizes, (std::map<double, int>{{2048.0 * 2048 * 2, count}}));
  EXPECT_EQ(count, 2 * 24 + 1 + 2 * 24 + 1) << count;
}

TEST(Lowering, ExpertParallelismExchangesTokensFourTimesPerLayerAndShardsTheExperts) {
  const auto model = workloads::load_workload_file(src("workloads/presets/mixtral-8x7b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp4-ep4.yaml"));
  plan.global_batch_size = 8;  // 2 microbatches per replica
  const LoweredJob job = lower(model, cluster, plan);
  int a2a = 0;
  // dispatch and combine, forward and backward; each token's 2 slots of 4096 bf16 values
  const double slot_bytes = 4096.0 * 2 * 4096 * 2;
  for (const auto& t : job.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && t.op == sim::CollectiveOp::AllToAll) {
      ++a2a;
      EXPECT_DOUBLE_EQ(t.bytes, slot_bytes);
    }
  EXPECT_EQ(a2a, 4 * 32 * 2);  // 4 per layer, 32 layers, 2 microbatches
  // Stage 0 holds 16 layers' experts, a quarter of them: 16 x 8 x 3 x 4096 x 14336 / (4 x 4) weights
  double weights = 0;
  for (const auto& part : job.graph.devices()[0].resident)
    if (part.name == "weights") weights = part.bytes;
  const double experts_per_gpu = 16.0 * 8 * 3 * 4096 * 14336 / (4 * 4);
  EXPECT_GT(weights / 2, experts_per_gpu);
  EXPECT_LT(weights / 2, experts_per_gpu * 1.3);  // plus attention, norms, embedding
  plan.ep = 3;
  EXPECT_THROW(lower(model, cluster, plan), ConfigError);
}

TEST(Lowering, ExpertParallelismWithZeroShardsTheExpertsOverTheReplicasHoldingThem) {
  // dp 4, ep 4: the dense parameters are shared by 4 replicas, each expert by one. ZeRO-1
  // divides the dense optimizer state by 4 and leaves the experts' whole; the gradients
  // are reduce-scattered over the dense group only, and the step covers the dense quarter
  // plus the experts.
  const auto model = workloads::load_workload_file(src("workloads/presets/mixtral-8x7b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp4-ep4.yaml"));
  plan.global_batch_size = 8;
  const LoweredJob plain = lower(model, cluster, plan);
  plan.zero = 1;
  const LoweredJob zero = lower(model, cluster, plan);
  auto part = [](const LoweredJob& job, const std::string& name) {
    for (const auto& x : job.graph.devices()[0].resident)
      if (x.name == name) return x.bytes;
    return -1.0;
  };
  // Stage 0's experts per GPU (16 layers x 8 experts x 3 matrices / (tp 4 x ep 4)); fp32
  // master, momentum and variance: 12 bytes a parameter.
  const double experts = 16.0 * 8 * 3 * 4096 * 14336 / (4 * 4);
  const double dense = part(plain, "weights") / 2 - experts;
  ASSERT_GT(dense, 0);
  EXPECT_NEAR(part(plain, "optimizer"), 12 * (dense + experts), 1e-6 * part(plain, "optimizer"));
  EXPECT_NEAR(part(zero, "optimizer"), 12 * (dense / 4 + experts), 1e-6 * part(zero, "optimizer"));
  EXPECT_DOUBLE_EQ(part(zero, "weights"), part(plain, "weights"));
  int scatters = 0;
  for (const auto& t : zero.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && t.op == sim::CollectiveOp::ReduceScatter &&
        zero.graph.labels()[t.label].find("dp gradient") != std::string::npos) {
      ++scatters;
      // stage 1 also holds the final norm: within 1e-4
      EXPECT_NEAR(t.bytes, dense * 2, 1e-4 * dense) << "only the dense part: each expert has one holder";
    }
  EXPECT_EQ(scatters, 2);  // one per stage
  // With dp 8 and ep 4 the experts have two holders: their own reduce-scatter.
  const auto big = platforms::load_cluster_file(src("platforms/presets/dgx-a100-8x8.yaml"));
  plan.dp = 8;
  plan.global_batch_size = 16;
  const LoweredJob wide = lower(model, big, plan);
  int expert_scatters = 0;
  for (const auto& t : wide.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && wide.graph.labels()[t.label] == "expert dp gradient reduce-scatter") {
      ++expert_scatters;
      EXPECT_NEAR(t.bytes, experts * 2, 1e-6 * experts);
    }
  EXPECT_EQ(expert_scatters, 2);  // one per stage, each 16 layers' experts
  // Buckets and compression run with expert parallelism too.
  plan.zero = 0;
  plan.data_parallel.bucket_bytes = 100e6;
  EXPECT_NO_THROW(simulate(model, big, plan));
  plan.data_parallel.bucket_bytes = 0;
  plan.data_parallel.compression = "powersgd";
  EXPECT_NO_THROW(simulate(model, big, plan));
}

TEST(Lowering, ContextParallelismGathersKeysAndValuesAndHalvesEachRanksWork) {
  Inputs in = presets("dgx-a100-4x8", "llama3-8b", "tp4-pp2-dp4-1f1b");
  in.plan.recompute = "none";
  in.plan.global_batch_size = 16;
  const LoweredJob plain = lower(in.model, in.cluster, in.plan);
  in.plan.dp = 2;
  in.plan.cp = 2;
  in.plan.global_batch_size = 8;  // same microbatches per replica
  const LoweredJob ctx = lower(in.model, in.cluster, in.plan);
  // Every layer gathers its keys and values forward and reduce-scatters their gradients
  // backward: 8 key/value heads of 128 over 8192 tokens, 2 bytes, per tensor rank.
  const double kv = 2.0 * 8192 * 8 * 128 * 2 / 4;
  std::map<sim::CollectiveOp, int> n;
  for (const auto& t : ctx.graph.tasks())
    if (t.kind == sim::TaskKind::Collective && ctx.graph.stream_names()[t.stream] == "cp-comm") {
      ++n[t.op];
      EXPECT_DOUBLE_EQ(t.bytes, kv);
    }
  EXPECT_EQ(n[sim::CollectiveOp::AllGather], 32 * 4);  // 32 layers, 4 microbatches
  EXPECT_EQ(n[sim::CollectiveOp::ReduceScatter], 32 * 4);
  // Each context rank computes half of every sequence: layer 0's forward takes about half
  // as long (weights are still read whole, so a little more than half).
  auto layer0 = [](const LoweredJob& job) {
    double sum = 0;
    for (const auto& t : job.graph.tasks())
      if (t.kind == sim::TaskKind::Compute && t.tag == 0 && t.device == 0 &&
          job.graph.labels()[t.label].rfind("fwd L0.", 0) == 0)
        sum += t.duration_s;
    return sum;
  };
  ASSERT_GT(layer0(plain), 0);
  EXPECT_GT(layer0(ctx), 0.5 * layer0(plain));
  EXPECT_LT(layer0(ctx), 0.6 * layer0(plain));
  // GPUs: tp innermost, then the context rank
  EXPECT_EQ(ctx.roles[5].cp_rank, 1);
  EXPECT_EQ(ctx.roles[5].tp_rank, 1);
  // The ring instead: cp - 1 block sends per layer and microbatch each way (a block, and
  // backward a block with its gradient), no collectives on the context stream.
  in.plan.cp_comm = "ring";
  const LoweredJob ring = lower(in.model, in.cluster, in.plan);
  int sends = 0, collectives = 0;
  double bytes = 0;
  for (const auto& t : ring.graph.tasks())
    if (ring.graph.stream_names()[t.stream] == "cp-comm") {
      if (t.kind == sim::TaskKind::Collective) ++collectives;
      if (t.kind == sim::TaskKind::Transfer) ++sends, bytes += t.bytes;
    }
  EXPECT_EQ(collectives, 0);
  EXPECT_EQ(sends, 32 * 4 * 2);
  EXPECT_DOUBLE_EQ(bytes, 32 * 4 * (kv / 2 + 2 * kv / 2));
}

TEST(Lowering, RingContextParallelismOverlapsEachBlockWithTheAttentionBefore) {
  // One attention op on two context ranks whose link has latency L and no bandwidth limit:
  // the forward is two steps of half the attention, the second waiting for the block that
  // left at the start: c + max(c, L). The all-gather puts L (one step of a two-rank ring)
  // before the whole attention instead.
  for (double L : {1e-4, 0.5}) {
    workloads::ModelGraph model;
    model.name = "attention";
    model.layers = 1;
    workloads::Op op;
    op.name = "attention";
    op.op_class = sim::OpClass::Attention;
    op.layer = 0;
    op.fwd_flops = 4e12;
    op.bwd_flops = 8e12;
    op.counts_as_model_flops = true;
    op.cp_kv_bytes = 1e6;
    model.add_op(op);
    const platforms::Cluster cluster = free_network(2, 1e300, L);
    Plan plan;
    plan.cp = 2;
    plan.global_batch_size = 1;
    plan.comm_sms = 0;  // the exchange's kernels leave compute every SM: the overlap alone
    plan.cp_comm = "ring";
    const Simulation ring = simulate(model, cluster, plan);
    plan.cp_comm = "all-gather";
    const Simulation gather = simulate(model, cluster, plan);
    auto forward_end = [](const Simulation& s, double* compute) {
      double end = 0;
      *compute = 0;
      for (size_t i = 0; i < s.job.graph.size(); ++i) {
        const sim::Task& t = s.job.graph.task(static_cast<sim::TaskId>(i));
        if (t.kind == sim::TaskKind::Compute && s.job.graph.labels()[t.label].rfind("fwd", 0) == 0) {
          end = std::max(end, s.result.end_s[i]);
          *compute += t.duration_s;
        }
      }
      return end;
    };
    double c2 = 0, whole = 0;
    const double ring_end = forward_end(ring, &c2), gather_end = forward_end(gather, &whole);
    EXPECT_NEAR(c2, whole, 1e-12);  // the same attention, in two steps
    const double c = whole / 2;
    EXPECT_NEAR(ring_end, c + std::max(c, L), 1e-9) << L;
    EXPECT_NEAR(gather_end, L + whole, 1e-9) << L;
    EXPECT_LE(ring.report.iteration_time_s, gather.report.iteration_time_s) << L;
  }
}

TEST(Lowering, UnevenStagesPutTheListedLayersOnEachStage) {
  Inputs in = presets("dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  in.plan.stages = {10, 14};
  const auto order = in.model.topological_order();
  const auto stage = stage_of_ops(in.model, order, in.plan);
  int on_first = 0;
  for (int v : order)
    if (in.model.op(v).layer >= 0 && in.model.op(v).layer < in.model.layers && stage[v] == 0 &&
        in.model.op(v).layer_input)
      ++on_first;
  EXPECT_EQ(on_first, 10);
  in.plan.stages = {10, 10};
  EXPECT_THROW(lower(in.model, in.cluster, in.plan), ConfigError);
}

// Megatron-Core's account_for_embedding_in_pipeline_split / _loss_: the embedding and the loss
// count as layers, everything splits evenly, the first and last chunk take one layer fewer.
// Llama 3.1 405B (126 layers) as Megatron-Bridge's recipe runs it.
TEST(Lowering, MegatronsSplitCountsTheEmbeddingAndLossAsLayers) {
  Plan p;
  p.pp = 16;
  p.virtual_stages = 4;
  p.schedule = "interleaved-1f1b";
  std::vector<int> even(64, 2);
  even[62] = even[63] = 1;  // as even as possible, first stages first
  EXPECT_EQ(p.layers_per_stage(126), even);
  p.account_for_embedding = p.account_for_loss = true;
  std::vector<int> megatron(64, 2);
  megatron.front() = megatron.back() = 1;  // (126 + 2) / 64 = 2, less the embedding, the loss
  EXPECT_EQ(p.layers_per_stage(126), megatron);
  p.virtual_stages = 8;  // 128 chunks: the first holds only the embedding, the last the head
  std::vector<int> one(128, 1);
  one.front() = one.back() = 0;
  EXPECT_EQ(p.layers_per_stage(126), one);

  // GPT-3 1.3B (24 layers) on 2 x 13 chunks: the ops of the embedding alone on chunk 0,
  // layer l on chunk l + 1, the final norm, head and loss alone on chunk 25.
  Inputs in = presets("dgx-a100-1x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  in.plan.tp = 1;
  in.plan.dp = 4;
  in.plan.virtual_stages = 13;
  in.plan.schedule = "interleaved-1f1b";
  in.plan.global_batch_size = 16;
  in.plan.account_for_embedding = in.plan.account_for_loss = true;
  const auto order = in.model.topological_order();
  const auto stage = stage_of_ops(in.model, order, in.plan);
  for (int v : order) {
    const int layer = in.model.op(v).layer;
    EXPECT_EQ(stage[v], layer < 0 ? 0 : layer >= in.model.layers ? 25 : layer + 1) << in.model.op(v).name;
  }
  EXPECT_NO_THROW(lower(in.model, in.cluster, in.plan));
  in.plan.account_for_loss = false;  // 25 units over 26 chunks
  EXPECT_THROW(lower(in.model, in.cluster, in.plan), ConfigError);
}

TEST(Pipeline, OneFOneBMakespanIsMPlusPMinusOneTimesFPlusB) { expect_pipeline_closed_form("1f1b"); }

TEST(Lowering, OneGpuIterationIsTheSumOfOpTimes) {
  const Inputs in = presets("single-a100", "gpt3-1.3b", "single-gpu");
  const Simulation s = simulate(in.model, in.cluster, in.plan);
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  double per_microbatch = 0;
  for (size_t v = 0; v < in.model.size(); ++v) {
    const workloads::Op& op = in.model.op(v);
    per_microbatch += pm.time_s(lowering::kernel_of(op, in.model, in.plan, Pass::Forward));
    per_microbatch += pm.time_s(lowering::kernel_of(op, in.model, in.plan, Pass::Backward));
  }
  const double step = pm.time_s({sim::OpClass::Optimizer, 0, 38 * in.model.parameter_count(), in.model.dtype});
  const double expected = in.plan.microbatches() * per_microbatch + step;
  EXPECT_NEAR(s.result.makespan_s / expected, 1.0, 1e-12);
  EXPECT_EQ(s.report.devices.size(), 1u);
  EXPECT_NEAR(s.report.devices[0].idle_s, 0.0, 1e-9);
}

TEST(Lowering, FoldingSymmetricReplicasDoesNotChangeTheAnswer) {
  Inputs in = presets("dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  in.plan.global_batch_size = 32;
  const LoweredJob folded = lower(in.model, in.cluster, in.plan);
  LowerOptions unfolded;
  unfolded.fold_symmetric = false;
  const LoweredJob full = lower(in.model, in.cluster, in.plan, unfolded);
  EXPECT_EQ(folded.graph.devices().size(), 2u);
  EXPECT_EQ(full.graph.devices().size(), 8u);
  const auto engine = sim::engines().make("analytic");
  const double a = engine->run(folded.graph, in.cluster.network, {}).makespan_s;
  const double b = engine->run(full.graph, in.cluster.network, {}).makespan_s;
  EXPECT_NEAR(a / b, 1.0, 1e-12);
}

TEST(Lowering, MegatronRankOrderKeepsTensorGroupsInsideAServer) {
  const Inputs in = presets("dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-1f1b");
  const LoweredJob job = lower(in.model, in.cluster, in.plan);
  for (int i = 0; i < in.cluster.gpu_count(); ++i) {
    const GpuRole& r = job.roles[i];
    EXPECT_EQ(gpu_index(in.plan, r.stage, r.dp_rank, r.tp_rank), i);
    EXPECT_EQ(in.cluster.gpus[i].server, in.cluster.gpus[i - r.tp_rank].server);
  }
}

TEST(Lowering, FasterGpusFinishTheirStageSooner) {
  // Stage 0 on the A100 server, stage 1 on the H100 server.
  const Inputs in = presets("mixed-a100-h100-2x8", "gpt3-1.3b", "tp4-pp2-dp2-1f1b");
  const Simulation s = simulate(in.model, in.cluster, in.plan);
  ASSERT_EQ(s.report.simulated.size(), 2u);
  EXPECT_EQ(s.report.devices[0].gpu_type, "A100-SXM-80GB");
  EXPECT_EQ(s.report.devices[15].gpu_type, "H100-SXM-80GB");
  EXPECT_LT(s.report.simulated[1].compute_s, s.report.simulated[0].compute_s);
  EXPECT_GT(s.report.simulated[1].bubble_fraction, s.report.simulated[0].bubble_fraction);
}

TEST(Lowering, FullRecomputeAddsOneForwardOfTheLayers) {
  Inputs in = presets("dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-1f1b");
  const LoweredJob job = lower(in.model, in.cluster, in.plan);
  const double B = in.plan.global_batch_size, s = 2048, l = 40, h = 5120, V = 51200;
  EXPECT_NEAR(job.hardware_flops / (96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))), 1.0, 1e-12);
}

TEST(Simulate, SameInputsGiveTheSameBytes) {
  const Inputs in = presets("dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-1f1b");
  auto once = [&] {
    const Simulation s = simulate(in.model, in.cluster, in.plan);
    std::ostringstream json, trace;
    report::write_json(json, s.report);
    report::write_chrome_trace(trace, s.job.graph, s.result);
    return json.str() + trace.str();
  };
  const std::string first = once();
  EXPECT_EQ(first, once());
  EXPECT_NE(first.find("\"name\":\"memory\",\"ph\":\"C\""), std::string::npos);  // memory counter track
}

TEST(Simulate, EveryPresetRuns) {
  struct Case {
    const char *platform, *workload, *plan;
  } cases[] = {
      {"single-a100", "gpt3-1.3b", "single-gpu"},
      {"dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-1f1b"},
      {"dgx-a100-4x8", "gpt3-175b", "tp8-pp4-gpipe"},
      {"mixed-a100-h100-2x8", "gpt3-13b", "tp4-pp2-dp2-1f1b"},
      {"pcie-l4-2x4", "gpt3-1.3b", "dp8-pcie"},
      {"dgx-a100-128x8", "gpt3-175b", "tp8-pp16-dp8-1f1b"},
      {"dgx-a100-1x8", "gpt3-1.3b", "dp8-parameter-server"},
      {"dgx-h100-1x8", "gpt3-1.3b", "dp8-gossip-topk"},
      {"dgx-a100-4x8", "gpt3-1.3b", "tp4-pp2-dp4-interleaved-sp"},
      {"h100-rail-8x8", "gpt3-13b", "tp8-pp2-dp4-1f1b"},
      {"dgx-a100-4x8", "llama3-8b", "tp4-pp2-dp4-interleaved-sp"},
      {"dgx-a100-4x8", "mixtral-8x7b", "tp4-pp2-dp4-ep4"},
      {"dgx-a100-4x8", "llama3-8b", "tp4-cp2-pp2-dp2"},
      {"dgx-a100-1x8", "resnet50", "dp8-mb128"},
      {"dgx-a100-1x8", "bert-large", "dp8-parameter-server"},
      {"dgx-h100-1x8", "vit-h14", "dp8-mb128"},
      {"h100-rail-8x8", "llama3-70b", "tp8-pp2-dp4-1f1b"},
  };
  for (const Case& c : cases) {
    const Inputs in = presets(c.platform, c.workload, c.plan);
    const Simulation s = simulate(in.model, in.cluster, in.plan);
    EXPECT_GT(s.report.iteration_time_s, 0) << c.plan;
    EXPECT_GT(s.report.mfu, 0.05) << c.plan;
    EXPECT_LT(s.report.mfu, 0.8) << c.plan;  // below the GEMM efficiency ceiling
    EXPECT_EQ(s.report.devices.size(), static_cast<size_t>(in.cluster.gpu_count()));
  }
}

}  // namespace
}  // namespace dejavu::strategies
