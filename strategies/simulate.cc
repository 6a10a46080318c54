#include "strategies/simulate.h"

#include "strategies/trace_lowering.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/units.h"

namespace dejavu::strategies {

Simulation simulate(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                    const Plan& plan, const std::string& engine,
                    const sim::EngineOptions& options) {
  Simulation s;
  s.job = lower(model, cluster, plan);
  s.result = sim::engines().make(engine)->run(s.job.graph, cluster.network, options);
  s.report = make_report(model, cluster, plan, s.job, s.result);
  return s;
}

Simulation simulate_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster,
                          const std::string& engine, const sim::EngineOptions& options) {
  Simulation s;
  s.job = lower_trace(trace, cluster);
  s.result = sim::engines().make(engine)->run(s.job.graph, cluster.network, options);
  workloads::ModelGraph model;
  model.name = trace.prefix.substr(trace.prefix.find_last_of('/') + 1);
  Plan plan;
  plan.name = "trace";
  s.report = make_report(model, cluster, plan, s.job, s.result);
  return s;
}

FaultSimulation simulate_with_faults(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                     const Plan& plan, const FaultScenario& scenario, const std::string& engine,
                                     const sim::EngineOptions& options) {
  FaultSimulation out;
  LowerOptions lo;
  lo.distinct_gpus = scenario.faulty_gpus(cluster);
  Simulation& s = out.simulation;
  s.job = lower(model, cluster, plan, lo);
  const auto eng = sim::engines().make(engine);
  sim::EngineOptions clean = options;
  clean.faults = {};
  const sim::Result base = eng->run(s.job.graph, cluster.network, clean);
  sim::EngineOptions faulted = options;
  faulted.faults = engine_faults(scenario, cluster, base.makespan_s);
  s.result = eng->run(s.job.graph, cluster.network, faulted);
  FaultReport& f = out.faults;
  f.scenario = scenario.file;
  f.baseline_s = base.makespan_s;
  f.byzantine = scenario.byzantine;
  f.tasks_total = s.job.graph.size();
  sim::Result& r = s.result;
  if (r.stopped()) {
    f.stopped = true;
    f.stopped_at_s = r.stopped_at_s;
    f.cause = r.stop_cause;
    f.lost_gpu_seconds = r.stopped_at_s * cluster.gpu_count();
    // The report describes the iteration up to the stop.
    for (size_t i = 0; i < r.end_s.size(); ++i) {
      if (r.end_s[i] >= 0 && r.end_s[i] <= r.stopped_at_s) ++f.tasks_done;
      if (r.start_s[i] < 0 || r.start_s[i] > r.stopped_at_s) r.start_s[i] = r.stopped_at_s;
      if (r.end_s[i] < 0 || r.end_s[i] > r.stopped_at_s) r.end_s[i] = r.stopped_at_s;
    }
  } else {
    f.tasks_done = f.tasks_total;
  }
  f.iteration_s = r.makespan_s;
  f.slowdown = f.stopped || base.makespan_s <= 0 ? 1 : r.makespan_s / base.makespan_s;
  const sim::TaskGraph& g = s.job.graph;
  std::vector<DelayedTask> delayed;
  for (size_t i = 0; i < g.size(); ++i) {
    const double delay = r.end_s[i] - base.end_s[i];
    if (f.stopped && r.end_s[i] >= r.stopped_at_s) continue;  // did not finish: not a delay
    if (!(delay > 1e-9 * std::max(1.0, base.makespan_s))) continue;
    const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
    const bool slowed = (r.end_s[i] - r.start_s[i]) > (base.end_s[i] - base.start_s[i]) * (1 + 1e-9) + 1e-15;
    ++f.delayed_tasks;
    if (slowed) ++f.slowed_tasks;
    const int dev = t.kind == sim::TaskKind::Collective ? g.participants(t.participants).at(0) : t.device;
    delayed.push_back({g.labels().at(t.label), g.devices().at(dev).name, delay, slowed});
  }
  std::stable_sort(delayed.begin(), delayed.end(),
                   [](const DelayedTask& a, const DelayedTask& b) { return a.delay_s > b.delay_s; });
  if (delayed.size() > 10) delayed.resize(10);
  f.most_delayed = delayed;
  s.report = make_report(model, cluster, plan, s.job, r);
  return out;
}

void write_fault_summary(std::ostream& out, const FaultReport& f) {
  char buf[512];
  out << "faults (" << f.scenario << "):\n";
  if (f.stopped) {
    std::snprintf(buf, sizeof buf,
                  "  stopped at       %s: %s\n  done             %zu of %zu tasks; lost %.4g GPU-seconds of work "
                  "(the iteration must run again)\n",
                  units::format_time(f.stopped_at_s).c_str(), f.cause.c_str(), f.tasks_done, f.tasks_total,
                  f.lost_gpu_seconds);
  } else {
    std::snprintf(buf, sizeof buf, "  iteration        %s against %s without faults: %.3fx\n",
                  units::format_time(f.iteration_s).c_str(), units::format_time(f.baseline_s).c_str(), f.slowdown);
  }
  out << buf;
  std::snprintf(buf, sizeof buf, "  delayed tasks    %zu (%zu of them slowed themselves)\n", f.delayed_tasks,
                f.slowed_tasks);
  out << buf;
  for (const DelayedTask& d : f.most_delayed) {
    std::snprintf(buf, sizeof buf, "    +%-10s %-16s %s%s\n", units::format_time(d.delay_s).c_str(), d.device.c_str(),
                  d.label.c_str(), d.slowed ? "  (slowed)" : "");
    out << buf;
  }
  for (const ByzantineWorker& w : f.byzantine)
    out << "  byzantine        GPU " << w.gpu << " sends corrupted gradients (" << w.mode << "); recorded for convergence\n";
}

void write_fault_json(std::ostream& out, const FaultReport& f) {
  nlohmann::json j = {{"scenario", f.scenario},        {"baseline_s", f.baseline_s},
                      {"iteration_s", f.iteration_s},  {"slowdown", f.slowdown},
                      {"stopped", f.stopped},          {"tasks_done", f.tasks_done},
                      {"tasks_total", f.tasks_total},  {"delayed_tasks", f.delayed_tasks},
                      {"slowed_tasks", f.slowed_tasks}};
  if (f.stopped) {
    j["stopped_at_s"] = f.stopped_at_s;
    j["cause"] = f.cause;
    j["lost_gpu_seconds"] = f.lost_gpu_seconds;
  }
  j["most_delayed"] = nlohmann::json::array();
  for (const DelayedTask& d : f.most_delayed)
    j["most_delayed"].push_back({{"label", d.label}, {"device", d.device}, {"delay_s", d.delay_s}, {"slowed", d.slowed}});
  j["byzantine"] = nlohmann::json::array();
  for (const ByzantineWorker& w : f.byzantine)
    j["byzantine"].push_back({{"gpu", w.gpu}, {"mode", w.mode}, {"factor", w.factor}});
  out << j.dump(2);
}

}  // namespace dejavu::strategies
