// The SimGrid engine plays a task's symmetric groups once where their flows meet nothing
// else (sim/flow_symmetry.h). Every simulate preset of the snapshot cases (two microbatches a
// stage), on SimGrid at flow fidelity, one test each: played once or every group, the same
// task times to 1e-9, the same link bytes, in-flight times and peaks, never more flows; and
// where replicas of tensor groups fill whole servers (tp 8 on eight-GPU servers, dp > 1) it
// plays fewer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "tests/snapshot_cases.h"
#include "workloads/generator.h"

namespace dejavu::strategies {
namespace {

struct Preset {
  std::string name, workload, platform, plan;
};

// The analytic simulate cases of tests/snapshots/cases.txt without faults. Played in full,
// the 1024-GPU rail-planes preset takes SimGrid about 100 s (the other 37 together 18 s): it
// is played here at an eighth of its size, the same fabric and the same whole-server tensor
// groups (tests/strategies/inputs/).
std::vector<Preset> read_presets() {
  std::vector<Preset> out;
  for (const testing::SnapshotCase& c : testing::analytic_simulate_cases()) {
    if (c.file == "simulate-h100-rail-planes-gpt3-175b-analytic.json")
      out.push_back({"simulate-h100-rail-planes-16x8-gpt3-13b", testing::src("workloads/presets/gpt3-13b.yaml"),
                     testing::src("tests/strategies/inputs/h100-rail-planes-16x8.yaml"),
                     testing::src("tests/strategies/inputs/tp8-pp2-dp8-1f1b.yaml")});
    else
      out.push_back({c.file, testing::case_path(c, "--workload"), testing::case_path(c, "--platform"),
                     testing::case_path(c, "--plan")});
  }
  return out;
}

void expect_same(const std::vector<double>& a, const std::vector<double>& b, double scale, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-9 * scale) << what << "[" << i << "]";
}

bool whole_server_replicas(const Plan& plan, const platforms::Cluster& cluster) {
  return plan.tp == 8 && plan.dp > 1 && cluster.groups.front().gpus_per_server == 8;
}

class SimGridSymmetry : public ::testing::TestWithParam<Preset> {};

TEST_P(SimGridSymmetry, PlayedOnceOrInFullAgree) {
  const Preset& p = GetParam();
  const auto model = workloads::load_workload_file(p.workload);
  const auto cluster = platforms::load_cluster_file(p.platform);
  Plan plan = load_plan_file(p.plan);
  // Two microbatches a stage are enough to meet every kind of task; more only cost time.
  if (plan.microbatches() > 2 * plan.total_stages())
    plan.global_batch_size = 2 * plan.total_stages() * plan.micro_batch_size * plan.dp;
  sim::EngineOptions once, every;
  every.symmetric_groups_once = false;
  const sim::Result a = simulate(model, cluster, plan, "simgrid", once).result;
  const sim::Result b = simulate(model, cluster, plan, "simgrid", every).result;
  EXPECT_LE(a.activities, b.activities);
  // Data-parallel replicas of tensor groups that fill whole servers are played once.
  if (whole_server_replicas(plan, cluster)) {
    EXPECT_LT(a.activities, b.activities);
  }
  EXPECT_NEAR(a.makespan_s, b.makespan_s, 1e-9 * b.makespan_s);
  expect_same(a.start_s, b.start_s, b.makespan_s, "start_s");
  expect_same(a.end_s, b.end_s, b.makespan_s, "end_s");
  expect_same(a.link_busy_s, b.link_busy_s, b.makespan_s, "link_busy_s");
  expect_same(a.link_peak_flows, b.link_peak_flows, 1, "link_peak_flows");
  const double most = *std::max_element(b.link_bytes.begin(), b.link_bytes.end());
  expect_same(a.link_bytes, b.link_bytes, most, "link_bytes");
}

std::string preset_name(const ::testing::TestParamInfo<Preset>& info) { return testing::param_name(info.param.name); }

INSTANTIATE_TEST_SUITE_P(Presets, SimGridSymmetry, ::testing::ValuesIn(read_presets()), preset_name);

TEST(SimGridSymmetryCases, EnoughPresetsAndSomeFillWholeServers) {
  const auto presets = read_presets();
  EXPECT_GE(presets.size(), 15u);
  int whole = 0;
  for (const Preset& p : presets)
    whole += whole_server_replicas(load_plan_file(p.plan), platforms::load_cluster_file(p.platform));
  EXPECT_GE(whole, 4);
}

}  // namespace
}  // namespace dejavu::strategies
