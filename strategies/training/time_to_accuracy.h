// Time to accuracy as a search objective (`dejavu search --objective time-to-accuracy`):
// the fastest step is not always the fastest run. A plan that changes the update rule
// (gradient compression, delayed averaging, gossip, an asynchronous pipeline) may step
// faster and need more steps; `dejavu converge`'s measure prices both: the convergence
// model's real training (convergence.h) with each worker's steps timed by simulating the
// plan. The search's space holds synchronous plans; the objective tries each of a
// searcher's best plans with the update rules the plan allows (update_rule_variants) and
// ranks them all by their time to the target loss.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/faults.h"
#include "strategies/plan.h"
#include "strategies/search/searcher.h"
#include "strategies/training/convergence.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

// The rule and knobs the plan implies, on `base` (data, model, target): an asynchronous
// pipeline schedule trains on stale weights (pipedream, at its first stage's staleness),
// then delayed averaging, gossip, else sync; the plan's compression; dp workers.
ConvergenceConfig plan_convergence(const Plan& plan, ConvergenceConfig base);

// Worker timings from simulating the plan (with the scenario's faults, if any); throws
// ConfigError when no step can finish under the scenario.
WorkerTiming worker_timing(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                           const FaultScenario* scenario, const std::string& engine);

// The plan with each update rule its other knobs allow: topk, powersgd and 1bit
// compression, delayed averaging by one step, gossip with one peer, and with pp > 1 the
// asynchronous PipeDream-2BW schedule. ZeRO-1 and -2 plans are tried without ZeRO (the
// exchanges these rules change are plain all-reduces), and without the gradient buckets and
// overlap switches the refinement may have set (they overlap the all-reduce the rules
// replace); ZeRO-3 plans keep their rule.
std::vector<Plan> update_rule_variants(const Plan& plan);

struct TimeToAccuracy {
  bool reached = false;
  double time_s = 0;  // to the target loss; the last curve point's time when not reached
  long steps = 0;
  double step_s = 0;  // the simulated step
  std::string rule;   // sync, pipedream, delayed, gossip; +compression
};

// Without faults every rule here steps in lockstep at a constant step time, so the steps to
// the target depend on the rule and its knobs only: trained once per rule (key: the
// rule's configuration; the mean steps of three seeded runs, one run's being noisy),
// timed per plan: time = steps x step.
using TrainingCache = std::map<std::string, std::pair<bool, long>>;  // reached, steps

// `dejavu converge`'s measure for one plan, without faults; the proxy's global batch is
// base.batch x base.workers whatever the plan's dp (each worker base.batch x base.workers / dp
// samples), as the job's global batch does not change with its plan.
TimeToAccuracy time_to_accuracy(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                                const ConvergenceConfig& base, const std::string& engine = "analytic",
                                TrainingCache* cache = nullptr);

// Each result's top plans and their update-rule variants (those that are valid and fit),
// ranked by time to accuracy (`to_accuracy_s`, `steps`, `rule` set; the iteration time the
// simulated step of the analytic engine); the best `keep` kept. Unreached targets rank last.
void rank_by_time_to_accuracy(const search::Problem& problem, std::vector<search::SearchResult>& results,
                              const ConvergenceConfig& base, int keep);

}  // namespace dejavu::strategies
