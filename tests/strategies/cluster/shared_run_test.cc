// Jobs sharing one fabric (issue 24). Four one-GPU servers, two under each leaf switch, no
// latency anywhere, NICs of B = 12.5 GB/s; a leaf's uplink carries its NICs' total over the
// oversubscription: B at 2:1. Two GPT-3 1.3B data-parallel jobs of two GPUs each: alone, a
// job's ring all-reduce of its S gradient bytes (bf16) over 2 GPUs sends S each way over
// its route, S / B. Spread over both leaves, both jobs' rings cross the same uplinks: each
// gets B / 2 there, 2 S / B. Under one leaf each, nothing is shared.
#include <gtest/gtest.h>

#include "sim/config_node.h"
#include "strategies/cluster/shared_run.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::cluster {
namespace {

using dejavu::testing::src;

platforms::Cluster four_servers(double oversubscription) {
  return platforms::load_cluster(
      ConfigNode::load_string("servers:\n  - count: 4\n    gpu: A100-SXM-80GB\n    gpus_per_server: 1\n"
                              "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 0 us}\n"
                              "    nic: {bandwidth: 100 Gbps, latency: 0 us}\n"
                              "network: {kind: fat-tree, latency: 0 us, servers_per_leaf: 2, oversubscription: " +
                                  std::to_string(oversubscription) + "}\n",
                              "four.yaml"));
}

JobsFile two_jobs(std::vector<int> a, std::vector<int> b) {
  JobsFile f;
  f.name = "two";
  for (auto& [name, gpus] : {std::pair{"a", a}, std::pair{"b", b}}) {
    JobSpec j;
    j.name = name;
    j.model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
    j.plan.dp = 2;
    j.plan.global_batch_size = 2;
    j.gpus = gpus;
    f.jobs.push_back(j);
  }
  return f;
}

class Engines : public ::testing::TestWithParam<std::string> {};

TEST_P(Engines, SpreadOverTwoLeavesAtTwoToOneEachJobCommunicatesAtHalfRate) {
  const platforms::Cluster c = four_servers(2);
  const JobsFile jobs = two_jobs({0, 2}, {1, 3});
  const double B = 12.5e9, S = jobs.jobs[0].model.parameter_count() * 2;
  SharedRunOptions o;
  o.engine = GetParam();
  const SharedRun run = run_shared(jobs, c, o);
  ASSERT_EQ(run.jobs.size(), 2u);
  for (const JobRun& j : run.jobs) {
    SCOPED_TRACE(j.name);
    EXPECT_NEAR(j.comm_alone_s, S / B, 1e-6 * S / B);
    EXPECT_NEAR(j.comm_together_s, 2 * S / B, 2e-6 * S / B);
    // The step grows by what the all-reduce lost: S / B.
    EXPECT_NEAR(j.together_s - j.alone_s, S / B, 1e-6 * S / B);
  }
  // Both directions of both leaves' uplinks carry both jobs' S a step.
  ASSERT_EQ(run.contested.size(), 4u);
  for (const ContestedLink& l : run.contested) {
    ASSERT_EQ(l.bytes_per_step.size(), 2u) << l.name;
    EXPECT_NEAR(l.bytes_per_step[0].second, S, 1e-9 * S) << l.name;
  }
}

TEST_P(Engines, UnderOneLeafEachOrWithoutOversubscriptionNeitherSlows) {
  SharedRunOptions o;
  o.engine = GetParam();
  for (const auto& [oversubscription, a, b] :
       {std::tuple{2.0, std::vector{0, 1}, std::vector{2, 3}}, std::tuple{1.0, std::vector{0, 2}, std::vector{1, 3}}}) {
    const SharedRun run = run_shared(two_jobs(a, b), four_servers(oversubscription), o);
    for (const JobRun& j : run.jobs) {
      SCOPED_TRACE(j.name + " at " + std::to_string(oversubscription));
      EXPECT_NEAR(j.comm_together_s, j.comm_alone_s, 1e-9 * j.comm_alone_s);
      EXPECT_NEAR(j.together_s, j.alone_s, 1e-9 * j.alone_s);
    }
    if (oversubscription == 2.0) {
      EXPECT_TRUE(run.contested.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Both, Engines, ::testing::Values("analytic", "simgrid"));

TEST(SharedRun, AJobAloneInTheFileStepsAsAlone) {
  JobsFile jobs = two_jobs({0, 2}, {});
  jobs.jobs.pop_back();
  const SharedRun run = run_shared(jobs, four_servers(2), {});
  ASSERT_EQ(run.jobs.size(), 1u);
  EXPECT_NEAR(run.jobs[0].together_s, run.jobs[0].alone_s, 1e-12 * run.jobs[0].alone_s);
  EXPECT_EQ(run.jobs[0].steps_measured, 3);
}

TEST(SharedRun, ShorterStepsRepeatOverTheLongestJobsSteps) {
  // b's step has three times a's microbatches; a repeats its step until b's 3 steps are
  // done (they share no link, so neither slows), and no step more.
  JobsFile jobs = two_jobs({0, 1}, {2, 3});
  jobs.jobs[1].plan.global_batch_size = 6;
  const SharedRun run = run_shared(jobs, four_servers(2), {});
  EXPECT_EQ(run.jobs[1].steps_run, 3);
  const double a = run.jobs[0].alone_s;
  EXPECT_GT(run.jobs[1].alone_s, 1.5 * a);
  EXPECT_GE(run.jobs[0].steps_run * a, run.window_s * (1 - 1e-12));
  EXPECT_LT((run.jobs[0].steps_run - 1) * a, run.window_s);
  EXPECT_NEAR(run.window_s, 3 * run.jobs[1].alone_s, 1e-9 * run.window_s);
  EXPECT_NEAR(run.jobs[0].together_s, run.jobs[0].alone_s, 1e-9 * run.jobs[0].alone_s);
  EXPECT_EQ(run.jobs[0].steps_measured,
            std::min(run.jobs[0].steps_run, static_cast<int>(run.window_s / run.jobs[0].alone_s + 1e-9)));
}

TEST(SharedRun, AJobTheFreeGpusCannotHoldIsRefusedNamingIt) {
  JobsFile jobs = two_jobs({0, 1, 2}, {});
  jobs.jobs[0].plan.dp = 3;
  jobs.jobs[0].plan.global_batch_size = 3;
  try {
    run_shared(jobs, four_servers(2), {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("job b needs 2 GPUs; 1 are left free"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dejavu::strategies::cluster
