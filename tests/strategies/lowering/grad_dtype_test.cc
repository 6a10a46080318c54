// grad_dtype: gradients accumulated and reduced in fp32 (Megatron-LM's bf16 default, FSDP's
// reduce_dtype), hand-counted on GPT-3 1.3B (P parameters) over one DGX A100's 8 GPUs.
#include <gtest/gtest.h>

#include <map>
#include <string>

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

struct GradDtype : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  double P = model.parameter_count();
  Plan plan(int zero, const std::string& grads) const {
    Plan p;
    p.dp = 8;
    p.global_batch_size = 16;  // two microbatches a replica
    p.zero = zero;
    p.grad_dtype = grads;
    return p;
  }
  static std::map<std::string, double> resident(const LoweredJob& job) {
    std::map<std::string, double> parts;
    for (const auto& part : job.graph.devices()[0].resident) parts[part.name] = part.bytes;
    return parts;
  }
  // Bytes of the collectives of kind `op` whose label holds `what`, summed.
  static double sent(const LoweredJob& job, sim::CollectiveOp op, const std::string& what) {
    double bytes = 0;
    for (const auto& t : job.graph.tasks())
      if (t.kind == sim::TaskKind::Collective && t.op == op &&
          job.graph.labels()[t.label].find(what) != std::string::npos)
        bytes += t.bytes;
    return bytes;
  }
};

TEST_F(GradDtype, Fp32GradientsTakeFourBytesAParameterSoMegatronsStatesAreEighteen) {
  const auto z0 = resident(lower(model, cluster, plan(0, "fp32")));
  EXPECT_NEAR(z0.at("gradients"), 4 * P, 1);
  EXPECT_NEAR(z0.at("weights") + z0.at("gradients") + z0.at("optimizer"), 18 * P, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(2, "fp32"))).at("gradients"), 4 * P / 8, 1);
  EXPECT_NEAR(resident(lower(model, cluster, plan(0, ""))).at("gradients"), 2 * P, 1);  // the model's bf16
  EXPECT_NEAR(resident(lower(model, cluster, plan(0, "bf16"))).at("gradients"), 2 * P, 1);
}

TEST_F(GradDtype, AllReduceAndReduceScatterCarryTheGradientsWeightGathersTheWeights) {
  for (const char* grads : {"bf16", "fp32"}) {
    SCOPED_TRACE(grads);
    const double g = std::string(grads) == "fp32" ? 4 : 2;
    EXPECT_NEAR(sent(lower(model, cluster, plan(0, grads)), sim::CollectiveOp::AllReduce, "gradient"), g * P, 1);
    const LoweredJob z1 = lower(model, cluster, plan(1, grads));
    EXPECT_NEAR(sent(z1, sim::CollectiveOp::ReduceScatter, "gradient"), g * P, 1);
    EXPECT_NEAR(sent(z1, sim::CollectiveOp::AllGather, "weight"), 2 * P, 1);
    // ZeRO-3: per microbatch (2) every block reduce-scattered once, gathered twice.
    const LoweredJob z3 = lower(model, cluster, plan(3, grads));
    EXPECT_NEAR(sent(z3, sim::CollectiveOp::ReduceScatter, "zero-3"), 2 * g * P, 1);
    EXPECT_NEAR(sent(z3, sim::CollectiveOp::AllGather, "zero-3"), 2 * 2 * 2 * P, 1);
  }
}

TEST_F(GradDtype, GradientBucketsHoldTheirBytesOfGradients) {
  // 400 MB buckets close at the first layer (50.3M parameters) that fills them: every
  // second layer in fp32 (201 MB each), every fourth in bf16 (101 MB each).
  auto buckets = [&](const std::string& grads) {
    Plan p = plan(0, grads);
    p.data_parallel.bucket_bytes = 400e6;
    const LoweredJob job = lower(model, cluster, p);
    EXPECT_NEAR(sent(job, sim::CollectiveOp::AllReduce, "bucket"), (grads == "fp32" ? 4 : 2) * P, 1);
    int n = 0;
    for (const auto& t : job.graph.tasks())
      if (t.kind == sim::TaskKind::Collective && job.graph.labels()[t.label] == "dp gradient bucket") ++n;
    return n;
  };
  EXPECT_NEAR(buckets("fp32"), 4 * P / 400e6, 1);  // 13.2
  EXPECT_NEAR(buckets("bf16"), 2 * P / 400e6, 1);  // 6.6
}

TEST_F(GradDtype, AnOffloadedOptimizerCopiesItsShardsGradientsInTheirDtype) {
  const auto host = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
  Plan p = plan(1, "fp32");
  p.offload_optimizer = "cpu";
  const LoweredJob job = lower(model, host, p);
  double down = 0, up = 0;
  for (const auto& t : job.graph.tasks()) {
    if (t.kind != sim::TaskKind::Transfer) continue;
    if (job.graph.labels()[t.label] == "gradients to CPU memory") down += t.bytes;
    if (job.graph.labels()[t.label] == "weights from CPU memory") up += t.bytes;
  }
  EXPECT_NEAR(down, 4 * P / 8, 1);  // the GPU's shard, fp32
  EXPECT_NEAR(up, 2 * P / 8, 1);    // its bf16 weights back
}

TEST_F(GradDtype, LoadsWritesAndRefusesWhatIsNoGradientDtype) {
  const Plan p =
      load_plan(ConfigNode::load_string("tp: 1\npp: 1\ndp: 8\nglobal_batch_size: 8\ngrad_dtype: fp32\n", "p.yaml"));
  EXPECT_EQ(p.grad_dtype, "fp32");
  std::ostringstream yaml;
  search::write_plan_yaml(yaml, p, "round trip");
  EXPECT_EQ(load_plan(ConfigNode::load_string(yaml.str(), "q.yaml")).grad_dtype, "fp32");
  EXPECT_EQ(load_plan(ConfigNode::load_string("dp: 8\nglobal_batch_size: 8\n", "p.yaml")).grad_dtype, "");
  EXPECT_THROW(load_plan(ConfigNode::load_string("dp: 8\nglobal_batch_size: 8\ngrad_dtype: fp8\n", "p.yaml")),
               ConfigError);
  EXPECT_THROW(load_plan(ConfigNode::load_string("dp: 8\nglobal_batch_size: 8\ngrad_dtype: 4\n", "p.yaml")),
               ConfigError);
}

}  // namespace
}  // namespace dejavu::strategies
