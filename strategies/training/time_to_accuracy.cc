#include "strategies/training/time_to_accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <limits>
#include <map>
#include <set>

#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"
#include "sim/error.h"
#include "strategies/search/evaluator.h"
#include "strategies/schedules/schedule.h"
#include "strategies/simulate.h"

namespace dejavu::strategies {

ConvergenceConfig plan_convergence(const Plan& plan, ConvergenceConfig c) {
  c.workers = plan.dp;
  const auto schedule = schedules().make(plan.schedule);
  c.rule = !schedule->flushes()                  ? "pipedream"
           : plan.data_parallel.delay > 0        ? "delayed"
           : plan.data_parallel.sync == "gossip" ? "gossip"
                                                 : "sync";
  if (c.rule == "pipedream") c.staleness = std::max(1, static_cast<int>(std::lround(schedule->staleness(0, plan.pp))));
  if (plan.data_parallel.delay > 0) c.delay = plan.data_parallel.delay;
  c.peers = plan.data_parallel.peers;
  c.compression = plan.data_parallel.compression;
  c.density = plan.data_parallel.density;
  c.rank = plan.data_parallel.rank;
  return c;
}

WorkerTiming worker_timing(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                           const FaultScenario* scenario, const std::string& engine) {
  const Simulation base = simulate(model, cluster, plan, engine);
  Simulation faulted;
  if (scenario) faulted = std::move(simulate_with_faults(model, cluster, plan, *scenario, engine).simulation);
  const Report& r = scenario ? faulted.report : base.report;
  if (r.stopped)  // a downed link or a fail-stop left in the timing: no step time to train on
    throw ConfigError(SourceLoc{scenario ? scenario->file : "", 0, 0}, "",
                      "no step can finish under this scenario (" + r.stop_cause + "); converge needs a step time");
  WorkerTiming t;
  t.iteration_s = r.iteration_time_s;
  t.compute_s.assign(plan.dp, 0.0);
  std::vector<double> base_compute(plan.dp, 0.0);
  for (const auto& d : r.devices) t.compute_s[d.dp_rank] = std::max(t.compute_s[d.dp_rank], d.busy_s);
  for (const auto& d : base.report.devices) base_compute[d.dp_rank] = std::max(base_compute[d.dp_rank], d.busy_s);
  t.communication_s =
      std::max(0.0, base.report.iteration_time_s - *std::max_element(base_compute.begin(), base_compute.end()));
  return t;
}

std::vector<Plan> update_rule_variants(const Plan& plan) {
  std::vector<Plan> out;
  // The rules replace the gradient all-reduce: the buckets that overlap it go with it.
  Plan base = plan;
  base.overlap_grad_reduce = base.overlap_param_gather = false;
  base.data_parallel.bucket_bytes = 0;
  const bool plain = base.dp > 1 && base.zero < 3 && base.data_parallel.sync == "all-reduce" &&
                     base.data_parallel.compression == "none" && base.data_parallel.delay == 0 &&
                     base.replica_microbatches.empty() && base.ep == 1;
  if (plain) {
    for (const char* c : {"topk", "powersgd", "1bit"}) {
      out.push_back(base);
      out.back().data_parallel.compression = c;
    }
    out.push_back(base);
    out.back().data_parallel.delay = 1;
    out.push_back(base);
    out.back().data_parallel.sync = "gossip";
    out.back().data_parallel.peers = 1;
    for (Plan& p : out) p.zero = 0;
  }
  if (plan.pp > 1 && schedules().make(plan.schedule)->flushes() && plan.virtual_stages == 1 &&
      plan.replica_microbatches.empty()) {
    out.push_back(plan);
    out.back().schedule = "pipedream-2bw";
  }
  for (Plan& p : out) p.name = plan.name;
  return out;
}

namespace {
constexpr int kSeeds = 3;

std::string rule_key(const ConvergenceConfig& c) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s/%s/%a/%d/%d/%d/%d/%d/%d", c.rule.c_str(), c.compression.c_str(), c.density, c.rank,
                c.delay, c.staleness, c.peers, c.workers, c.batch);
  return buf;
}
}  // namespace

TimeToAccuracy time_to_accuracy(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                                const ConvergenceConfig& base, const std::string& engine, TrainingCache* cache) {
  ConvergenceConfig c = plan_convergence(plan, base);
  // The job's global batch is the same for every plan: so is the proxy's (base.batch x
  // base.workers samples a step, shared by the plan's dp workers).
  c.batch = std::max(1, base.batch * base.workers / std::max(1, plan.dp));
  // Plain synchronous SGD over that batch is one algorithm however many workers share it:
  // trained once, on base.workers, so that plans differing only in dp tie in steps.
  if (c.rule == "sync" && c.compression == "none") c.workers = base.workers, c.batch = base.batch;
  Plan every_step = plan;  // the exchange in full, not hidden behind later steps
  every_step.data_parallel.delay = 0;
  WorkerTiming t = worker_timing(model, cluster, every_step, nullptr, engine);
  if (c.rule == "delayed") t.delayed_step_s = simulate(model, cluster, plan, engine).report.iteration_time_s;
  TimeToAccuracy out;
  out.step_s = c.rule == "delayed" ? t.delayed_step_s : t.iteration_s;
  out.rule = c.rule + (c.compression != "none" ? "+" + c.compression : "");
  const std::string key = rule_key(c);
  TrainingCache local;
  if (!cache) cache = &local;
  if (!cache->count(key)) {  // the mean over kSeeds seeded runs: one run's steps are noisy
    bool reached = true;
    long steps = 0;
    for (int k = 0; k < kSeeds; ++k) {
      ConvergenceConfig run = c;
      run.seed = c.seed + k;
      run.data.seed = c.data.seed + k;
      const ConvergenceResult r = train_to_target(run, t, plan.name);
      reached = reached && r.reached;
      steps += r.reached ? r.steps_to_target : (r.curve.empty() ? 0 : r.curve.back().step);
    }
    (*cache)[key] = {reached, (steps + kSeeds / 2) / kSeeds};
  }
  std::tie(out.reached, out.steps) = cache->at(key);
  out.time_s = static_cast<double>(out.steps) * out.step_s;
  return out;
}

namespace {

// One candidate priced by its time to accuracy, or false when it is invalid or does not fit.
bool priced(const search::Problem& problem, const Plan& plan, const ConvergenceConfig& base,
            std::map<std::string, search::Candidate>& cache, TrainingCache& trained, search::Candidate& out) {
  const std::string key = search::plan_key(plan);
  if (auto it = cache.find(key); it != cache.end()) {
    out = it->second;
    return out.score.fits;
  }
  const platforms::Cluster cluster = cluster_for_plan(*problem.cluster, plan);
  search::Candidate c;
  c.plan = plan;
  try {
    const workloads::ModelGraph model = model_for_plan(*problem.model, plan);
    search::SimulationEvaluator fit(
        search::Problem{&model, &cluster, problem.global_batch, problem.grad_dtype, problem.recompute}, "ring",
        search::SimulationEvaluator::Path::Simulate);
    c.score = fit.evaluate(plan);
    if (c.score.valid && c.score.fits) {
      const TimeToAccuracy t = time_to_accuracy(model, cluster, plan, base, "analytic", &trained);
      c.score.iteration_time_s = t.step_s;  // and the throughput of that step
      c.score.tokens_per_s = plan.global_batch_size * model.tokens_per_sample / t.step_s;
      c.to_accuracy_s = t.reached ? t.time_s : std::numeric_limits<double>::infinity();
      c.steps = t.steps;
      c.rule = t.rule;
    }
  } catch (const Error&) {
    c.score.fits = false;  // a variant the plan's other knobs do not allow
  }
  cache[key] = c;
  out = c;
  return c.score.fits;
}

}  // namespace

void rank_by_time_to_accuracy(const search::Problem& problem, std::vector<search::SearchResult>& results,
                              const ConvergenceConfig& base, int keep) {
  std::map<std::string, search::Candidate> cache;
  TrainingCache trained;
  for (search::SearchResult& r : results) {
    std::vector<search::Candidate> ranked;
    std::set<std::string> seen;  // variants of different plans can coincide
    for (const search::Candidate& top : r.top) {
      std::vector<Plan> plans{top.plan};
      for (const Plan& v : update_rule_variants(top.plan)) plans.push_back(v);
      for (const Plan& p : plans) {
        search::Candidate c;
        if (seen.insert(search::plan_key(p)).second && priced(problem, p, base, cache, trained, c)) ranked.push_back(c);
      }
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const search::Candidate& a, const search::Candidate& b) {
      return a.objective() < b.objective();
    });
    if (static_cast<int>(ranked.size()) > keep) ranked.resize(keep);
    r.top = std::move(ranked);
    r.ranked_on.clear();  // the iteration column is now the analytic engine's step
    r.ranking = "ranked by time to accuracy: each top plan and its update-rule variants trained to loss " +
                std::to_string(base.target_loss).substr(0, 5) + " by the convergence model";
  }
}

}  // namespace dejavu::strategies
