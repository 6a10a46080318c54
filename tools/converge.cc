#include "tools/converge.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "sim/config_node.h"
#include "sim/error.h"
#include "sim/units.h"
#include "strategies/simulate.h"
#include "tools/platform_input.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace {

struct Entry {
  std::string name, plan, rule, aggregator;
  int staleness = -1, delay = -1;
};

// Worker timings from simulating the plan (with the scenario's faults, if any).
strategies::WorkerTiming timing_of(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                   const strategies::Plan& plan, const strategies::FaultScenario* scenario,
                                   const std::string& engine) {
  const strategies::Simulation base = strategies::simulate(model, cluster, plan, engine);
  strategies::Simulation faulted;
  if (scenario) {
    strategies::FaultSimulation f = strategies::simulate_with_faults(model, cluster, plan, *scenario, engine);
    if (f.faults.stopped)
      throw Error("a fail-stop stops every iteration of this scenario (" + f.faults.cause +
                  "); converge models stragglers and Byzantine workers, run-horizon the failures");
    faulted = std::move(f.simulation);
  }
  const strategies::Report& r = scenario ? faulted.report : base.report;
  strategies::WorkerTiming t;
  t.iteration_s = r.iteration_time_s;
  t.compute_s.assign(plan.dp, 0.0);
  std::vector<double> base_compute(plan.dp, 0.0);
  for (const auto& d : r.devices) t.compute_s[d.dp_rank] = std::max(t.compute_s[d.dp_rank], d.busy_s);
  for (const auto& d : base.report.devices) base_compute[d.dp_rank] = std::max(base_compute[d.dp_rank], d.busy_s);
  t.communication_s = std::max(0.0, base.report.iteration_time_s - *std::max_element(base_compute.begin(), base_compute.end()));
  return t;
}

}  // namespace

std::vector<ConvergeRow> run_converge(const ConvergeArgs& a) {
  const platforms::Cluster cluster = load_platform(a.platform, a.calibrations);
  const workloads::ModelGraph model = workloads::load_workload_file(a.workload);
  std::vector<Entry> entries;
  if (!a.compare.empty()) {
    const ConfigNode root = ConfigNode::load_file(a.compare);
    root.expect_map({"strategies"});
    for (const ConfigNode& e : root.child("strategies").items()) {
      e.expect_map({"name", "plan", "rule", "aggregator", "staleness", "delay"});
      Entry x;
      x.name = e.get_string("name");
      const ConfigNode p = e.child("plan");
      const std::filesystem::path path = std::filesystem::path(a.compare).parent_path() / p.as_string();
      if (!std::filesystem::exists(path)) p.fail("no such file: " + path.string());
      x.plan = path.string();
      x.rule = e.get_string("rule", "");
      if (!x.rule.empty()) e.child("rule").as_choice({"sync", "ps-async", "gossip", "pipedream", "delayed"});
      x.aggregator = e.get_string("aggregator", "");
      if (!x.aggregator.empty()) e.child("aggregator").as_choice({"mean", "median", "trimmed", "krum", "zeno"});
      x.staleness = static_cast<int>(e.get_int("staleness", -1));
      x.delay = static_cast<int>(e.get_int("delay", -1));
      entries.push_back(x);
    }
  } else {
    if (a.plan.empty()) throw ConfigError(SourceLoc{"--plan", 0, 0}, "", "missing; give --plan or --compare");
    entries.push_back({std::filesystem::path(a.plan).stem().string(), a.plan, a.rule, "", -1, -1});
  }
  std::unique_ptr<strategies::FaultScenario> scenario;
  if (!a.faults.empty())
    scenario = std::make_unique<strategies::FaultScenario>(strategies::load_fault_scenario_file(a.faults, cluster));
  std::vector<ConvergeRow> rows;
  for (const Entry& e : entries) {
    const strategies::Plan plan = strategies::load_plan_file(e.plan);
    strategies::validate(plan, model, cluster);
    strategies::ConvergenceConfig c = a.config;
    c.data = strategies::parse_data_spec(a.data);
    c.data.seed = c.data.seed == 1 ? c.seed : c.data.seed;
    c.workers = plan.dp;
    c.rule = !e.rule.empty() ? e.rule : !a.rule.empty() ? a.rule : plan.data_parallel.sync == "gossip" ? "gossip" : "sync";
    if (c.rule == "pipedream") c.staleness = std::max(1, plan.pp - 1);
    if (e.staleness >= 0) c.staleness = e.staleness;
    if (e.delay >= 0) c.delay = e.delay;
    if (!e.aggregator.empty()) c.aggregator = e.aggregator;
    c.peers = plan.data_parallel.peers;
    c.compression = plan.data_parallel.compression;
    c.density = plan.data_parallel.density;
    c.rank = plan.data_parallel.rank;
    if (scenario)
      for (strategies::ByzantineWorker w : scenario->byzantine) {
        // The scenario names a GPU; the convergence model's worker is its data-parallel
        // replica (Megatron's rank order: tp, then cp, then dp).
        w.gpu = w.gpu / (plan.tp * plan.cp) % plan.dp;
        c.byzantine.push_back(w);
      }
    const strategies::WorkerTiming t = timing_of(model, cluster, plan, scenario.get(), a.engine);
    ConvergeRow row;
    row.name = e.name;
    row.rule = c.rule + (c.aggregator != "mean" ? "/" + c.aggregator : "") + (c.compression != "none" ? "+" + c.compression : "");
    row.result = strategies::train_to_target(c, t, e.name);
    const auto& curve = row.result.curve;
    row.step_s = curve.size() > 1 && curve.back().step > 0 ? curve.back().time_s / curve.back().step : t.iteration_s;
    rows.push_back(row);
  }
  return rows;
}

void write_converge_table(std::ostream& out, const std::vector<ConvergeRow>& rows, double target) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "dejavu converge: time to validation loss %.3g\n", target);
  out << buf;
  out << "  strategy              rule                       step        steps   time to target   final loss  staleness\n";
  for (const ConvergeRow& r : rows) {
    const auto& c = r.result;
    std::snprintf(buf, sizeof buf, "  %-21s %-26s %-11s %-7s %-16s %-11.4g %.2f\n", r.name.c_str(), r.rule.c_str(),
                  units::format_time(r.step_s).c_str(), c.reached ? std::to_string(c.steps_to_target).c_str() : "-",
                  c.reached ? units::format_time(c.time_to_target_s).c_str() : "not reached",
                  c.curve.empty() ? 0.0 : c.curve.back().loss, c.mean_staleness);
    out << buf;
  }
}

}  // namespace dejavu::tools
