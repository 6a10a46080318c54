#include "strategies/training/horizon.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "sim/error.h"
#include "sim/units.h"
#include "strategies/recovery/recovery_policy.h"

namespace dejavu::strategies {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

double expected_interval_s(double rate, double work_s, double checkpoint_s, double downtime_s) {
  if (rate <= 0) return work_s + checkpoint_s;
  return (1 / rate + downtime_s) * std::expm1(rate * (work_s + checkpoint_s));
}

double best_checkpoint_interval_s(double rate, double checkpoint_s, double downtime_s) {
  if (rate <= 0) return kInf;
  auto loss = [&](double t) { return -t / expected_interval_s(rate, t, checkpoint_s, downtime_s); };
  // The goodput is unimodal in t; bracket around Young's estimate and narrow by golden section.
  const double young = std::sqrt(2 * std::max(checkpoint_s, 1e-9) / rate);
  double a = young / 100, b = std::min(young * 100, 50 / rate);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = loss(x1), f2 = loss(x2);
  for (int i = 0; i < 200 && b - a > 1e-9 * b; ++i) {
    if (f1 < f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = loss(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = loss(x2);
    }
  }
  return (a + b) / 2;
}

namespace {
// The Monte Carlo steps once per checkpoint interval and once per failure: a run that
// would need more steps than a laptop plays in seconds (failures far more frequent than
// a checkpoint interval can finish, or astronomically many intervals) is refused before
// it starts, with what would make it feasible.
void check_feasible(const HorizonInputs& in, double rate, double interval_s, double checkpoint_s, double downtime_s,
                    long per_checkpoint) {
  constexpr double kMaxSteps = 1e8;
  const double intervals = std::ceil(static_cast<double>(in.iterations) / per_checkpoint);
  const double expected_wall = intervals * expected_interval_s(rate, interval_s, checkpoint_s, downtime_s);
  const double failures = rate * expected_wall;
  if (!(intervals + failures <= kMaxSteps)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g checkpoint intervals and %.3g failures", intervals, failures);
    throw ConfigError(SourceLoc{in.scenario.file, 0, 0}, "",
                      std::string("the run would take ") + buf + " to play (at most 1e8); valid: a longer mtbf, fewer "
                      "iterations or a longer checkpoint interval (failures every " +
                          units::format_time(rate > 0 ? 1 / rate : kInf) + ", an interval of " + units::format_time(interval_s) + ")");
  }
}
}  // namespace

HorizonResult run_horizon(const HorizonInputs& in) {
  const FaultScenario& sc = in.scenario;
  const Recovery& rec = sc.recovery;
  HorizonResult r;
  r.policy = rec.policy;
  r.iterations = in.iterations;
  r.byzantine = sc.byzantine;
  r.fault_free_s = in.iterations * in.iteration_s;
  r.checkpoint_s = in.storage_Bps > 0 ? in.checkpoint_bytes / in.storage_Bps : 0;
  const double C = r.checkpoint_s;
  int gpus = in.gpus;
  r.failure_rate_per_s = sc.mtbf_s > 0 ? gpus / sc.mtbf_s : 0;
  const double restart = rec.restart_s + C;  // downtime: reschedule, then load the checkpoint
  const auto policy = recovery_policies().make(rec.policy);
  int first_spares = rec.spares;  // what the first failure would cost
  const double downtime0 = policy->on_failure(first_spares) == RecoveryAction::SwapSpare ? rec.swap_s + C : restart;
  r.best_interval_s = best_checkpoint_interval_s(r.failure_rate_per_s, C, downtime0);
  r.young_interval_s = r.failure_rate_per_s > 0 ? std::sqrt(2 * C / r.failure_rate_per_s) : kInf;
  double T = in.iteration_s;
  const double wanted = rec.interval_s > 0 ? rec.interval_s : r.best_interval_s;
  // Whole iterations per checkpoint interval.
  auto iterations_per_checkpoint = [&](double iteration_s) {
    if (!std::isfinite(wanted)) return in.iterations;
    return std::max(1L, std::min(in.iterations, std::lround(wanted / iteration_s)));
  };
  long k = iterations_per_checkpoint(T);
  r.interval_s = k * T;
  // Steady state: every interval checkpointed (a long run's last interval hardly counts).
  r.expected_goodput = r.interval_s / expected_interval_s(r.failure_rate_per_s, r.interval_s, C, downtime0);
  check_feasible(in, r.failure_rate_per_s, r.interval_s, C, downtime0, k);

  // Monte Carlo: failures as a Poisson process of the current GPU count's rate (seeded),
  // plus the scenario's timed fail-stops; time runs on the wall clock.
  std::mt19937_64 rng(sc.seed);
  auto exponential = [&](double rate) {
    if (rate <= 0) return kInf;
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    return -std::log(u) / rate;
  };
  std::vector<double> timed;
  for (const FaultEvent& e : sc.events)
    if (e.kind == "gpu_fail" || e.kind == "server_fail") timed.push_back(e.at_s);
  std::sort(timed.begin(), timed.end());
  size_t next_timed = 0;
  double now = 0;
  double next_random = exponential(r.failure_rate_per_s);
  long done = 0;  // iterations safely checkpointed (or finished)
  int spares = rec.spares;
  while (done < in.iterations) {
    const long chunk = std::min(k, in.iterations - done);
    const bool last = done + chunk == in.iterations;
    const double need = chunk * T + (last ? 0 : C);  // the final interval needs no checkpoint
    const double fail_at = std::min(next_random, next_timed < timed.size() ? timed[next_timed] : kInf);
    if (now + need <= fail_at) {
      now += need;
      done += chunk;
      r.useful_s += chunk * T;
      if (!last) r.checkpoint_overhead_s += C;
      continue;
    }
    // A failure: the interval's work so far is lost; recover by policy.
    if (fail_at == next_random) {
      next_random = kInf;  // drawn again after recovery, at the new GPU count
    } else {
      ++next_timed;
    }
    r.lost_work_s += fail_at - now;
    now = fail_at;
    ++r.failures;
    double down = restart;
    const RecoveryAction action = policy->on_failure(spares);
    if (action == RecoveryAction::SwapSpare) {
      ++r.spares_used;
      down = rec.swap_s + C;
    } else if (action == RecoveryAction::Shrink) {
      ++r.servers_lost;
      const auto [t, used] = in.elastic_plan ? in.elastic_plan(r.servers_lost) : std::pair<double, int>{-1, 0};
      if (t <= 0) {
        r.stopped = "after losing " + std::to_string(r.servers_lost) + " server(s) no plan fits the " +
                    std::to_string(std::max(0, in.gpus - r.servers_lost * in.gpus_per_server)) + " GPUs left";
        break;
      }
      gpus = used;
      T = t;
      k = iterations_per_checkpoint(T);
    }
    r.downtime_s += down;
    now += down;
    next_random = now + exponential(gpus > 0 && sc.mtbf_s > 0 ? gpus / sc.mtbf_s : 0);
  }
  r.iterations_done = done;
  r.wall_s = now;
  r.goodput = now > 0 ? r.useful_s / now : 0;
  return r;
}



}  // namespace dejavu::strategies
