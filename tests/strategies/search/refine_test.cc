// The second tier of the plan space (refine.h): every refinement a search may print comes
// back from its plan YAML as the same plan, each kind of refinement is produced, and from a
// Megatron plan with data parallelism across servers the refinement hides the gradient
// all-reduce under the backward (Megatron-Core's overlapped gradient reduce) and so ends
// faster than the plan it started from.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "sim/config_node.h"
#include "strategies/search/evaluator.h"
#include "strategies/search/refine.h"
#include "strategies/search/space.h"
#include "tools/plan_search.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::search {
namespace {

using dejavu::testing::src;

struct Fixture {
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  Problem problem{&model, &cluster, 128};
};

TEST(Refine, EveryValidRefinementRoundTripsThroughItsPlanYaml) {
  const Fixture f;
  const std::vector<Plan> plans = enumerate(f.problem, default_space(f.problem, 2));
  ASSERT_GT(plans.size(), 100u);
  int stage_rc = 0, block_rc = 0, overlap = 0, bucket = 0, sync = 0, schedule = 0, shapes = 0, shard = 0, checked = 0;
  for (size_t i = 0; i < plans.size(); i += 29) {
    for (const Plan& r : refinements(f.problem, plans[i])) {
      try {
        validate(r, f.model, f.cluster);
      } catch (const ConfigError&) {
        continue;  // left to the evaluator, which scores it invalid
      }
      std::ostringstream yaml;
      write_plan_yaml(yaml, r, "refined");
      const Plan back = load_plan(ConfigNode::load_string(yaml.str(), "refined.yaml"));
      ASSERT_EQ(plan_key(back), plan_key(r)) << yaml.str();
      // and through its JSON (search --json, Python's search): the same keys
      const std::string json = tools::plan_json_text(r);
      ASSERT_EQ(plan_key(load_plan(ConfigNode::load_string(json, "refined.json"))), plan_key(r)) << json;
      ++checked;
      stage_rc += !r.stage_recompute.empty();
      block_rc += r.recompute_layers > 0;
      overlap += r.overlap_grad_reduce || r.tp_comm_overlap;
      bucket += r.data_parallel.bucket_bytes > 0;
      sync += r.data_parallel.sync != "all-reduce";
      schedule += r.schedule == "chimera" || r.schedule == "terapipe";
      shard += r.dp_shard > 0;
      if (!r.stage_tp.empty()) {  // on the GPUs of the plan it refines
        ++shapes;
        EXPECT_EQ(r.gpus(), plans[i].gpus());
        EXPECT_EQ(r.tp, 2 * plans[i].tp);
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(stage_rc, 0);
  EXPECT_GT(block_rc, 0);
  EXPECT_GT(overlap, 0);
  EXPECT_GT(bucket, 0);
  EXPECT_GT(sync, 0);
  EXPECT_GT(schedule, 0);
  EXPECT_GT(shapes, 0);
  EXPECT_GT(shard, 0);
}

// The stage shapes among `plans` other than `from`'s (other refinements keep its shape).
std::vector<std::vector<int>> shapes_of(const std::vector<Plan>& plans, const Plan& from) {
  std::vector<std::vector<int>> out;
  for (const Plan& r : plans)
    if (!r.stage_tp.empty() && r.stage_tp != from.stage_tp) out.push_back(r.stage_tp);
  return out;
}

// Stage shapes one move away, hand-listed. From tp2 pp4: a stage doubles and the two of its
// width nearest it halve (six ways). A stage twice as wide as its neighbours gets the
// layers its speed earns: more than an even split gives it, the narrow stages fewer.
TEST(Refine, StageShapesOneMoveAway) {
  const Fixture f;
  Plan at;
  ASSERT_TRUE(make_plan(f.problem, 2, 4, 1, at));
  const std::vector<Plan> from_plain = refinements(f.problem, at);
  using Shapes = std::vector<std::vector<int>>;
  EXPECT_EQ(shapes_of(from_plain, at),
            (Shapes{{4, 1, 1, 2}, {1, 4, 1, 2}, {2, 4, 1, 1}, {2, 1, 4, 1}, {1, 1, 4, 2}, {2, 1, 1, 4}}));
  const Plan& wide = *std::find_if(from_plain.begin(), from_plain.end(), [](const Plan& r) {
    return r.stage_tp == std::vector<int>{4, 1, 1, 2};
  });
  ASSERT_EQ(wide.stages.size(), 4u);  // 24 layers: 6 each when even
  EXPECT_GT(wide.stages[0], 6);
  EXPECT_LT(wide.stages[1], 6);
  EXPECT_EQ(wide.gpus(), 32);
  // From [4, 1, 1, 2]: stages 0 and 1 swap, or stages 2 and 3; stage 0 halving while
  // stages 1 and 2 (a quarter its width) double is the plain tp2 plan, not a shape.
  EXPECT_EQ(shapes_of(refinements(f.problem, wide), wide), (Shapes{{1, 4, 1, 2}, {4, 1, 2, 1}}));
  SimulationEvaluator evaluator(f.problem);
  EXPECT_TRUE(evaluator.evaluate(wide).valid);
}

// What no refinement sets but a plan may hold comes back from its JSON and its YAML too:
// offload (of activations too), an update-rule variant's sync, compression and delay,
// early-stopping recomputation, Megatron's pipeline split, ZeRO-3's prefetch, token slices.
TEST(Refine, APlanComesBackFromItsJson) {
  Plan a;
  a.tp = 2;
  a.dp = 4;
  a.global_batch_size = 64;
  a.zero = 2;
  a.recompute = "full";
  a.recompute_early_stop = true;
  a.offload_optimizer = "cpu";
  Plan b;
  b.dp = 8;
  b.global_batch_size = 64;
  b.data_parallel.sync = "gossip";
  b.data_parallel.peers = 2;
  b.data_parallel.compression = "topk";
  b.data_parallel.density = 0.05;
  b.data_parallel.delay = 1;
  Plan c;
  c.pp = 4;
  c.dp = 2;
  c.global_batch_size = 64;
  c.account_for_embedding = c.account_for_loss = true;
  c.offload_activations = "cpu";
  Plan d = b;
  d.data_parallel = {};
  d.zero = 3;
  d.zero_prefetch = 2;
  Plan e;
  e.pp = 2;
  e.schedule = "terapipe";
  e.global_batch_size = 8;
  e.token_slice_count = 4;
  Plan f = e;
  f.token_slice_count = 0;
  f.token_slices = {1024, 1024};
  for (const Plan& p : {a, b, c, d, e, f}) {
    const std::string json = tools::plan_json_text(p);
    EXPECT_EQ(plan_key(load_plan(ConfigNode::load_string(json, "plan.json"))), plan_key(p)) << json;
    std::ostringstream yaml;
    write_plan_yaml(yaml, p, "round trip");
    EXPECT_EQ(plan_key(load_plan(ConfigNode::load_string(yaml.str(), "plan.yaml"))), plan_key(p)) << yaml.str();
  }
}

// `start` scored, then refined by hand (one base, kRefineRounds moves): its cost and the best.
struct Refined {
  double before = 0, after = 0;
  Plan best;
};
Refined refined_from(const Problem& problem, const Plan& start) {
  SimulationEvaluator evaluator(problem);
  SearchOptions options;
  options.refine = false;
  Tracker tracker("test", problem, evaluator, options);
  Refined out;
  out.before = tracker.evaluate(start).cost();
  refine(problem, tracker, 1, kRefineRounds);
  out.after = tracker.best()->score.cost();
  out.best = tracker.best()->plan;
  return out;
}

// Pure data parallelism over every GPU at ZeRO-3, `micro_batch` samples a microbatch.
Plan zero3_plan(const Problem& problem, int micro_batch, const std::string& recompute) {
  Plan p;
  EXPECT_TRUE(make_plan(problem, 1, 1, micro_batch, p));
  p.zero = 3;
  p.recompute = recompute;
  return p;
}

TEST(Refine, OverlapsTheGradientReduceOfDataParallelismAcrossServers) {
  const Fixture f;
  Plan start;
  ASSERT_TRUE(make_plan(f.problem, 2, 2, 1, start));  // tp2 pp2 dp8: the replicas span the servers
  start.recompute = "selective";
  start.sequence_parallel = true;
  start.zero = 1;
  const Refined r = refined_from(f.problem, start);
  ASSERT_LT(r.before, 1e9);
  const Plan& best = r.best;
  EXPECT_LT(r.after, r.before);
  EXPECT_TRUE(best.overlap_grad_reduce) << describe(best);
  EXPECT_EQ(best.tp * best.pp * best.dp, 32);  // the refinement keeps the plan's shape
  EXPECT_EQ(best.micro_batch_size, 1);
}

// Per-stage recomputation takes only the search's lighter modes: from torchtitan's op-level
// policy with none and full beside it, the last stages go to none, never to full (heavier)
// or Megatron's selective (not the framework's); from full with Megatron's modes, to none
// and selective.
TEST(Refine, StagesTakeTheSearchsLighterModesOnly) {
  Fixture f;
  Plan start;
  ASSERT_TRUE(make_plan(f.problem, 2, 2, 1, start));
  auto lighter = [&](const Problem& problem) {
    std::set<std::string> modes;
    for (const Plan& p : refinements(problem, start))
      for (size_t s = 1; s < p.stage_recompute.size(); ++s)
        if (p.stage_recompute[s] != start.recompute) modes.insert(p.stage_recompute[s]);
    return modes;
  };
  start.recompute = "full";
  EXPECT_EQ(lighter(f.problem), (std::set<std::string>{"none", "selective"}));
  f.problem.recompute = {"none", "selective-op", "full"};
  start.recompute = "selective-op";
  EXPECT_EQ(lighter(f.problem), (std::set<std::string>{"none"}));
}

// GPT-3 1.3B under full recomputation on 32 A100s has memory to spare: recomputing only the
// first quarter of each chunk's layers (3 of 12, Megatron-Core's block method) replays a
// quarter as much, and the refinement finds it.
TEST(Refine, RecomputesOnlyTheFirstLayersWhereTheMemoryAllows) {
  const Fixture f;
  Plan start;
  ASSERT_TRUE(make_plan(f.problem, 2, 2, 1, start));
  start.recompute = "full";
  const Refined r = refined_from(f.problem, start);
  ASSERT_LT(r.before, 1e9);
  const Plan& best = r.best;
  EXPECT_LT(r.after, r.before);
  EXPECT_EQ(best.recompute_layers, 3) << describe(best);
}

// Llama 3 8B under ZeRO-3 on eight GB200s at micro-batch 8 needs full recomputation (348 GB a
// GPU without), or its activations on the Grace CPUs: with three quarters of its 32 layers'
// offloaded (129 GB a GPU) the copies hide under the layers, so the refinement trades the
// replay for them, as Megatron-Bridge's GB200 recipes do (docs/HARDWARE.md).
TEST(Refine, OffloadsLayerActivationsInsteadOfRecomputingThem) {
  const platforms::Cluster cluster = platforms::load_cluster(
      ConfigNode::load_string("servers:\n  - count: 1\n    gpu: GB200-186GB\n    gpus_per_server: 8\n"
                              "    intra: {kind: nvswitch, bandwidth: 900 GB/s, latency: 1 us, efficiency: 0.809}\n"
                              "    nic: {bandwidth: 400 Gbps, latency: 2 us}\n"
                              "    host: {memory: 1.92 TB, memory_bandwidth: 2 TB/s, pcie: 256 GB/s}\n"
                              "network: {kind: fat-tree, latency: 1 us}\n",
                              "gb200-8.yaml"));
  const workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/llama3-8b.yaml"));
  const Problem problem{&model, &cluster, 128};
  const Plan start = zero3_plan(problem, 8, "full");
  const Refined r = refined_from(problem, start);
  ASSERT_LT(r.before, 1e9);
  const Plan& best = r.best;
  EXPECT_LT(r.after, r.before);
  EXPECT_EQ(best.recompute, "none") << describe(best);
  EXPECT_EQ(best.offload_activation_layers, 24) << describe(best);
  std::ostringstream yaml;  // and back from what search prints
  write_plan_yaml(yaml, best, "refined");
  EXPECT_EQ(plan_key(load_plan(ConfigNode::load_string(yaml.str(), "refined.yaml"))), plan_key(best)) << yaml.str();
  const std::string json = tools::plan_json_text(best);
  EXPECT_EQ(plan_key(load_plan(ConfigNode::load_string(json, "refined.json"))), plan_key(best)) << json;
}

// GPT-3 1.3B under ZeRO-3 over 32 A100s whose servers share one 100 Gb/s NIC each: sharded
// over every replica, each layer's gathers and reduce-scatters cross the servers' NICs; sharded
// over one server's 8 replicas (hybrid sharding, dp_shard 8) they run on its NVSwitch and only
// an eighth of the gradients, each GPU's shard, is all-reduced across the 4 servers, so the
// refinement takes it (678 ms to 547 ms a step); groups of 32 GPUs' would be whole dp, and
// groups of 16 straddle two servers (749 ms), which it does not propose.
TEST(Refine, ShardsZeroOverOneServersReplicasWhereTheNetworkIsSlow) {
  const platforms::Cluster cluster = platforms::load_cluster(
      ConfigNode::load_string("servers:\n  - count: 4\n    gpu: A100-SXM-80GB\n    gpus_per_server: 8\n"
                              "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us, efficiency: 0.759}\n"
                              "    nic: {bandwidth: 100 Gbps, latency: 2 us, per_gpu: false}\n"
                              "network: {kind: fat-tree, latency: 1 us}\n",
                              "a100-4x8-one-nic.yaml"));
  const workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const Problem problem{&model, &cluster, 128};
  const Plan start = zero3_plan(problem, 4, "selective");
  std::set<int> groups;
  for (const Plan& p : refinements(problem, start))
    if (p.dp_shard > 0) groups.insert(p.dp_shard);
  EXPECT_EQ(groups, (std::set<int>{8}));  // 8 x 4 = 32 is dp itself
  const Refined r = refined_from(problem, start);
  ASSERT_LT(r.before, 1e9);
  EXPECT_LT(r.after, r.before);
  EXPECT_EQ(r.best.dp_shard, 8) << describe(r.best);
}

}  // namespace
}  // namespace dejavu::strategies::search
