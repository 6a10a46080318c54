// optimizer_dtype: Adam's state (master weights, momentum, variance) in bf16, as Apex
// DistributedFusedAdam keeps it with `dtype: bf16` (NeMo's Nemotron-4 340B), hand-counted on
// GPT-3 1.3B (P parameters) over one DGX A100's 8 GPUs.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "platforms/calibration.h"
#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/lowering.h"
#include "strategies/plan.h"
#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct OptimizerDtype : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  double P = model.parameter_count();
  Plan plan(int zero, const std::string& state) const {
    Plan p;
    p.dp = 8;
    p.global_batch_size = 8;
    p.zero = zero;
    p.optimizer_dtype = state;
    return p;
  }
  static double resident(const LoweredJob& job, const std::string& part) {
    for (const auto& r : job.graph.devices()[0].resident)
      if (r.name == part) return r.bytes;
    return -1;
  }
  // The optimizer step's duration on the first GPU.
  static double step_s(const LoweredJob& job) {
    for (const auto& t : job.graph.tasks())
      if (t.kind == sim::TaskKind::Compute && job.graph.labels()[t.label] == "optimizer step") return t.duration_s;
    return -1;
  }
};

// fp32: a master copy, momentum and variance of 4 bytes each (12 P); bf16: 2 bytes each (6 P),
// sharded over the 8 replicas by ZeRO-1. The weights stay the model's.
TEST_F(OptimizerDtype, Bf16StateHoldsSixBytesAParameterNotTwelve) {
  EXPECT_NEAR(resident(lower(model, cluster, plan(0, "")), "optimizer"), 12 * P, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(0, "fp32")), "optimizer"), 12 * P, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(0, "bf16")), "optimizer"), 6 * P, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(1, "bf16")), "optimizer"), 6 * P / 8, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(1, "bf16")), "weights"), 2 * P, 1);
}

// The step reads and writes each state element once: 24 bytes a parameter in fp32, 12 in
// bf16, beside the fp32 gradient's read (4), the weight's write (2), the norm's read (4) and
// the gradients' zeroing (4): 38 and 26 bytes, memory-bound.
TEST_F(OptimizerDtype, TheStepMovesTwentySixBytesAParameterNotThirtyEight) {
  const platforms::PerfModel pm = platforms::perf_model(cluster, platforms::gpu_spec("A100-SXM-80GB"));
  auto priced = [&](double bytes) { return pm.time_s({sim::OpClass::Optimizer, 0, bytes, sim::DType::BF16}); };
  EXPECT_NEAR(step_s(lower(model, cluster, plan(0, ""))), priced(38 * P), 1e-12);
  EXPECT_NEAR(step_s(lower(model, cluster, plan(0, "bf16"))), priced(26 * P), 1e-12);
  EXPECT_NEAR(step_s(lower(model, cluster, plan(1, "bf16"))), priced(26 * P / 8), 1e-12);
}

TEST_F(OptimizerDtype, LoadsWritesAndRefusesWhatItCannotRun) {
  const char* base = "tp: 1\npp: 1\ndp: 8\nglobal_batch_size: 8\nzero: 1\n";
  const Plan p = load_plan(ConfigNode::load_string(std::string(base) + "optimizer_dtype: bf16\n", "p.yaml"));
  EXPECT_EQ(p.optimizer_dtype, "bf16");
  EXPECT_DOUBLE_EQ(p.optimizer_state_bytes(), 2);
  std::ostringstream yaml;
  search::write_plan_yaml(yaml, p, "round trip");
  EXPECT_EQ(load_plan(ConfigNode::load_string(yaml.str(), "q.yaml")).optimizer_dtype, "bf16");
  EXPECT_THROW(load_plan(ConfigNode::load_string(std::string(base) + "optimizer_dtype: fp8\n", "p.yaml")), ConfigError);
  // DeepSpeed's CPU Adam keeps fp32 states: an offloaded bf16 state is refused, not guessed.
  EXPECT_THROW(load_plan(ConfigNode::load_string(
                   std::string(base) + "optimizer_dtype: bf16\noffload: {optimizer: cpu}\n", "p.yaml")),
               ConfigError);
}

}  // namespace
}  // namespace dejavu::strategies
