#include "tools/step_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "platforms/calibration.h"
#include "sim/error.h"
#include "tools/public_training.h"
#include "tools/validation_suite.h"

namespace dejavu::tools {

namespace {

struct Rows {
  std::vector<double> measured, predicted;
  std::vector<size_t> suite;  // each row's suite in the pool
};

// No factors: the suites' own calibrations. `gpu` any: every GPU type's rows.
Rows run_set(const std::vector<PublicSuiteFiles>& pool, const std::string& gpu, bool held_out, const StepFactors* x,
             int jobs) {
  Rows rows;
  for (size_t k = 0; k < pool.size(); ++k) {
    const PublicSuiteFiles& f = pool[k];
    PublicOptions o;
    o.jobs = jobs;
    o.calibrations = f.calibrations;
    o.gpu = gpu == platforms::kAnyGpu ? "" : gpu;
    o.fit_only = !held_out;
    o.held_out_only = held_out;
    if (x) o.step_efficiency = x->step, o.attention_step_efficiency = x->attention, o.step_overhead_s = x->overhead_s;
    o.precision = f.precision;
    for (const PublicRun& r : run_public_training(f.measurements, f.source, f.platforms, o).runs) {
      rows.measured.push_back(r.measured_s);
      rows.predicted.push_back(r.predicted_s);
      rows.suite.push_back(k);
    }
  }
  return rows;
}

// The rows of suite k alone.
Rows of_suite(const Rows& r, size_t k) {
  Rows out;
  for (size_t i = 0; i < r.measured.size(); ++i)
    if (r.suite[i] == k) out.measured.push_back(r.measured[i]), out.predicted.push_back(r.predicted[i]);
  return out;
}

double geomean_abs_error(const Rows& r) {
  double log_sum = 0;
  for (size_t i = 0; i < r.measured.size(); ++i)
    log_sum += std::log(std::max(std::fabs(r.predicted[i] / r.measured[i] - 1), 1e-6));
  return r.measured.empty() ? 0 : std::exp(log_sum / r.measured.size());
}

std::vector<double> log_errors(const Rows& r) {
  std::vector<double> e;
  for (size_t i = 0; i < r.measured.size(); ++i) e.push_back(std::log(r.predicted[i] / r.measured[i]));
  return e;
}

// The sum of |e| over the rows `use` weighs 1.
double masked_abs(const std::vector<double>& e, const std::vector<double>& use) {
  double sum = 0;
  for (size_t i = 0; i < e.size(); ++i) sum += use[i] * std::fabs(e[i]);
  return sum;
}

// The step efficiency of the rows' measured steps taken whole: what a pure-compute step
// would need, the fit's starting point.
double whole_step_guess(const Rows& r) {
  double log_sum = 0;
  for (size_t i = 0; i < r.measured.size(); ++i) log_sum += std::log(r.predicted[i] / r.measured[i]);
  return std::exp(log_sum / r.measured.size());
}

// The ranges calibrations accept (platforms/calibration.cc), in logs.
const double kLo[2] = {std::log(0.05), std::log(0.05)}, kHi[2] = {std::log(1.5), std::log(3.0)};

StepFactors factors_at(const double x[2]) { return {std::exp(x[0]), std::exp(x[1])}; }

// The fit rows' log errors at (log step, log attention).
using Errors = std::function<std::vector<double>(const double[2])>;

// One damped Gauss-Newton step from x (Levenberg-Marquardt on the 2 x 2 normal equations)
// on the rows `use` weighs 1: the Jacobian of their log errors by forward differences in
// log(step) and log(attention), weights 1 / |error| making the least squares an L1 fit
// (iteratively reweighted); lambda grows until the step lowers the cost. False when no
// step does. With `both` false the attention share stays where it is.
bool gauss_newton_step(double x[2], std::vector<double>& e, double& lambda, bool both, const std::vector<double>& use,
                       const Errors& errors) {
  constexpr double h = 0.02;
  std::vector<double> col[2] = {{}, std::vector<double>(e.size(), 0.0)};
  for (int k = 0; k < (both ? 2 : 1); ++k) {
    double y[2] = {x[0], x[1]};
    y[k] += h;
    col[k] = errors(y);
    for (size_t i = 0; i < e.size(); ++i) col[k][i] = (col[k][i] - e[i]) / h;
  }
  double a[2][2] = {{0, 0}, {0, 0}}, g[2] = {0, 0};
  for (size_t i = 0; i < e.size(); ++i) {
    const double w = use[i] / std::max(std::fabs(e[i]), 5e-3);
    for (int k = 0; k < 2; ++k) {
      g[k] += w * col[k][i] * e[i];
      for (int l = 0; l < 2; ++l) a[k][l] += w * col[k][i] * col[l][i];
    }
  }
  const double cost = masked_abs(e, use);
  for (int tries = 0; tries < 8; ++tries, lambda *= 10) {
    const double m00 = a[0][0] * (1 + lambda) + 1e-12, m11 = a[1][1] * (1 + lambda) + 1e-12;
    const double det = m00 * m11 - a[0][1] * a[1][0];
    double y[2] = {x[0] - (m11 * g[0] - a[0][1] * g[1]) / det, x[1] - (m00 * g[1] - a[1][0] * g[0]) / det};
    for (int k = 0; k < 2; ++k) y[k] = std::clamp(y[k], kLo[k], kHi[k]);
    std::vector<double> ey = errors(y);
    if (masked_abs(ey, use) < cost) {
      x[0] = y[0], x[1] = y[1], e = std::move(ey), lambda /= 10;
      return true;
    }
  }
  return false;
}

// The factors (logs, in x) minimising the L1 cost of the rows `use` weighs 1, from the
// whole-step guess and an attention share of 1.
void minimise(double x[2], const Errors& errors, const std::vector<double>& use, bool both, double guess) {
  x[0] = std::clamp(std::log(guess), kLo[0], kHi[0]), x[1] = 0;
  std::vector<double> e = errors(x);
  double lambda = 1e-3;
  for (int iteration = 0; iteration < 12; ++iteration) {
    const double before[2] = {x[0], x[1]};
    if (!gauss_newton_step(x, e, lambda, both, use, errors)) break;
    if (std::fabs(x[0] - before[0]) + std::fabs(x[1] - before[1]) < 1e-3) break;
  }
}

// The rows' log errors with `overhead` seconds added to each predicted step (e = log(p / m)).
std::vector<double> with_overhead(const std::vector<double>& e, const std::vector<double>& measured, double overhead) {
  std::vector<double> out(e.size());
  for (size_t i = 0; i < e.size(); ++i) out[i] = std::log(std::exp(e[i]) + overhead / measured[i]);
  return out;
}

// The overhead (0 to kMaxStepOverhead s) minimising the L1 cost of the rows `use` weighs 1: the
// cost's kinks are where a row's error crosses 0, at its shortfall m - p, so the minimum is 0
// or one of them.
double best_overhead(const std::vector<double>& e, const std::vector<double>& measured,
                     const std::vector<double>& use) {
  double best = 0, best_cost = masked_abs(e, use);
  for (size_t i = 0; i < e.size(); ++i) {
    const double x = measured[i] * (1 - std::exp(e[i]));
    if (use[i] == 0 || x <= 0 || x > kMaxStepOverhead) continue;
    const double cost = masked_abs(with_overhead(e, measured, x), use);
    if (cost < best_cost) best = x, best_cost = cost;
  }
  return best;
}

// The rows' errors at the factors y with the overhead fitted to the rows `use` weighs 1 for
// them (profiled out: the Gauss-Newton steps see the factors alone).
Errors profiled(const Errors& raw, const std::vector<double>& measured, const std::vector<double>& use) {
  return [&raw, &measured, use](const double y[2]) {
    const std::vector<double> e = raw(y);
    return with_overhead(e, measured, best_overhead(e, measured, use));
  };
}

// Two-fold cross-validation of the overhead, as of the attention share below: fitted on one
// half beside the factors (attention share as settled), judged on the other.
bool overhead_predicts(const Errors& raw, const std::vector<double>& measured, bool attention, double guess) {
  const size_t rows = measured.size();
  double cost[2] = {0, 0};  // without, with
  for (int fold = 0; fold < 2; ++fold) {
    std::vector<double> train(rows), test(rows);
    for (size_t i = 0; i < rows; ++i) train[i] = (i % 2 != static_cast<size_t>(fold)), test[i] = 1 - train[i];
    for (int with = 0; with < 2; ++with) {
      double x[2];
      minimise(x, with == 1 ? profiled(raw, measured, train) : raw, train, attention, guess);
      const std::vector<double> e = raw(x);
      cost[with] += masked_abs(with == 1 ? with_overhead(e, measured, best_overhead(e, measured, train)) : e, test);
    }
  }
  return cost[1] < 0.98 * cost[0];
}

// Two-fold cross-validation on the fit rows alone (even and odd rows, each fitted on the
// other): true when the attention share beside the step efficiency predicts the unseen half
// better than the step efficiency alone, by 2% of its error at least. The held-out set plays
// no part.
bool attention_share_predicts(const Errors& errors, size_t rows, double guess) {
  double cost[2] = {0, 0};  // step alone, both
  for (int fold = 0; fold < 2; ++fold) {
    std::vector<double> train(rows), test(rows);
    for (size_t i = 0; i < rows; ++i) train[i] = (i % 2 != static_cast<size_t>(fold)), test[i] = 1 - train[i];
    for (int both = 0; both < 2; ++both) {
      double x[2];
      minimise(x, errors, train, both == 1, guess);
      cost[both] += masked_abs(errors(x), test);
    }
  }
  return cost[1] < 0.98 * cost[0];  // a second factor must earn its place: 2% less error
}

}  // namespace

namespace {

// Each fit row's weight: 1, or in a pool of several suites 1 / its suite's fit rows, so that
// each suite counts as much as any other and one source's many rows do not decide.
std::vector<double> row_weights(const Rows& base, size_t suites) {
  std::vector<double> w(base.measured.size(), 1.0);
  if (suites < 2) return w;
  std::vector<int> n(suites, 0);
  for (size_t k : base.suite) ++n[k];
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / n[base.suite[i]];
  return w;
}

// Each suite's fit and held-out error before and after (a pool's table).
void report_sets(StepFit& fit, const std::vector<PublicSuiteFiles>& pool, const Rows& base, int jobs) {
  const Rows fit_after = run_set(pool, fit.gpu, false, &fit.factors, jobs);
  const Rows held = run_set(pool, fit.gpu, true, nullptr, jobs);
  const Rows held_after = held.measured.empty() ? held : run_set(pool, fit.gpu, true, &fit.factors, jobs);
  auto set = [](const Rows& before, const Rows& after) {
    return SetFit{static_cast<int>(before.measured.size()), geomean_abs_error(before),
                  before.measured.empty() ? 0 : geomean_abs_error(after)};
  };
  fit.fit = set(base, fit_after);
  fit.held_out = set(held, held_after);
  for (size_t k = 0; k < pool.size() && pool.size() > 1; ++k)
    fit.per_suite.push_back({pool[k].name, set(of_suite(base, k), of_suite(fit_after, k)),
                             set(of_suite(held, k), of_suite(held_after, k))});
}

}  // namespace

StepFit fit_step_efficiency(const std::string& suite_yaml, const std::string& gpu, int jobs) {
  return fit_step_efficiency(std::vector<std::string>{suite_yaml}, gpu, jobs);
}

StepFit fit_step_efficiency(const std::vector<std::string>& suite_yamls, const std::string& gpu, int jobs) {
  std::vector<PublicSuiteFiles> pool;
  for (const std::string& y : suite_yamls) pool.push_back(public_suite_files(y, "a step calibration is fitted to"));
  StepFit fit;
  for (const PublicSuiteFiles& f : pool) fit.suite += (fit.suite.empty() ? "" : ", ") + f.name;
  fit.gpu = gpu;
  fit.pooled = pool.size() > 1 || gpu == platforms::kAnyGpu;
  const Rows base = run_set(pool, gpu, false, nullptr, jobs);
  if (static_cast<int>(base.measured.size()) < kMinStepFitRows)
    throw ConfigError(SourceLoc{suite_yamls[0], 0, 0}, "source",
                      fit.suite + " has " + std::to_string(base.measured.size()) + " fit rows on " + gpu +
                          " that dejavu runs; a step calibration needs at least " + std::to_string(kMinStepFitRows));
  // Least absolute log(predicted / measured) over the fit rows in log(step efficiency) and
  // log(attention share); the share only with kMinAttentionFitRows fit rows or more and when
  // cross-validation on them says it predicts (1 otherwise). Runs are cached by factors.
  std::map<std::pair<double, double>, std::vector<double>> seen;
  const Errors errors = [&](const double y[2]) {
    auto [it, fresh] = seen.try_emplace({y[0], y[1]});
    if (fresh) {
      ++fit.evaluations;
      const StepFactors s = factors_at(y);
      it->second = log_errors(run_set(pool, gpu, false, &s, jobs));
    }
    return it->second;
  };
  const size_t n = base.measured.size();
  const double guess = whole_step_guess(base);
  // A pool of frameworks fits the step efficiency alone: their attention kernels and host
  // overheads differ, and a share fitted across them would stand for none.
  const bool enough = !fit.pooled && static_cast<int>(n) >= kMinAttentionFitRows;
  fit.attention_fitted = enough && attention_share_predicts(errors, n, guess);
  fit.overhead_fitted = enough && overhead_predicts(errors, base.measured, fit.attention_fitted, guess);
  const std::vector<double> weights = row_weights(base, pool.size());
  double x[2];
  minimise(x, fit.overhead_fitted ? profiled(errors, base.measured, weights) : errors, weights, fit.attention_fitted,
           guess);
  fit.factors = factors_at(x);
  if (fit.overhead_fitted) fit.factors.overhead_s = best_overhead(errors(x), base.measured, weights);
  report_sets(fit, pool, base, jobs);
  return fit;
}

std::vector<LeftOut> leave_one_out(const std::vector<std::string>& suite_yamls, const std::string& gpu, int jobs) {
  std::vector<LeftOut> out;
  for (size_t k = 0; k < suite_yamls.size(); ++k) {
    std::vector<std::string> others = suite_yamls;
    others.erase(others.begin() + static_cast<long>(k));
    const StepFit fit = fit_step_efficiency(others, gpu, jobs);
    const std::vector<PublicSuiteFiles> one = {public_suite_files(suite_yamls[k], "a step calibration is judged on")};
    // Its fit rows and held-out rows together: the fit read none of them.
    const auto every_row = [&](const StepFactors* x) {
      Rows r = run_set(one, gpu, false, x, jobs);
      const Rows held = run_set(one, gpu, true, x, jobs);
      r.measured.insert(r.measured.end(), held.measured.begin(), held.measured.end());
      r.predicted.insert(r.predicted.end(), held.predicted.begin(), held.predicted.end());
      return r;
    };
    const Rows before = every_row(nullptr), after = every_row(&fit.factors);
    out.push_back({one[0].name,
                   fit.factors.step,
                   {static_cast<int>(before.measured.size()), geomean_abs_error(before), geomean_abs_error(after)}});
  }
  return out;
}

std::string overhead_verdict(const StepFit& fit) {
  if (fit.overhead_fitted) return "fitted beside them";
  if (fit.pooled) return "kept at 0: a typical fit's frameworks spend their own host time";
  return fit.fit.rows < kMinAttentionFitRows ? "kept at 0: too few fit rows"
                                             : "kept at 0: cross-validation on the fit rows says it does not predict";
}

std::string attention_verdict(const StepFit& fit) {
  if (fit.attention_fitted) return "fitted beside the step efficiency";
  if (fit.pooled) return "kept at 1: a typical fit's frameworks run attention kernels of their own";
  return fit.fit.rows < kMinAttentionFitRows ? "kept at 1: too few fit rows"
                                             : "kept at 1: cross-validation on the fit rows says it does not predict";
}

void write_step_calibration(std::ostream& out, const StepFit& fit, const std::string& suite_yaml) {
  write_step_calibration(out, fit, std::vector<std::string>{suite_yaml});
}

void write_step_calibration(std::ostream& out, const StepFit& fit, const std::vector<std::string>& suite_yamls) {
  std::string command = "dejavu calibrate";
  for (const std::string& y : suite_yamls) command += " --suite " + y;
  char buf[1536];
  std::snprintf(buf, sizeof buf,
                "# Step calibration fitted by `%s --gpu %s`:\n"
                "# the %d fit rows of %s on %s, geometric mean |error| %.1f%% -> %.1f%%;\n"
                "# its %d held-out rows, never read by the fit: %.1f%% -> %.1f%%.\n",
                command.c_str(), fit.gpu.c_str(), fit.fit.rows, fit.suite.c_str(),
                fit.gpu == platforms::kAnyGpu ? "every GPU type" : fit.gpu.c_str(), 100 * fit.fit.before,
                100 * fit.fit.after, fit.held_out.rows, 100 * fit.held_out.before, 100 * fit.held_out.after);
  out << buf;
  if (fit.pooled)
    out << "# Typical of these frameworks (each suite weighing alike): the step efficiency alone.\n"
           "# Use it with --calibration typical where no framework of your own is fitted.\n";
  else
    out << "# The attention share is " << attention_verdict(fit) << "; the host overhead is " << overhead_verdict(fit)
        << ".\n# Use it with --calibration (after any kernel calibration of the same GPU type).\n";
  std::snprintf(buf, sizeof buf, "gpu: %s\nstep_efficiency: %.4f\nattention_step_efficiency: %.4f\n", fit.gpu.c_str(),
                fit.factors.step, fit.factors.attention);
  out << buf;
  if (!fit.overhead_fitted) return;
  std::snprintf(buf, sizeof buf, "step_overhead: %.4g s\n", fit.factors.overhead_s);
  out << buf;
}

}  // namespace dejavu::tools
