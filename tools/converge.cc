#include "tools/converge.h"

#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/lowering.h"
#include "sim/units.h"
#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/horizon.h"
#include "strategies/training/rules/update_rule.h"
#include "strategies/training/time_to_accuracy.h"
#include "strategies/lowering.h"
#include "strategies/schedules/schedule.h"
#include "strategies/simulate.h"
#include "tools/platform_input.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace {

constexpr long long kMaxSteps = 10000000, kMaxWorkers = 1 << 16;

struct Entry {
  std::string name, plan, rule, aggregator;
  int staleness = -1, delay = -1, init_candidates = -1, probe_steps = -1, keep = -1;
  double resample = -1;
};

// The scenario without its fail-stops: what times a step (stragglers, slow links).
strategies::FaultScenario without_fail_stops(strategies::FaultScenario s) {
  s.events.erase(
      std::remove_if(s.events.begin(), s.events.end(),
                     [](const strategies::FaultEvent& e) { return e.kind == "gpu_fail" || e.kind == "server_fail"; }),
      s.events.end());
  s.mtbf_s = 0;
  return s;
}

// The scenario's fail-stops (timed, and random ones drawn over `horizon_s`) as the workers
// they stop: a GPU's data-parallel replica in Megatron's rank order (tp, then cp, then dp).
std::vector<strategies::WorkerFailure> worker_failures(const strategies::FaultScenario& s,
                                                       const platforms::Cluster& cluster, const strategies::Plan& plan,
                                                       double horizon_s) {
  const sim::Faults f = strategies::engine_faults(s, cluster, horizon_s);
  std::vector<strategies::WorkerFailure> out;
  const int used = static_cast<int>(plan.gpus());
  for (int g = 0; g < std::min(used, cluster.gpu_count()); ++g)
    if (auto it = f.host_fail_s.find(cluster.gpus[g].host); it != f.host_fail_s.end())
      out.push_back({it->second, strategies::replica_of_gpu(plan, g)});
  return out;
}

// One strategy of a --compare file; -1: not given (the command line's or the plan's value stands).
Entry entry_of(const ConfigNode& e, const std::string& compare) {
  e.expect_map({"name", "plan", "rule", "aggregator", "staleness", "delay", "init_candidates", "probe_steps", "keep",
                "resample"});
  Entry x;
  x.name = e.get_string("name");
  const ConfigNode p = e.child("plan");
  const std::filesystem::path path = std::filesystem::path(compare).parent_path() / p.as_string();
  if (!std::filesystem::exists(path)) p.fail("no such file: " + path.string());
  x.plan = path.string();
  x.rule = e.get_string("rule", "");
  if (!x.rule.empty()) e.child("rule").as_choice(strategies::convergence::update_rules().names());
  x.aggregator = e.get_string("aggregator", "");
  if (!x.aggregator.empty()) e.child("aggregator").as_choice(strategies::convergence::aggregators().names());
  x.staleness = static_cast<int>(e.get_int("staleness", -1, 1, kMaxSteps));
  x.delay = static_cast<int>(e.get_int("delay", -1, 1, kMaxSteps));
  x.init_candidates = static_cast<int>(e.get_int("init_candidates", -1, 1, kMaxWorkers));
  x.probe_steps = static_cast<int>(e.get_int("probe_steps", -1, 1, kMaxSteps));
  x.keep = static_cast<int>(e.get_int("keep", -1, 1, kMaxWorkers));
  x.resample = e.get_double("resample", -1, 0, 1e3);
  return x;
}

std::vector<Entry> entries_of(const ConvergeArgs& a) {
  std::vector<Entry> entries;
  if (!a.compare.empty()) {
    const ConfigNode root = ConfigNode::load_file(a.compare);
    root.expect_map({"strategies"});
    const std::vector<ConfigNode> listed = root.child("strategies").items();
    if (listed.empty()) root.child("strategies").fail("expected at least one strategy");
    for (const ConfigNode& e : listed) entries.push_back(entry_of(e, a.compare));
    return entries;
  }
  if (a.plan.empty()) throw ConfigError(SourceLoc{"--plan", 0, 0}, "", "missing; give --plan or --compare");
  Entry x;
  x.name = std::filesystem::path(a.plan).stem().string();
  x.plan = a.plan;
  x.rule = a.rule;
  entries.push_back(x);
  return entries;
}

// The training rule and its knobs for one strategy: the entry's, the command line's, or
// what the plan implies. An asynchronous pipeline schedule trains on stale weights: by
// default the pipedream rule, with the staleness its report records (the first stage's).
strategies::ConvergenceConfig config_of(const ConvergeArgs& a, const Entry& e, const strategies::Plan& plan) {
  strategies::ConvergenceConfig c = strategies::plan_convergence(plan, a.config);
  c.data = strategies::parse_data_spec(a.data);
  c.data.seed = c.data.seed == 1 ? c.seed : c.data.seed;
  const std::string rule = !e.rule.empty() ? e.rule : a.rule;
  if (!rule.empty() && rule != c.rule) {
    c.rule = rule;  // a flushing schedule trained as PipeDream is stale by pp - 1
    c.staleness = rule == "pipedream" ? std::max(1, plan.pp - 1) : a.config.staleness;
  }
  if (e.staleness >= 0) c.staleness = e.staleness;
  if (e.delay >= 0) c.delay = e.delay;
  if (!e.aggregator.empty()) c.aggregator = e.aggregator;
  if (e.init_candidates > 0) c.init_candidates = e.init_candidates;
  if (e.probe_steps > 0) c.probe_steps = e.probe_steps;
  if (e.keep > 0) c.keep = e.keep;
  if (e.resample >= 0) c.resample = e.resample;
  if (c.init_candidates > plan.dp)
    throw ConfigError(SourceLoc{e.plan, 0, 0}, "dp",
                      std::to_string(c.init_candidates) +
                          " initialisations need as many data-parallel workers; the plan has " +
                          std::to_string(plan.dp));
  return c;
}

// The scenario's faults on the convergence model: Byzantine GPUs as their data-parallel
// replicas (Megatron's rank order: tp, then cp, then dp); fail-stops over the run
// (downtime included, generously) and the checkpoint interval of the scenario's recovery
// (or the best one for its failure rate, as run-horizon).
void add_faults(strategies::ConvergenceConfig& c, const strategies::FaultScenario& scenario,
                const platforms::Cluster& cluster, const workloads::ModelGraph& model, const strategies::Plan& plan,
                const strategies::WorkerTiming& t) {
  for (strategies::ByzantineWorker w : scenario.byzantine) {
    w.gpu = strategies::replica_of_gpu(plan, w.gpu);
    c.byzantine.push_back(w);
  }
  const strategies::Recovery& rec = scenario.recovery;
  c.recovery = rec;
  c.failures = worker_failures(scenario, cluster, plan, 2 * c.max_steps * t.iteration_s + 10 * rec.restart_s);
  double interval = rec.interval_s;
  if (interval <= 0 && scenario.mtbf_s > 0 && cluster.storage_bandwidth_Bps > 0) {
    const strategies::ModelStateBytes state = strategies::model_state_per_param(model.dtype, 0, 1);
    const double C = model.parameter_count() * (state.weights + state.optimizer) / cluster.storage_bandwidth_Bps;
    interval = strategies::best_checkpoint_interval_s(cluster.gpu_count() / scenario.mtbf_s, C, rec.restart_s + C);
  }
  c.checkpoint_every =
      interval > 0 && std::isfinite(interval) ? std::max(1L, std::lround(interval / t.iteration_s)) : 0;
}

}  // namespace

std::vector<ConvergeRow> run_converge(const ConvergeArgs& a) {
  const platforms::Cluster platform = load_platform(a.platform, a.calibrations);
  const workloads::ModelGraph workload = workloads::load_workload_file(a.workload);
  const std::vector<Entry> entries = entries_of(a);
  std::vector<ConvergeRow> rows;
  for (const Entry& e : entries) {
    const strategies::Plan plan = strategies::load_plan_file(e.plan);
    // The plan's gpu_order places it (and the fault scenario's GPUs) before anything else.
    const platforms::Cluster cluster = strategies::cluster_for_plan(platform, plan);
    const workloads::ModelGraph model = strategies::model_for_plan(workload, plan);
    std::unique_ptr<strategies::FaultScenario> scenario;
    if (!a.faults.empty())
      scenario = std::make_unique<strategies::FaultScenario>(strategies::load_fault_scenario_file(a.faults, cluster));
    strategies::validate(plan, model, cluster);
    strategies::ConvergenceConfig c = config_of(a, e, plan);
    std::unique_ptr<strategies::FaultScenario> slow;
    if (scenario) slow = std::make_unique<strategies::FaultScenario>(without_fail_stops(*scenario));
    strategies::Plan every_step = plan;  // the exchange in full, not hidden behind later steps
    every_step.data_parallel.delay = 0;
    strategies::WorkerTiming t = strategies::worker_timing(model, cluster, every_step, slow.get(), a.engine);
    if (c.rule == "delayed") {
      // The simulator's steady state with the exchange hidden behind `delay` steps.
      strategies::Plan delayed = plan;
      delayed.data_parallel.delay = std::max(1, c.delay);
      t.delayed_step_s = strategies::simulate(model, cluster, delayed, a.engine).report.iteration_time_s;
    }
    if (scenario) add_faults(c, *scenario, cluster, model, plan, t);
    ConvergeRow row;
    row.name = e.name;
    row.rule = c.rule + (c.aggregator != "mean" ? "/" + c.aggregator : "") +
               (c.compression != "none" ? "+" + c.compression : "");
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
  out << "  strategy              rule                       step        steps   time to target   final loss  "
         "staleness\n";
  std::string notes;
  for (const ConvergeRow& r : rows) {
    const auto& c = r.result;
    std::snprintf(buf, sizeof buf, "  %-21s %-26s %-11s %-7s %-16s %-11.4g %.2f\n", r.name.c_str(), r.rule.c_str(),
                  units::format_time(r.step_s).c_str(), c.reached ? std::to_string(c.steps_to_target).c_str() : "-",
                  c.reached ? units::format_time(c.time_to_target_s).c_str() : "not reached",
                  c.curve.empty() ? 0.0 : c.curve.back().loss, c.mean_staleness);
    out << buf;
    if (c.failures) {
      std::snprintf(buf, sizeof buf, "  %s: %d fail-stop(s), %ld steps rolled back, %s down, %d workers left\n",
                    r.name.c_str(), c.failures, c.steps_lost,
                    c.downtime_s > 0 ? units::format_time(c.downtime_s).c_str() : "0 s", c.workers_left);
      notes += buf;
    }
    if (!c.probe_losses.empty()) {
      std::string losses;
      for (double l : c.probe_losses) {
        char x[32];
        std::snprintf(x, sizeof x, "%s%.3g", losses.empty() ? "" : ", ", l);
        losses += x;
      }
      std::snprintf(buf, sizeof buf, "  %s: %zu initialisations probed (losses %s), went on from #%d\n", r.name.c_str(),
                    c.probe_losses.size(), losses.c_str(), c.chosen_init);
      notes += buf;
    }
  }
  out << notes;
}

}  // namespace dejavu::tools
