#include "strategies/plan.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "platforms/gpu_catalog.h"
#include "strategies/plan_cluster.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

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

// Layer offload and block recomputation set in code (a search's refinement, a sweep) are held
// to the rules their plan keys are: offloaded layers need activations: cpu, recompute_layers
// full recomputation.
TEST(Plan, ACodeBuiltPlanOffloadsLayersAndRecomputesBlocksOnlyAsItsKeysMay) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
  Plan p;
  p.dp = 8;
  p.global_batch_size = 8;
  p.offload_activation_layers = 4;
  auto error = [&] {
    try {
      validate(p, model, cluster);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error().find("offload.layers: counts the layers whose activations go to CPU memory"), std::string::npos)
      << error();
  p.offload_activations = "cpu";
  EXPECT_EQ(error(), "no error");
  p.offload_activation_layers = 0;
  p.offload_activations.clear();
  p.recompute_layers = 4;
  EXPECT_NE(error().find("recompute_layers: recomputes the first layers of each model chunk in full"),
            std::string::npos)
      << error();
  p.recompute = "full";
  EXPECT_EQ(error(), "no error");
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

TEST(Plan, CommSmsIsAutoOrACountBelowTheGpusSms) {
  const auto error = [](const std::string& value) {
    try {
      load_plan(ConfigNode::load_string("global_batch_size: 8\ncomm_sms: " + value + "\n", "c.yaml"));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("auto"), "no error");
  EXPECT_EQ(error("8"), "no error");
  EXPECT_EQ(error("many"), "c.yaml:2:11: comm_sms: expected auto or a count of SMs (0 leaves every SM to compute)");
  EXPECT_NE(error("-3").find("c.yaml:2:11: comm_sms: "), std::string::npos) << error("-3");
  EXPECT_NE(error("[1]").find("c.yaml:2:11: comm_sms: "), std::string::npos) << error("[1]");
  // An A100 has 108 SMs: a kernel holding all of them leaves compute none.
  Plan p = load_plan(ConfigNode::load_string("global_batch_size: 8\ncomm_sms: 108\n", "c.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  try {
    cluster_for_plan(cluster, p);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.yaml:2:11: comm_sms: 108 SMs, but the A100-SXM-80GB has 108; valid: auto, or 0 to 107");
  }
}

TEST(Plan, CommSmsAutoIsWhatNcclUsesForTheGpusLinks) {
  // NVIDIA/nccl#689: 16 SMs on a DGX (NVLink, a NIC per GPU), 2 on a PCIe system with one NIC.
  Plan p;
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("A100-SXM-80GB")), 16.0 / 108);
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("H100-SXM-80GB")), 16.0 / 132);
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("T4")), 2.0 / 40);
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("B200-SXM-180GB")), 0.0);  // SM count not published
  p.comm_sms = 24;
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("H100-SXM-80GB")), 24.0 / 132);
  p.comm_sms = 0;
  EXPECT_DOUBLE_EQ(p.comm_share(platforms::gpu_spec("H100-SXM-80GB")), 0.0);
}

}  // namespace
}  // namespace dejavu::strategies
