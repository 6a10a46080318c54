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
                      std::string("the run would take ") + buf +
                          " to play (at most 1e8); valid: a longer mtbf, fewer "
                          "iterations or a longer checkpoint interval (failures every " +
                          units::format_time(rate > 0 ? 1 / rate : kInf) + ", an interval of " +
                          units::format_time(interval_s) + ")");
  }
}
}  // namespace

namespace {
// Failure times: a Poisson process at the current GPU count's rate (seeded), plus the
// scenario's timed fail-stops; time runs on the wall clock.
class FailureClock {
 public:
  FailureClock(const FaultScenario& sc, double rate) : rng_(sc.seed) {
    for (const FaultEvent& e : sc.events)
      if (e.kind == "gpu_fail" || e.kind == "server_fail") timed_.push_back(e.at_s);
    std::sort(timed_.begin(), timed_.end());
    next_random_ = exponential(rate);
  }
  double next() const { return std::min(next_random_, next_timed_ < timed_.size() ? timed_[next_timed_] : kInf); }
  // The failure at `at` happened: the random one is drawn again after recovery.
  void take(double at) {
    if (at == next_random_)
      next_random_ = kInf;
    else
      ++next_timed_;
  }
  void redraw(double now, double rate) { next_random_ = now + exponential(rate); }

 private:
  double exponential(double rate) {
    if (rate <= 0) return kInf;
    const double u = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    return -std::log(u) / rate;
  }
  std::mt19937_64 rng_;
  std::vector<double> timed_;
  size_t next_timed_ = 0;
  double next_random_ = kInf;
};

// The steady state: checkpoint cost, the best and Young's intervals, the interval used
// (whole iterations) and the expected goodput. Returns the first failure's downtime.
double steady_state(const HorizonInputs& in, const RecoveryPolicy& policy, HorizonResult& r) {
  const FaultScenario& sc = in.scenario;
  const Recovery& rec = sc.recovery;
  r.policy = rec.policy;
  r.iterations = in.iterations;
  r.byzantine = sc.byzantine;
  r.fault_free_s = in.iterations * in.iteration_s;
  r.checkpoint_s = in.storage_Bps > 0 ? in.checkpoint_bytes / in.storage_Bps : 0;
  const double C = r.checkpoint_s;
  r.failure_rate_per_s = sc.mtbf_s > 0 ? in.gpus / sc.mtbf_s : 0;
  int first_spares = rec.spares;  // what the first failure would cost
  const double downtime0 =
      policy.on_failure(first_spares) == RecoveryAction::SwapSpare ? rec.swap_s + C : rec.restart_s + C;
  r.best_interval_s = best_checkpoint_interval_s(r.failure_rate_per_s, C, downtime0);
  r.young_interval_s = r.failure_rate_per_s > 0 ? std::sqrt(2 * C / r.failure_rate_per_s) : kInf;
  return downtime0;
}

// The horizon as it is played: the GPUs and iteration time now, and the checkpoint interval.
struct Pace {
  const HorizonInputs& in;
  double wanted;  // the checkpoint interval asked for, in seconds
  int gpus;
  double T;
  long k = 1;  // whole iterations per checkpoint interval
  void set(double iteration_s) {
    T = iteration_s;
    k = !std::isfinite(wanted) ? in.iterations : std::max(1L, std::min(in.iterations, std::lround(wanted / T)));
  }
};

// Recovers from one failure by policy; the downtime, or a negative number when no plan
// fits the GPUs left (then r.stopped says why).
double recover(const HorizonInputs& in, const RecoveryPolicy& policy, int& spares, Pace& pace, HorizonResult& r) {
  const Recovery& rec = in.scenario.recovery;
  const RecoveryAction action = policy.on_failure(spares);
  if (action == RecoveryAction::SwapSpare) {
    ++r.spares_used;
    return rec.swap_s + r.checkpoint_s;
  }
  if (action == RecoveryAction::Shrink) {
    ++r.servers_lost;
    const auto [t, used] = in.elastic_plan ? in.elastic_plan(r.servers_lost) : std::pair<double, int>{-1, 0};
    if (t <= 0) {
      r.stopped = "after losing " + std::to_string(r.servers_lost) + " server(s) no plan fits the " +
                  std::to_string(std::max(0, in.gpus - r.servers_lost * in.gpus_per_server)) + " GPUs left";
      return -1;
    }
    pace.gpus = used;
    pace.set(t);
  }
  return rec.restart_s + r.checkpoint_s;  // reschedule, then load the checkpoint
}
}  // namespace

HorizonResult run_horizon(const HorizonInputs& in) {
  const FaultScenario& sc = in.scenario;
  HorizonResult r;
  const auto policy = recovery_policies().make(sc.recovery.policy);
  const double downtime0 = steady_state(in, *policy, r);
  const double C = r.checkpoint_s;
  Pace pace{in, sc.recovery.interval_s > 0 ? sc.recovery.interval_s : r.best_interval_s, in.gpus, in.iteration_s};
  pace.set(in.iteration_s);
  r.interval_s = pace.k * pace.T;
  // Steady state: every interval checkpointed (a long run's last interval hardly counts).
  r.expected_goodput = r.interval_s / expected_interval_s(r.failure_rate_per_s, r.interval_s, C, downtime0);
  check_feasible(in, r.failure_rate_per_s, r.interval_s, C, downtime0, pace.k);

  // Monte Carlo over the wall clock.
  FailureClock clock(sc, r.failure_rate_per_s);
  double now = 0;
  long done = 0;  // iterations safely checkpointed (or finished)
  int spares = sc.recovery.spares;
  while (done < in.iterations) {
    const long chunk = std::min(pace.k, in.iterations - done);
    const bool last = done + chunk == in.iterations;
    const double need = chunk * pace.T + (last ? 0 : C);  // the final interval needs no checkpoint
    const double fail_at = clock.next();
    if (now + need <= fail_at) {
      now += need;
      done += chunk;
      r.useful_s += chunk * pace.T;
      if (!last) r.checkpoint_overhead_s += C;
      continue;
    }
    // A failure: the interval's work so far is lost; recover by policy.
    clock.take(fail_at);
    r.lost_work_s += fail_at - now;
    now = fail_at;
    ++r.failures;
    const double down = recover(in, *policy, spares, pace, r);
    if (down < 0) break;
    r.downtime_s += down;
    now += down;
    clock.redraw(now, pace.gpus > 0 && sc.mtbf_s > 0 ? pace.gpus / sc.mtbf_s : 0);
  }
  r.iterations_done = done;
  r.wall_s = now;
  r.goodput = now > 0 ? r.useful_s / now : 0;
  return r;
}

}  // namespace dejavu::strategies
