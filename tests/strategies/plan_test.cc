#include "strategies/plan.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "workloads/generator.h"

namespace dejavu::strategies {
namespace {

std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

std::string validation_error(const std::string& plan_file, const std::string& platform) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/" + platform));
  try {
    validate(load_plan_file(src(plan_file)), model, cluster);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Plan, TpMustDivideTheHeads) {
  const std::string e = validation_error("tests/fixtures/bad/tp3.plan.yaml", "dgx-a100-4x8.yaml");
  EXPECT_NE(e.find("tp3.plan.yaml:1:5: tp: 3 does not divide the 40 attention heads"), std::string::npos) << e;
  EXPECT_NE(e.find("valid: 1, 2, 4, 5, 8, 10, 20, 40"), std::string::npos) << e;
}

TEST(Plan, DegreesMustCoverEveryGpu) {
  const std::string e = validation_error("tests/fixtures/bad/wrong-gpu-count.plan.yaml", "dgx-a100-4x8.yaml");
  EXPECT_NE(e.find("wrong-gpu-count.plan.yaml:3:5: dp: tp x pp x dp = 4 x 2 x 2 = 16 GPUs, but platform "
                   "dgx-a100-4x8 has 32"),
            std::string::npos)
      << e;
}

TEST(Plan, GlobalBatchMustSplitIntoMicrobatches) {
  try {
    load_plan(ConfigNode::load_string("dp: 4\nmicro_batch_size: 2\nglobal_batch_size: 12\n", "b.yaml"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "b.yaml:3:20: global_batch_size: 12 is not a multiple of micro_batch_size x dp = 8; "
              "valid: any multiple of it");
  }
}

// A plan built in code (a search's, a sweep's refit) is held to the same rule: the lowering
// would otherwise run zero microbatches.
TEST(Plan, ACodeBuiltPlanWhoseReplicasDoNotSplitTheBatchIsRefused) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan p;
  p.tp = 8;
  p.dp = 4;
  p.micro_batch_size = 64;
  p.global_batch_size = 128;
  try {
    validate(p, model, cluster);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch_size: 128 is not a multiple of micro_batch_size x dp = 256"),
              std::string::npos)
        << e.what();
  }
  p.global_batch_size = 256;
  EXPECT_NO_THROW(validate(p, model, cluster));
}

TEST(Plan, UnknownScheduleListsTheKnownOnes) {
  try {
    load_plan(ConfigNode::load_string("global_batch_size: 8\nschedule: zigzag\n", "s.yaml"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:2:11: schedule: unknown schedule \"zigzag\"; valid: 1f1b, chimera, gpipe, interleaved-1f1b, "
              "pipedream, pipedream-2bw, terapipe, zb-h1");
  }
}

}  // namespace
}  // namespace dejavu::strategies
