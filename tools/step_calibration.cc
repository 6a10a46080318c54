#include "tools/step_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "sim/error.h"
#include "tools/public_training.h"
#include "tools/validation_suite.h"

namespace dejavu::tools {

namespace {

struct Rows {
  std::vector<double> measured, predicted;
};

// No factors: the suite's own calibrations.
Rows run_set(const PublicSuiteFiles& f, const std::string& gpu, bool held_out, const StepFactors* x, int jobs) {
  PublicOptions o;
  o.jobs = jobs;
  o.calibrations = f.calibrations;
  o.gpu = gpu;
  o.fit_only = !held_out;
  o.held_out_only = held_out;
  if (x) o.step_efficiency = x->step, o.attention_step_efficiency = x->attention, o.step_overhead_s = x->overhead_s;
  o.precision = f.precision;
  Rows rows;
  for (const PublicRun& r : run_public_training(f.measurements, f.source, f.platforms, o).runs) {
    rows.measured.push_back(r.measured_s);
    rows.predicted.push_back(r.predicted_s);
  }
  return rows;
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

StepFit fit_step_efficiency(const std::string& suite_yaml, const std::string& gpu, int jobs) {
  const PublicSuiteFiles f = public_suite_files(suite_yaml, "a step calibration is fitted to");
  StepFit fit;
  fit.suite = f.name;
  fit.gpu = gpu;
  const Rows base = run_set(f, gpu, false, nullptr, jobs);
  if (static_cast<int>(base.measured.size()) < kMinStepFitRows)
    throw ConfigError(SourceLoc{suite_yaml, 0, 0}, "source",
                      f.name + " has " + std::to_string(base.measured.size()) + " fit rows on " + gpu +
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
      it->second = log_errors(run_set(f, gpu, false, &s, jobs));
    }
    return it->second;
  };
  const size_t n = base.measured.size();
  const double guess = whole_step_guess(base);
  fit.attention_fitted = static_cast<int>(n) >= kMinAttentionFitRows && attention_share_predicts(errors, n, guess);
  fit.overhead_fitted = static_cast<int>(n) >= kMinAttentionFitRows &&
                        overhead_predicts(errors, base.measured, fit.attention_fitted, guess);
  const std::vector<double> all(n, 1.0);
  double x[2];
  minimise(x, fit.overhead_fitted ? profiled(errors, base.measured, all) : errors, all, fit.attention_fitted, guess);
  fit.factors = factors_at(x);
  if (fit.overhead_fitted) fit.factors.overhead_s = best_overhead(errors(x), base.measured, all);
  const Rows held = run_set(f, gpu, true, nullptr, jobs);
  fit.fit = {static_cast<int>(base.measured.size()), geomean_abs_error(base),
             geomean_abs_error(run_set(f, gpu, false, &fit.factors, jobs))};
  fit.held_out = {static_cast<int>(held.measured.size()), geomean_abs_error(held),
                  held.measured.empty() ? 0 : geomean_abs_error(run_set(f, gpu, true, &fit.factors, jobs))};
  return fit;
}

std::string overhead_verdict(const StepFit& fit) {
  if (fit.overhead_fitted) return "fitted beside them";
  return fit.fit.rows < kMinAttentionFitRows ? "kept at 0: too few fit rows"
                                             : "kept at 0: cross-validation on the fit rows says it does not predict";
}

std::string attention_verdict(const StepFit& fit) {
  if (fit.attention_fitted) return "fitted beside the step efficiency";
  return fit.fit.rows < kMinAttentionFitRows ? "kept at 1: too few fit rows"
                                             : "kept at 1: cross-validation on the fit rows says it does not predict";
}

void write_step_calibration(std::ostream& out, const StepFit& fit, const std::string& suite_yaml) {
  char buf[1536];
  std::snprintf(buf, sizeof buf,
                "# Step calibration fitted by `dejavu calibrate --suite %s --gpu %s`:\n"
                "# the %d fit rows of %s on %s, geometric mean |error| %.1f%% -> %.1f%%;\n"
                "# its %d held-out rows, never read by the fit: %.1f%% -> %.1f%%.\n"
                "# The attention share is %s; the host overhead is %s.\n"
                "# Use it with --calibration (after any kernel calibration of the same GPU type).\n",
                suite_yaml.c_str(), fit.gpu.c_str(), fit.fit.rows, fit.suite.c_str(), fit.gpu.c_str(),
                100 * fit.fit.before, 100 * fit.fit.after, fit.held_out.rows, 100 * fit.held_out.before,
                100 * fit.held_out.after, attention_verdict(fit).c_str(), overhead_verdict(fit).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "gpu: %s\nstep_efficiency: %.4f\nattention_step_efficiency: %.4f\n", fit.gpu.c_str(),
                fit.factors.step, fit.factors.attention);
  out << buf;
  if (!fit.overhead_fitted) return;
  std::snprintf(buf, sizeof buf, "step_overhead: %.4g s\n", fit.factors.overhead_s);
  out << buf;
}

}  // namespace dejavu::tools
