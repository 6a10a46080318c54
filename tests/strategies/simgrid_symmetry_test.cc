// The SimGrid engine plays a task's symmetric groups once where their flows meet nothing
// else (sim/flow_symmetry.h). Every simulate preset of the snapshot cases (two microbatches a
// stage), on SimGrid at flow fidelity: played once or every group, the same task times to
// 1e-9, the same link bytes, in-flight times and peaks; and on some of them (the tensor
// groups of whole servers) it did play fewer flows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "platforms/cluster.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace dejavu::strategies {
namespace {

void expect_same(const std::vector<double>& a, const std::vector<double>& b, double scale, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-9 * scale) << what << "[" << i << "]";
}

TEST(SimGridSymmetry, PresetsPlayedOnceOrInFullAgree) {
  std::ifstream in(std::string(DEJAVU_SOURCE_DIR) + "/tests/snapshots/cases.txt");
  int fewer = 0, cases = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("simulate-", 0) != 0 || line.find("--faults") != std::string::npos) continue;
    auto arg = [&](const std::string& flag) {
      const size_t at = line.find(flag + " ") + flag.size() + 1;
      return std::string(DEJAVU_SOURCE_DIR) + "/" + line.substr(at, line.find(' ', at) - at);
    };
    const std::string name = line.substr(0, line.find(':'));
    if (name.find("-simgrid") != std::string::npos) continue;  // its analytic twin covers the preset
    SCOPED_TRACE(name);
    const auto model = workloads::load_workload_file(arg("--workload"));
    const auto cluster = platforms::load_cluster_file(arg("--platform"));
    Plan plan = load_plan_file(arg("--plan"));
    // Two microbatches a stage are enough to meet every kind of task; more only cost time.
    if (plan.microbatches() > 2 * plan.total_stages())
      plan.global_batch_size = 2 * plan.total_stages() * plan.micro_batch_size * plan.dp;
    sim::EngineOptions once, every;
    every.symmetric_groups_once = false;
    const sim::Result a = simulate(model, cluster, plan, "simgrid", once).result;
    const sim::Result b = simulate(model, cluster, plan, "simgrid", every).result;
    ++cases;
    fewer += a.activities < b.activities;
    EXPECT_LE(a.activities, b.activities);
    EXPECT_NEAR(a.makespan_s, b.makespan_s, 1e-9 * b.makespan_s);
    expect_same(a.start_s, b.start_s, b.makespan_s, "start_s");
    expect_same(a.end_s, b.end_s, b.makespan_s, "end_s");
    expect_same(a.link_busy_s, b.link_busy_s, b.makespan_s, "link_busy_s");
    expect_same(a.link_peak_flows, b.link_peak_flows, 1, "link_peak_flows");
    const double most = *std::max_element(b.link_bytes.begin(), b.link_bytes.end());
    expect_same(a.link_bytes, b.link_bytes, most, "link_bytes");
  }
  EXPECT_GE(cases, 15);
  EXPECT_GE(fewer, 4);
  std::printf("%d presets, %d played fewer flows\n", cases, fewer);
}

}  // namespace
}  // namespace dejavu::strategies
