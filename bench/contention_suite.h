// The contention suite (issue 21), tests/fixtures/contention/cases.txt: cases where
// transfers in flight meet on a link. tests/strategies/contention_test.cc checks the
// analytic engine against SimGrid flow on each; bench/contention_benchmark.cc times it.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/engine.h"
#include "strategies/faults.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace dejavu::bench {

struct ContentionCase {
  std::string name, platform, workload, plan, faults;  // paths; faults empty: none
};

inline std::vector<ContentionCase> contention_cases(const std::string& source_dir) {
  const std::string dir = source_dir + "/tests/fixtures/contention/";
  auto path = [&](std::string field) {
    field = field.substr(field.find_first_not_of(' '));
    field = field.substr(0, field.find_last_not_of(' ') + 1);
    if (field == "-") return std::string();
    return (field.rfind("workloads/", 0) == 0 ? source_dir + "/" : dir) + field;
  };
  std::vector<ContentionCase> out;
  std::ifstream in(dir + "cases.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t bar = line.find('|', at);
      f.push_back(line.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
      if (bar == std::string::npos) break;
      at = bar + 1;
    }
    if (f.size() != 5) continue;
    const std::string name = f[0].substr(0, f[0].find(' '));
    out.push_back({name, path(f[1]), path(f[2]), path(f[3]), path(f[4])});
  }
  return out;
}

// One case's iteration time on `engine` (SimGrid: collectives played as flows).
inline double contention_case_s(const ContentionCase& c, const std::string& engine) {
  const auto cluster = platforms::load_cluster_file(c.platform);
  const auto model = workloads::load_workload_file(c.workload);
  const auto plan = strategies::load_plan_file(c.plan);
  sim::EngineOptions o;
  if (engine == "simgrid") {
    o.fidelity = "flow";
    o.timeout_s = 300;
  }
  if (c.faults.empty()) return strategies::simulate(model, cluster, plan, engine, o).report.iteration_time_s;
  const auto scenario = strategies::load_fault_scenario_file(c.faults, cluster);
  return strategies::simulate_with_faults(model, cluster, plan, scenario, engine, o).simulation.report.iteration_time_s;
}

}  // namespace dejavu::bench
