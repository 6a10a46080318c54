// stage_tp: each pipeline stage's own tensor-parallel degree (a submesh per stage, as Alpa's
// inter-op pass and Metis choose them), on GPT-3 1.3B (24 layers, 16 heads, two stages).
#include <gtest/gtest.h>

#include <string>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/lowering.h"
#include "strategies/plan.h"
#include "strategies/search/evaluator.h"
#include "strategies/search/pipeline_model.h"
#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

platforms::Cluster one_server(int n) {  // n A100s on one NVSwitch
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 1\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(n) +
          "\n    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
          "    nic: {bandwidth: 200 Gbps, latency: 1 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "one.yaml"));
}

struct StageTp : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  static Plan plan(int tp, std::vector<int> stage_tp) {
    Plan p;
    p.tp = tp;
    p.stage_tp = std::move(stage_tp);
    p.pp = 2;
    p.dp = 2;
    p.micro_batch_size = 2;
    p.global_batch_size = 16;
    p.comm_sms = 0;  // pipeline sends take no SM from the compute they meet
    return p;
  }
  static DeviceReport stage(const Report& r, int s) {
    for (const DeviceReport& d : r.devices)
      if (d.stage == s && d.dp_rank == 0) return d;
    ADD_FAILURE() << "no stage " << s;
    return DeviceReport{};
  }
};

TEST_F(StageTp, TheSameDegreeEverywhereIsThePlainPlan) {
  const auto cluster = one_server(8);
  const Report plain = simulate(model, cluster, plan(2, {})).report;
  const Report staged = simulate(model, cluster, plan(2, {2, 2})).report;
  EXPECT_DOUBLE_EQ(staged.iteration_time_s, plain.iteration_time_s);
  EXPECT_DOUBLE_EQ(staged.peak_memory_bytes, plain.peak_memory_bytes);
}

// Stage 0 on tp 2, stage 1 on tp 1, two replicas: 2 x 2 + 1 x 2 = 6 GPUs. Each stage runs,
// and holds, what the same stage of the uniform plan of its degree does (their pipeline
// sends aside, which take no compute with comm_sms 0).
TEST_F(StageTp, EachStageRunsAndHoldsWhatItsOwnDegreeGivesIt) {
  const Report mixed = simulate(model, one_server(6), plan(2, {2, 1})).report;
  const Report tp2 = simulate(model, one_server(8), plan(2, {})).report;
  const Report tp1 = simulate(model, one_server(4), plan(1, {})).report;
  EXPECT_NEAR(stage(mixed, 0).busy_s, stage(tp2, 0).busy_s, 1e-9);
  EXPECT_NEAR(stage(mixed, 1).busy_s, stage(tp1, 1).busy_s, 1e-9);
  EXPECT_NEAR(stage(mixed, 0).peak_memory_bytes, stage(tp2, 0).peak_memory_bytes, 1);
  EXPECT_NEAR(stage(mixed, 1).peak_memory_bytes, stage(tp1, 1).peak_memory_bytes, 1);
  EXPECT_LT(stage(mixed, 0).busy_s, stage(mixed, 1).busy_s);  // the wider stage computes less
  EXPECT_EQ(simulate(model, one_server(6), plan(2, {2, 1}), "simgrid").report.devices.size(), 6u);
}

TEST_F(StageTp, TheStagesGpusComeOneAfterAnother) {
  const Plan p = plan(2, {2, 1});
  const LoweredJob job = lower(model, one_server(6), p);
  // stage 0: replica 0 on GPUs 0-1, replica 1 on 2-3; stage 1: replica 0 on 4, replica 1 on 5
  const int stage[] = {0, 0, 0, 0, 1, 1}, replica[] = {0, 0, 1, 1, 0, 1}, rank[] = {0, 1, 0, 1, 0, 0};
  for (int g = 0; g < 6; ++g) {
    SCOPED_TRACE(g);
    EXPECT_EQ(job.roles[g].stage, stage[g]);
    EXPECT_EQ(job.roles[g].dp_rank, replica[g]);
    EXPECT_EQ(job.roles[g].tp_rank, rank[g]);
    EXPECT_EQ(replica_of_gpu(p, g), replica[g]);
    EXPECT_EQ(gpu_index(p, stage[g], replica[g], rank[g]), g);
  }
  // Without stage_tp, replica_of_gpu is Megatron's rank order: g / (tp x cp) mod dp.
  Plan u = plan(2, {});
  u.cp = 2;
  for (int g = 0; g < 40; ++g) EXPECT_EQ(replica_of_gpu(u, g), g / 4 % 2) << g;
}

TEST_F(StageTp, TheSearchsFastPathPricesItAsTheEngine) {
  const auto cluster = one_server(6);
  const search::Problem problem{&model, &cluster, 16};
  search::Score s;
  ASSERT_TRUE(search::PipelineModel(problem).score(plan(2, {2, 1}), s));
  search::SimulationEvaluator evaluator(problem, "ring", search::SimulationEvaluator::Path::Simulate);
  const search::Score engine = evaluator.evaluate(plan(2, {2, 1}));
  EXPECT_TRUE(engine.fits);
  EXPECT_NEAR(s.iteration_time_s, engine.iteration_time_s, 1e-9 * engine.iteration_time_s);
  EXPECT_NEAR(s.peak_memory_bytes, engine.peak_memory_bytes, 1e-9 * engine.peak_memory_bytes);
  std::ostringstream yaml;
  search::write_plan_yaml(yaml, plan(2, {2, 1}), "round trip");
  EXPECT_EQ(load_plan(ConfigNode::load_string(yaml.str(), "q.yaml")).stage_tp, (std::vector<int>{2, 1}));
  EXPECT_NE(search::describe(plan(2, {2, 1})).find("tp=[2,1]"), std::string::npos);
}

TEST_F(StageTp, LoadsAndRefusesWhatCannotRun) {
  auto load = [](const std::string& yaml) { return load_plan(ConfigNode::load_string(yaml, "p.yaml")); };
  const Plan p = load("pp: 2\ndp: 2\nstage_tp: [2, 1]\nglobal_batch_size: 16\n");
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.gpus(), 6);
  EXPECT_TRUE(load("pp: 2\nstage_tp: [4, 4]\nglobal_batch_size: 16\n").stage_tp.empty());      // the plain key
  EXPECT_THROW(load("pp: 2\nstage_tp: [2]\nglobal_batch_size: 16\n"), ConfigError);            // one per stage
  EXPECT_THROW(load("pp: 2\ntp: 4\nstage_tp: [2, 1]\nglobal_batch_size: 16\n"), ConfigError);  // tp the largest
  EXPECT_THROW(load("pp: 2\nstage_tp: [2, 0]\nglobal_batch_size: 16\n"), ConfigError);
  const auto cluster = one_server(8);
  try {  // 2 + 1 = 3 tensor ranks per replica, x dp 2 = 6 GPUs, not 8
    validate(p, model, cluster);
    ADD_FAILURE() << "6 GPUs on 8";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(sum of stage_tp) x dp = 3 x 2 = 6 GPUs"), std::string::npos) << e.what();
  }
  Plan odd = plan(3, {3, 1});  // 3 does not divide 16 heads
  odd.dp = 2;
  EXPECT_THROW(validate(odd, model, one_server(8)), ConfigError);
  Plan short_list = plan(2, {2, 1});  // built in code: checked where it is simulated
  short_list.pp = 3;
  EXPECT_THROW(validate(short_list, model, one_server(6)), ConfigError);
  Plan chimera = plan(2, {2, 1});
  chimera.schedule = "chimera";
  EXPECT_THROW(validate(chimera, model, one_server(6)), ConfigError);
}

}  // namespace
}  // namespace dejavu::strategies
