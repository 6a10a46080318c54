// A step calibration: the factor by which a software stack's kernels inside a training step
// run slower than the same kernels measured alone (platforms::Efficiency::step), and the
// share its attention kernels reach beside that (Efficiency::attention_step: frameworks differ
// most in their attention kernel, e.g. llm-foundry's Triton one), fitted on a public suite's
// fit rows of one GPU type and reported on its held-out rows, which the fit never reads.
//
// The fit minimises the sum of |log(predicted / measured)| over the fit rows (an L1 fit, so one
// odd row does not pull both factors) by damped Gauss-Newton with weights 1 / |error|
// (iteratively reweighted least squares) in the two factors' logs; rows whose attention share
// differs, as sequence lengths do, tell the factors apart. Each evaluation simulates every
// fit row. The factors scale
// kernels only, not collectives, so a step's share of exposed communication keeps the price
// the NCCL suite validated.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace dejavu::tools {

// Geometric mean |predicted / measured - 1| over a set's rows, before (the suite's own
// calibrations) and after the fitted step efficiency.
struct SetFit {
  int rows = 0;
  double before = 0, after = 0;
};

// What a step calibration fits (platforms::Efficiency::step, attention_step and
// step_overhead_s).
struct StepFactors {
  double step = 1;        // every kernel's time divided by it
  double attention = 1;   // attention kernels' (unfused, FlashAttention, Triton) by it as well
  double overhead_s = 0;  // host seconds an iteration, after the optimizer step
};

// One suite of a pooled fit: its fit and held-out rows' errors.
struct SuiteFit {
  std::string suite;
  SetFit fit, held_out;
};

struct StepFit {
  std::string suite, gpu;  // suite: the suites' names, joined by ", "; gpu: a GPU type or any
  bool pooled = false;     // several suites or gpu any: the step efficiency alone, each suite weighing alike
  StepFactors factors;
  bool attention_fitted = false;  // false: the attention share kept at 1
  bool overhead_fitted = false;   // false: no host overhead (0 s)
  int evaluations = 0;            // simulations of the fit set
  SetFit fit, held_out;
  std::vector<SuiteFit> per_suite;  // a pool's suites, each on its own (empty for one suite)
};

// At least kMinStepFitRows fit rows on `gpu` (a ConfigError otherwise).
constexpr int kMinStepFitRows = 2;
// Fewer fit rows than this fit the step efficiency alone (two factors on two rows would fit
// anything); with more, the attention share is fitted too only if two-fold cross-validation
// on the fit rows says it predicts rows it was not fitted to better than the step alone.
constexpr int kMinAttentionFitRows = 8;
// The host overhead an iteration (seconds added to each row's step, so it tells short steps
// from long ones, which a factor on kernels cannot) is fitted with as many fit rows, after the
// attention share is settled, and kept only if the same cross-validation says it predicts.
// It costs no simulation: for given factors the best overhead is the one of the rows'
// shortfalls (measured less predicted) that minimises the L1 cost.
constexpr double kMaxStepOverhead = 60;  // seconds, the bound calibrations accept
// Each evaluation runs the fit rows `jobs` at a time, each in a forked process (the same fit
// as one at a time).
StepFit fit_step_efficiency(const std::string& suite_yaml, const std::string& gpu, int jobs = 1);
// A typical step calibration: fitted to the fit rows of several suites (several frameworks), on
// `gpu` or on every GPU type (platforms::kAnyGpu). It fits the step efficiency alone (the
// frameworks' attention kernels and host overheads differ), each suite's rows weighing
// 1 / their count so that each suite counts as much as another; one suite on one GPU type is
// the fit above.
StepFit fit_step_efficiency(const std::vector<std::string>& suite_yamls, const std::string& gpu, int jobs = 1);

// Leave-one-suite-out: each suite's rows (fit and held-out alike, all unseen) with the step
// efficiency fitted to the other suites, before and after: how a framework no fit read fares.
struct LeftOut {
  std::string suite;
  double step = 1;  // the others' step efficiency
  SetFit rows;
};
std::vector<LeftOut> leave_one_out(const std::vector<std::string>& suite_yamls, const std::string& gpu, int jobs = 1);

// Whether the attention share was fitted, and why not: "fitted beside the step efficiency",
// or "kept at 1: " and the reason (too few fit rows, or cross-validation).
std::string attention_verdict(const StepFit& fit);
// The same for the host overhead: "fitted beside them" or "kept at 0: " and the reason.
std::string overhead_verdict(const StepFit& fit);

// The calibration YAML `--calibration` reads: the GPU type, its step efficiency, attention share
// and host overhead, with how they were fitted in comments.
void write_step_calibration(std::ostream& out, const StepFit& fit, const std::string& suite_yaml);
void write_step_calibration(std::ostream& out, const StepFit& fit, const std::vector<std::string>& suite_yamls);

}  // namespace dejavu::tools
