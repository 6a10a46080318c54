// Parts of a cluster (`search --objective cost`, a plan's `gpus`): the GPU counts tried
// (hand-listed), and a plan on the first GPUs of a bigger cluster prices as the same plan on
// a platform of just those GPUs.
#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "strategies/plan_cluster.h"
#include "strategies/search/cluster_parts.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::search {
namespace {

using dejavu::testing::src;

platforms::Cluster preset(const std::string& name) {
  return platforms::load_cluster_file(src("platforms/presets/" + name + ".yaml"));
}

TEST(ClusterParts, WholeClusterThenPowersOfTwoServersThenHalvesOfAServer) {
  EXPECT_EQ(cluster_part_sizes(preset("dgx-a100-8x8")), (std::vector<int>{64, 32, 16, 8, 4, 2, 1}));
  EXPECT_EQ(cluster_part_sizes(preset("dgx-a100-4x8")), (std::vector<int>{32, 16, 8, 4, 2, 1}));
  EXPECT_EQ(cluster_part_sizes(preset("pcie-l4-2x4")), (std::vector<int>{8, 4, 2, 1}));
  EXPECT_EQ(cluster_part_sizes(preset("single-a100")), (std::vector<int>{1}));
  // Three servers: 3 is no power of two, so two servers, one, then halves of one.
  const platforms::Cluster three = platforms::load_cluster(ConfigNode::load_string(
      "name: three\nservers:\n  - {count: 3, gpu: A100-SXM-80GB, gpus_per_server: 8,\n"
      "     intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us},\n"
      "     nic: {bandwidth: 200 Gbps, latency: 2 us}}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "three.yaml"));
  EXPECT_EQ(cluster_part_sizes(three), (std::vector<int>{24, 16, 8, 4, 2, 1}));
  // A server of 6 GPUs halves once, to 3.
  const platforms::Cluster six = platforms::load_cluster(ConfigNode::load_string(
      "name: six\nservers:\n  - {count: 2, gpu: A100-SXM-80GB, gpus_per_server: 6,\n"
      "     intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us},\n"
      "     nic: {bandwidth: 200 Gbps, latency: 2 us}}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "six.yaml"));
  EXPECT_EQ(cluster_part_sizes(six), (std::vector<int>{12, 6, 3}));
}

// The first 8 GPUs of four DGX A100s are one DGX A100: a plan with `gpus: 8` there is the
// same step as on the one-server preset (its data-parallel ring never leaves the server).
TEST(ClusterParts, FirstServerOfFourIsOneServer) {
  const workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  Plan plan;
  plan.tp = 2;
  plan.dp = 4;
  plan.micro_batch_size = 2;
  plan.global_batch_size = 32;
  plan.zero = 1;
  const double alone = simulate(model, preset("dgx-a100-1x8"), plan, "analytic").report.iteration_time_s;
  plan.use_gpus = 8;
  const platforms::Cluster part = cluster_for_plan(preset("dgx-a100-4x8"), plan);
  EXPECT_EQ(part.gpu_count(), 8);
  const double on_part = simulate(model, part, plan, "analytic").report.iteration_time_s;
  EXPECT_NEAR(on_part, alone, 1e-9 * alone);
  plan.use_gpus = 33;
  EXPECT_THROW(cluster_for_plan(preset("dgx-a100-4x8"), plan), ConfigError);
}

}  // namespace
}  // namespace dejavu::strategies::search
