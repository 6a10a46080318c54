// The search's cost model: the fused lowering agrees with the unfused one (its memory is a
// conservative bound under ZeRO-3's prefetch), and the
// PipelineModel (no task graph) agrees with fused lowering + the analytic engine on every
// plan of whole search spaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

#include "sim/memory.h"
#include "strategies/lowering.h"
#include "strategies/search/evaluator.h"
#include "strategies/search/pipeline_model.h"
#include "strategies/search/refine.h"
#include "strategies/search/space.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::search {
namespace {

using dejavu::testing::src;

struct Outcome {
  double makespan_s = 0, peak_bytes = 0;
};

Outcome run(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan, bool fused) {
  LowerOptions o;
  o.fuse_items = fused;
  const LoweredJob job = lower(model, cluster, plan, o);
  const sim::Result r = sim::engines().make(kSearchEngine)->run(job.graph, cluster.network, {});
  Outcome out{r.makespan_s, 0};
  for (const auto& m : sim::memory_profiles(job.graph, r)) out.peak_bytes = std::max(out.peak_bytes, m.peak_bytes);
  return out;
}

TEST(FusedLowering, SameTimeAndPeakMemoryAsOneTaskPerSegment) {
  struct Case {
    const char *platform, *workload, *plan;
  };
  for (const Case& c :
       {Case{"dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-1f1b"}, Case{"dgx-a100-4x8", "gpt3-13b", "tp8-pp4-gpipe"},
        Case{"dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp4-interleaved-sp"},
        Case{"dgx-a100-4x8", "gpt3-13b", "tp4-pp2-dp2-1f1b"},
        Case{"mixed-a100-h100-2x8", "gpt3-13b", "tp4-pp2-dp2-1f1b"}}) {
    SCOPED_TRACE(c.plan);
    const auto cluster = platforms::load_cluster_file(src("platforms/presets/") + c.platform + ".yaml");
    const auto model = workloads::load_workload_file(src("workloads/presets/") + c.workload + ".yaml");
    Plan plan = load_plan_file(src("strategies/presets/") + c.plan + ".yaml");
    if (plan.gpus() != cluster.gpu_count()) plan.dp = cluster.gpu_count() / (plan.tp * plan.pp);
    plan.global_batch_size = plan.dp * plan.micro_batch_size * 8 * plan.pp;
    for (int zero : {0, 3}) {
      for (const char* schedule : {"", "zb-h1"}) {
        Plan p = plan;
        p.zero = zero;
        if (*schedule && p.virtual_stages == 1) p.schedule = schedule;
        const Outcome a = run(model, cluster, p, false), b = run(model, cluster, p, true);
        EXPECT_NEAR(b.makespan_s, a.makespan_s, 1e-9 * a.makespan_s) << "zero " << zero << " " << p.schedule;
        if (zero < 3) {
          EXPECT_NEAR(b.peak_bytes, a.peak_bytes, 1e-9 * a.peak_bytes) << p.schedule;
        } else {
          // A fused item holds its peak from its start, while the next item's weights are
          // gathered: the bound is conservative, by less than an item's transient memory.
          EXPECT_GE(b.peak_bytes, a.peak_bytes * (1 - 1e-9)) << p.schedule;
          EXPECT_LE(b.peak_bytes, a.peak_bytes * 1.15) << p.schedule;
        }
      }
    }
  }
}

// Every plan of the space, both ways. The fast path must take the homogeneous ones.
void expect_fast_path_exact(
    const std::string& platform, const std::string& workload, int global_batch, double min_share_fast,
    const std::function<void(Plan&)>& edit = [](Plan&) {}) {
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/" + platform + ".yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/" + workload + ".yaml"));
  const Problem problem{&model, &cluster, global_batch};
  SimulationEvaluator slow(problem, "ring", SimulationEvaluator::Path::Simulate);
  PipelineModel fast(problem);
  const std::vector<Plan> plans = enumerate(problem, default_space(problem, 4));
  ASSERT_GT(plans.size(), 50u);
  int taken = 0, compared = 0;
  for (Plan plan : plans) {
    edit(plan);
    const Score s = slow.evaluate(plan);
    if (!s.simulated) continue;  // pruned or invalid: the fast path is never asked
    ++compared;
    Score f;
    if (!fast.score(plan, f)) continue;
    ++taken;
    SCOPED_TRACE(describe(plan));
    EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
    EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
    EXPECT_EQ(f.fits, s.fits);
    if (::testing::Test::HasFailure()) return;  // one plan's story is enough
  }
  EXPECT_GE(taken, min_share_fast * compared) << taken << " of " << compared;
}

TEST(PipelineModel, MatchesTheEngineOnEveryPlanOfOneServer) {
  expect_fast_path_exact("dgx-a100-1x8", "gpt3-1.3b", 64, 1.0);
}

TEST(PipelineModel, MatchesTheEngineOnEveryPlanOfFourServers) {
  expect_fast_path_exact("dgx-a100-4x8", "gpt3-1.3b", 128, 1.0);
}

TEST(PipelineModel, MatchesTheEngineOnEveryPlanWithABf16OptimizerState) {
  expect_fast_path_exact("dgx-a100-1x8", "gpt3-1.3b", 64, 1.0, [](Plan& p) { p.optimizer_dtype = "bf16"; });
}

TEST(PipelineModel, MatchesTheEngineOnEveryPlanWithFsdpsLaterBackwardGathers) {
  for (const char* mode : {"post", "none"})
    expect_fast_path_exact("dgx-a100-1x8", "gpt3-1.3b", 64, 1.0, [&](Plan& p) {
      if (p.zero == 3) p.zero_backward_prefetch = mode;
    });
}

TEST(PipelineModel, MatchesTheEngineOnEveryPlanWithOptimizerOffload) {
  // A DGX A100 320GB with its host side: the space adds offload to CPU memory and to NVMe.
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const Space space = default_space(Problem{&model, &cluster, 64}, 4);
  EXPECT_EQ(space.offload, (std::vector<std::string>{"", "cpu", "nvme"}));
  expect_fast_path_exact("dgx-a100-40gb-1x8", "gpt3-1.3b", 64, 1.0);
}

TEST(PipelineModel, AnOptimizerTheHostCannotHoldDoesNotFit) {
  // Llama 3 70B (P = 70.6e9 parameters) on one DGX A100 320GB, tp4 dp2 ZeRO-3: the server's
  // eight GPUs step P/8 each, so CPU offload holds 16 P = 1.13 TB of its 1 TB; NVMe offload
  // holds 4 P = 282 GB of CPU memory and 12 P = 847 GB of its 15 TB of NVMe.
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/llama3-70b.yaml"));
  ASSERT_GT(16 * model.parameter_count(), 1e12);
  ASSERT_LT(4 * model.parameter_count(), 1e12);
  const Problem problem{&model, &cluster, 16};
  Plan plan;
  ASSERT_TRUE(make_plan(problem, 4, 1, 1, plan));
  plan.zero = 3;
  plan.recompute = "full";
  plan.sequence_parallel = true;
  for (const char* tier : {"cpu", "nvme"}) {
    plan.offload_optimizer = tier;
    SimulationEvaluator slow(problem, "ring", SimulationEvaluator::Path::Simulate);
    Score f;
    ASSERT_TRUE(PipelineModel(problem).score(plan, f));
    const Score s = slow.evaluate(plan);
    EXPECT_EQ(f.fits, std::string(tier) == "nvme") << tier;
    EXPECT_EQ(s.fits, f.fits) << tier;
  }
}

// A preset problem priced both ways: the engine (slow) and the fast path, over the plans of
// its default space.
struct BothPaths {
  platforms::Cluster cluster;
  workloads::ModelGraph model;
  Problem problem;
  SimulationEvaluator slow;
  PipelineModel fast;
  std::vector<Plan> plans;
  BothPaths(const std::string& platform, const std::string& workload, int global_batch)
      : cluster(platforms::load_cluster_file(src("platforms/presets/" + platform + ".yaml"))),
        model(workloads::load_workload_file(src("workloads/presets/" + workload + ".yaml"))),
        problem{&model, &cluster, global_batch},
        slow(problem, "ring", SimulationEvaluator::Path::Simulate),
        fast(problem),
        plans(enumerate(problem, default_space(problem, 4))) {}
};

// The refinements the fast path takes (recomputation per stage; the others go to the
// engine) price as the engine prices them.
TEST(PipelineModel, MatchesTheEngineOnRecomputationPerStage) {
  BothPaths both("dgx-a100-1x8", "gpt3-1.3b", 64);
  auto [slow, fast, plans, problem] = std::tie(both.slow, both.fast, both.plans, both.problem);
  int taken = 0;
  for (size_t i = 0; i < plans.size(); i += 7) {
    if (plans[i].pp < 2 || plans[i].recompute == "none") continue;
    for (const Plan& plan : refinements(problem, plans[i])) {
      if (plan.stage_recompute.empty()) continue;
      Score f;
      if (!fast.score(plan, f)) continue;
      ++taken;
      const Score s = slow.evaluate(plan);
      SCOPED_TRACE(describe(plan));
      EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
      EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(taken, 20);
}

// Every fifth plan of Llama 3 8B's space on a DGX A100 that recomputes fully, edited: the fast
// path prices the edited plan as the engine does, and `against` compares its scores (engine,
// fast path) with the unedited plan's (engine, fast path). Returns the plans compared.
int expect_full_recompute_variants(
    const std::function<void(Plan&)>& edit,
    const std::function<void(const Score&, const Score&, const Score&, const Score&)>& against) {
  BothPaths both("dgx-a100-1x8", "llama3-8b", 32);
  auto [slow, fast, plans] = std::tie(both.slow, both.fast, both.plans);
  int taken = 0;
  for (size_t i = 0; i < plans.size(); i += 5) {
    if (plans[i].recompute != "full") continue;
    Plan plan = plans[i];
    edit(plan);
    const Score s = slow.evaluate(plan);
    Score f, full;
    if (!s.simulated || !fast.score(plan, f)) continue;  // pruned, or not the fast path's
    if (!fast.score(plans[i], full)) {
      ADD_FAILURE() << "the unedited plan left the fast path: " << describe(plans[i]);
      return taken;
    }
    ++taken;
    SCOPED_TRACE(describe(plan));
    EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
    EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
    against(s, f, slow.evaluate(plans[i]), full);
    if (::testing::Test::HasFailure()) return taken;
  }
  return taken;
}

// PyTorch's early-stopping replay (Llama's down projection not replayed) prices as the
// engine prices it, and a plan that stops early is a different plan to the caches.
TEST(PipelineModel, MatchesTheEngineOnEarlyStoppingRecomputation) {
  const int taken =
      expect_full_recompute_variants([](Plan& p) { p.recompute_early_stop = true; },
                                     [](const Score& s, const Score& f, const Score& whole_slow, const Score& whole) {
                                       EXPECT_LT(s.iteration_time_s, whole_slow.iteration_time_s);
                                       EXPECT_LT(f.iteration_time_s, whole.iteration_time_s);
                                     });
  EXPECT_GT(taken, 5);
}

// torchtitan's op-level selective checkpointing (Llama's wk, wo and w3 replayed in part of
// fused GEMMs) prices as the engine prices it, faster than full recomputation and fuller,
// and is a plan of its own to the caches.
TEST(PipelineModel, MatchesTheEngineOnOpLevelSelectiveRecomputation) {
  const int taken = expect_full_recompute_variants([](Plan& p) { p.recompute = "selective-op"; },
                                                   [](const Score&, const Score& f, const Score&, const Score& full) {
                                                     EXPECT_LT(f.iteration_time_s, full.iteration_time_s);
                                                     EXPECT_GT(f.peak_memory_bytes, full.peak_memory_bytes);
                                                   });
  EXPECT_GT(taken, 5);
}

// MaxText's save_dot_except_mlpwi (the attention kernel and the MLP's input projection
// replayed) prices as the engine prices it, faster than full recomputation and fuller.
TEST(PipelineModel, MatchesTheEngineOnMaxTextsDotSavingRecomputation) {
  const int taken = expect_full_recompute_variants([](Plan& p) { p.recompute = "save-dot-except-mlpwi"; },
                                                   [](const Score&, const Score& f, const Score&, const Score& full) {
                                                     EXPECT_LT(f.iteration_time_s, full.iteration_time_s);
                                                     EXPECT_GT(f.peak_memory_bytes, full.peak_memory_bytes);
                                                   });
  EXPECT_GT(taken, 5);
}

// Megatron-Core's block method (recompute_layers: the first N layers of each model chunk
// recomputed, the rest keeping everything) prices as the engine prices it, between full
// recomputation and none, on every schedule and ZeRO stage of the space.
TEST(PipelineModel, MatchesTheEngineOnBlockRecomputation) {
  BothPaths both("dgx-a100-1x8", "gpt3-1.3b", 64);
  auto [slow, fast, plans] = std::tie(both.slow, both.fast, both.plans);
  int taken = 0;
  for (size_t i = 0; i < plans.size(); i += 3) {
    if (plans[i].recompute != "full") continue;
    for (const int n : {1, 2}) {
      Plan plan = plans[i];
      plan.recompute_layers = n;
      const Score s = slow.evaluate(plan);
      Score f, whole;
      if (!s.simulated) continue;
      ASSERT_TRUE(fast.score(plan, f)) << describe(plan);
      ASSERT_TRUE(fast.score(plans[i], whole));
      ++taken;
      SCOPED_TRACE(describe(plan));
      EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
      EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
      EXPECT_EQ(f.fits, s.fits);
      EXPECT_LT(f.iteration_time_s, whole.iteration_time_s);    // fewer layers replayed
      EXPECT_GT(f.peak_memory_bytes, whole.peak_memory_bytes);  // more kept
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(taken, 20);
}

// fp32 gradients (grad_dtype): reductions of four bytes a parameter, weight gathers of two,
// the gradient states and the offloaded copies in fp32, as the engine prices them.
TEST(PipelineModel, MatchesTheEngineWithFp32Gradients) {
  for (const char* platform : {"dgx-a100-4x8", "dgx-a100-40gb-1x8"}) {
    const auto cluster = platforms::load_cluster_file(src(std::string("platforms/presets/") + platform + ".yaml"));
    const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
    const Problem problem{&model, &cluster, 64, "fp32"};
    SimulationEvaluator slow(problem, "ring", SimulationEvaluator::Path::Simulate);
    PipelineModel fast(problem);
    const std::vector<Plan> plans = enumerate(problem, default_space(problem, 4));
    int taken = 0, slower = 0;
    for (size_t i = 0; i < plans.size(); i += 3) {
      const Plan& plan = plans[i];
      ASSERT_EQ(plan.grad_dtype, "fp32");
      const Score s = slow.evaluate(plan);
      Score f;
      if (!s.simulated || !fast.score(plan, f)) continue;
      ++taken;
      SCOPED_TRACE(describe(plan) + " on " + platform);
      EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
      EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
      Plan bf16 = plan;
      bf16.grad_dtype.clear();
      Score b;
      ASSERT_TRUE(fast.score(bf16, b));
      if (plan.dp > 1 && f.peak_memory_bytes > b.peak_memory_bytes) ++slower;
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(taken, 30);
    EXPECT_GT(slower, taken / 3);  // what holds gradients holds twice the bytes
  }
}

// Per-stage tensor degrees (stage_tp): each stage's blocks, rings and memory at its own
// degree, its GPUs after the earlier stages', as the engine prices them. Every 11th plan of
// the space with three or four stages takes one of the shapes of powers of two (not all
// equal) whose sum divides the GPU count, in turn.
TEST(PipelineModel, MatchesTheEngineOnPerStageTensorDegrees) {
  for (const char* platform : {"dgx-a100-4x8", "mixed-a100-h100-2x8"}) {
    const auto cluster = platforms::load_cluster_file(src(std::string("platforms/presets/") + platform + ".yaml"));
    const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
    const Problem problem{&model, &cluster, 128};
    const int n = cluster.gpu_count();
    std::vector<std::vector<int>> shapes;
    for (int pp : {3, 4})
      for (int code = 0; code < (1 << (2 * pp)); ++code) {  // each entry 1, 2, 4 or 8
        std::vector<int> shape;
        int sum = 0;
        for (int s = 0; s < pp; ++s) sum += shape.emplace_back(1 << ((code >> (2 * s)) & 3));
        if (n % sum == 0 && std::count(shape.begin(), shape.end(), shape[0]) != pp) shapes.push_back(shape);
      }
    ASSERT_GT(shapes.size(), 20u);
    SimulationEvaluator slow(problem, "ring", SimulationEvaluator::Path::Simulate);
    PipelineModel fast(problem);
    const std::vector<Plan> plans = enumerate(problem, default_space(problem, 4));
    int taken = 0;
    size_t next = 0;
    for (size_t i = 0; i < plans.size(); i += 11) {
      if ((plans[i].pp != 3 && plans[i].pp != 4) || plans[i].virtual_stages != 1) continue;
      const std::vector<int>* shape = &shapes[next++ % shapes.size()];
      while (static_cast<int>(shape->size()) != plans[i].pp) shape = &shapes[next++ % shapes.size()];
      Plan plan = plans[i];
      plan.stage_tp = *shape;
      plan.tp = *std::max_element(shape->begin(), shape->end());
      plan.dp = n / static_cast<int>(plan.tp_sum());
      const Score s = slow.evaluate(plan);
      Score f;
      if (!s.simulated) continue;           // a batch the replicas do not divide, or pruned
      const bool takes = fast.takes(plan);  // what the refinement asks before scoring a shape
      if (!fast.score(plan, f)) {           // replicas on different GPU types: the engine's
        EXPECT_FALSE(takes) << describe(plan);
        continue;
      }
      EXPECT_TRUE(takes) << describe(plan);
      ++taken;
      SCOPED_TRACE(describe(plan) + " on " + platform);
      EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
      EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
      EXPECT_EQ(f.fits, s.fits);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(taken, 25) << platform;  // 33 and 32 when written
  }
}

// Megatron's split accounting for the embedding and loss, with chunks of no layer at the
// ends (GPT-3 1.3B on 2 x 13 chunks) and uneven ends (GPT-3 13B, 40 layers, on 2 x 3 and
// 2 x 7 chunks: [6, 7, 7, 7, 7, 6], [2, 3, ..., 3, 2]): the fast path prices it as the engine.
TEST(PipelineModel, MatchesTheEngineOnMegatronsEmbeddingAndLossSplit) {
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  struct Case {
    const char* workload;
    int tp, dp, v;
  };
  for (const Case& c : {Case{"gpt3-1.3b", 1, 4, 13}, Case{"gpt3-13b", 4, 1, 3}, Case{"gpt3-13b", 4, 1, 7}}) {
    const auto model = workloads::load_workload_file(src("workloads/presets/") + c.workload + ".yaml");
    const Problem problem{&model, &cluster, 16};
    SimulationEvaluator slow(problem, "ring", SimulationEvaluator::Path::Simulate);
    PipelineModel fast(problem);
    Plan plan;
    plan.tp = c.tp;
    plan.pp = 2;
    plan.dp = c.dp;
    plan.virtual_stages = c.v;
    plan.schedule = "interleaved-1f1b";
    plan.global_batch_size = 16;
    plan.account_for_embedding = plan.account_for_loss = true;
    SCOPED_TRACE(describe(plan));
    ASSERT_TRUE(fast.takes(plan));
    Score f;
    ASSERT_TRUE(fast.score(plan, f));
    const Score s = slow.evaluate(plan);
    ASSERT_TRUE(s.simulated);
    EXPECT_NEAR(f.iteration_time_s, s.iteration_time_s, 1e-9 * s.iteration_time_s);
    EXPECT_NEAR(f.peak_memory_bytes, s.peak_memory_bytes, 1e-9 * s.peak_memory_bytes);
    plan.account_for_embedding = plan.account_for_loss = false;  // the even split, where it is one
    if (plan.total_stages() <= model.layers) {
      EXPECT_NE(slow.evaluate(plan).iteration_time_s, s.iteration_time_s);
    }
  }
}

TEST(PipelineModel, MatchesTheEngineOnAMixedCluster) {
  // Replicas that span both server types price differently: those go to the engine.
  expect_fast_path_exact("mixed-a100-h100-2x8", "gpt3-1.3b", 64, 0.3);
}

}  // namespace
}  // namespace dejavu::strategies::search
