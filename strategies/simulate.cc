#include "strategies/simulate.h"

#include "sim/json_text.h"
#include "strategies/schedules/schedule.h"
#include "strategies/trace_lowering.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/units.h"

namespace dejavu::strategies {

namespace {

// An iteration time found beyond the simulated one (a steady state): the rates follow, and
// each device's bubble is measured against the pipeline's period.
void set_iteration_time(Report& r, double T, double period) {
  r.iteration_time_s = T;
  r.steady_state_period_s = period;
  r.tflops_per_gpu = r.model_flops / T / r.gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops / T / r.gpus / 1e12;
  r.mfu = r.model_flops / T / r.peak_flops_total;
  r.hfu = r.hardware_flops / T / r.peak_flops_total;
  // Bubbles against the steady period: a device's microbatch work is the same per iteration.
  double sum = 0;
  for (auto& d : r.simulated) {
    const double busy = (1 - d.bubble_fraction) * r.pipeline_s;
    d.bubble_fraction = period > 0 ? std::max(0.0, 1 - busy / period) : 0;
    sum += d.bubble_fraction * d.gpus;
  }
  r.bubble_fraction = r.gpus > 0 ? sum / r.gpus : 0;
}

// Per device: when its last microbatch task ends, and the optimizer's time on it.
struct Tail {
  double microbatch_end = 0, end = 0, step_s = 0;
};
std::vector<Tail> tails(const sim::TaskGraph& g, const sim::Result& r) {
  std::vector<Tail> out(g.devices().size());
  int step_label = -1;
  for (size_t i = 0; i < g.labels().size(); ++i)
    if (g.labels()[i] == "optimizer step") step_label = static_cast<int>(i);
  for (size_t i = 0; i < g.size(); ++i) {
    const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
    for (int d : g.devices_of(t)) {
      out[d].end = std::max(out[d].end, r.end_s[i]);
      if (t.tag >= 0) out[d].microbatch_end = std::max(out[d].microbatch_end, r.end_s[i]);
      if (t.label == step_label && t.kind == sim::TaskKind::Compute) out[d].step_s += r.end_s[i] - r.start_s[i];
    }
  }
  return out;
}

double pipeline_end(const std::vector<Tail>& t) {
  double x = 0;
  for (const Tail& d : t) x = std::max(x, d.microbatch_end);
  return x;
}

// An asynchronous pipeline's iteration in steady state. One iteration's drain overlaps the
// next one's fill, so the pipeline's period for m microbatches is what 2m microbatches take
// beyond m (both simulated on the engine). The optimizer steps run on the GPUs' compute
// (once per iteration, or once per microbatch for PipeDream), and the gradient exchange of
// one step overlaps the next step's pipeline; the iteration is the longer of the two.
void steady_state(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                  const std::string& engine, const sim::EngineOptions& options, const PipelineSchedule& schedule,
                  Simulation& s) {
  Plan twice = plan;
  twice.global_batch_size *= 2;
  const LoweredJob job2 = lower(model, cluster, twice);
  const sim::Result r2 = sim::engines().make(engine)->run(job2.graph, cluster.network, options);
  const std::vector<Tail> one = tails(s.job.graph, s.result), two = tails(job2.graph, r2);
  const double period = pipeline_end(two) - pipeline_end(one);
  const int steps = schedule.steps_every_microbatch() ? plan.microbatches() : 1;
  double step = 0, exchange = 0;
  for (const Tail& d : one) {
    step = std::max(step, d.step_s);
    exchange = std::max(exchange, d.end - d.microbatch_end);  // gradient exchange and step
  }
  Report& r = s.report;
  r.pipeline_flush = false;
  r.optimizer_steps = steps;
  set_iteration_time(r, std::max(period + steps * step, steps * exchange), period);
}

// Delayed gradient averaging: the exchange of step k is applied at step k + D, so it runs
// under the next D steps' compute. In steady state a step takes the longest of its compute
// (to the last microbatch, then the optimizer step), its exchange spread over D steps, and
// the time the busiest link needs for one step's bytes (exchanges in flight share links).
void delayed_averaging(const Plan& plan, Simulation& s) {
  const std::vector<Tail> one = tails(s.job.graph, s.result);
  double step = 0, exchange = 0;
  for (const Tail& d : one) {
    step = std::max(step, d.step_s);
    exchange = std::max(exchange, d.end - d.microbatch_end - d.step_s);
  }
  Report& r = s.report;
  const int D = plan.data_parallel.delay;
  const double link = r.busiest_link.utilization * r.iteration_time_s;
  r.delayed_averaging = D;
  r.staleness.assign(plan.pp, D);
  r.mean_staleness = D;
  set_iteration_time(r, std::max({r.pipeline_s + step, exchange / D, link}), r.pipeline_s);
}

}  // namespace

Simulation simulate(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                    const std::string& engine, const sim::EngineOptions& options) {
  Simulation s;
  s.job = lower(model, cluster, plan);
  s.result = sim::engines().make(engine)->run(s.job.graph, cluster.network, options);
  s.report = make_report(model, cluster, plan, s.job, s.result);
  const auto schedule = schedules().make(plan.schedule);
  double weighted = 0;
  for (int stage = 0; stage < plan.pp; ++stage) {
    s.report.staleness.push_back(schedule->staleness(stage, plan.pp));
    s.report.weight_versions.push_back(schedule->weight_versions(stage, plan.pp));
    weighted += s.report.staleness.back();
  }
  s.report.mean_staleness = weighted / plan.pp;
  if (!schedule->flushes() && plan.pp > 1) steady_state(model, cluster, plan, engine, options, *schedule, s);
  if (plan.data_parallel.delay > 0 && plan.dp * plan.cp > 1) delayed_averaging(plan, s);
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

}  // namespace dejavu::strategies
