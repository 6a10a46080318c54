#include "tools/step_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/error.h"
#include "tools/public_training.h"
#include "tools/validation_suite.h"

namespace dejavu::tools {

namespace {

struct Rows {
  std::vector<double> measured, predicted;
};

Rows run_set(const PublicSuiteFiles& f, const std::string& gpu, bool held_out, double step_efficiency) {
  PublicOptions o;
  o.calibrations = f.calibrations;
  o.gpu = gpu;
  o.fit_only = !held_out;
  o.step_efficiency = step_efficiency;
  o.precision = f.precision;
  Rows rows;
  for (const PublicRun& r : run_public_training(f.measurements, f.source, f.platforms, o).runs)
    if (r.held_out == held_out) {
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

double squared_log_error(const Rows& r) {
  double sum = 0;
  for (size_t i = 0; i < r.measured.size(); ++i) sum += std::pow(std::log(r.predicted[i] / r.measured[i]), 2);
  return sum;
}

// The step efficiency of the rows' measured steps taken whole: what a pure-compute step
// would need. Kernels are part of a step, so the fitted value lies below it when runs are
// slower than predicted (above it when faster).
double whole_step_guess(const Rows& r) {
  double log_sum = 0;
  for (size_t i = 0; i < r.measured.size(); ++i) log_sum += std::log(r.predicted[i] / r.measured[i]);
  return std::exp(log_sum / r.measured.size());
}

// The range calibrations accept (platforms/calibration.cc).
constexpr double kMinStep = 0.05, kMaxStep = 1.5;

// The x in [lo, hi] minimising cost(x), to 1e-3, returned as exp(x).
template <typename Cost>
double golden_section(double lo, double hi, Cost&& cost) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double ca = cost(a), cb = cost(b);
  while (hi - lo > 1e-3) {
    if (ca < cb) {
      hi = b, b = a, cb = ca, a = hi - g * (hi - lo), ca = cost(a);
    } else {
      lo = a, a = b, ca = cb, b = lo + g * (hi - lo), cb = cost(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

}  // namespace

StepFit fit_step_efficiency(const std::string& suite_yaml, const std::string& gpu) {
  const PublicSuiteFiles f = public_suite_files(suite_yaml);
  StepFit fit;
  fit.suite = f.name;
  fit.gpu = gpu;
  const Rows base = run_set(f, gpu, false, 0);
  if (static_cast<int>(base.measured.size()) < kMinStepFitRows)
    throw ConfigError(SourceLoc{suite_yaml, 0, 0}, "source",
                      f.name + " has " + std::to_string(base.measured.size()) + " fit rows on " + gpu +
                          " that dejavu runs; a step calibration needs at least " + std::to_string(kMinStepFitRows));
  // Golden-section search over log(step efficiency), bracketing the whole-step guess; a
  // result at an edge of the bracket moves the bracket past that edge (within 0.05 to 1.5).
  const double guess = whole_step_guess(base);
  double lo = std::clamp(guess * (guess < 1 ? 0.4 : 0.9), kMinStep, kMaxStep);
  double hi = std::clamp(guess * (guess < 1 ? 1.1 : 2.5), kMinStep, kMaxStep);
  auto cost = [&](double x) {
    ++fit.evaluations;
    return squared_log_error(run_set(f, gpu, false, std::exp(x)));
  };
  for (int moves = 0;; ++moves) {
    fit.step_efficiency = golden_section(std::log(lo), std::log(hi), cost);
    const bool at_lo = fit.step_efficiency < lo * 1.01 && lo > kMinStep;
    const bool at_hi = fit.step_efficiency > hi * 0.99 && hi < kMaxStep;
    if ((!at_lo && !at_hi) || moves == 3) break;
    const double edge = at_lo ? lo : hi;
    lo = std::clamp(edge * (at_lo ? 0.4 : 0.9), kMinStep, kMaxStep);
    hi = std::clamp(edge * (at_lo ? 1.1 : 2.5), kMinStep, kMaxStep);
  }
  const Rows held = run_set(f, gpu, true, 0);
  fit.fit = {static_cast<int>(base.measured.size()), geomean_abs_error(base),
             geomean_abs_error(run_set(f, gpu, false, fit.step_efficiency))};
  fit.held_out = {static_cast<int>(held.measured.size()), geomean_abs_error(held),
                  held.measured.empty() ? 0 : geomean_abs_error(run_set(f, gpu, true, fit.step_efficiency))};
  return fit;
}

void write_step_calibration(std::ostream& out, const StepFit& fit, const std::string& suite_yaml) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "# Step calibration fitted by `dejavu calibrate --suite %s --gpu %s`:\n"
                "# the %d fit rows of %s on %s, geometric mean |error| %.1f%% -> %.1f%%;\n"
                "# its %d held-out rows, never read by the fit: %.1f%% -> %.1f%%.\n"
                "# Use it with --calibration (after any kernel calibration of the same GPU type).\n",
                suite_yaml.c_str(), fit.gpu.c_str(), fit.fit.rows, fit.suite.c_str(), fit.gpu.c_str(),
                100 * fit.fit.before, 100 * fit.fit.after, fit.held_out.rows, 100 * fit.held_out.before,
                100 * fit.held_out.after);
  out << buf;
  std::snprintf(buf, sizeof buf, "gpu: %s\nstep_efficiency: %.4f\n", fit.gpu.c_str(), fit.step_efficiency);
  out << buf;
}

}  // namespace dejavu::tools
