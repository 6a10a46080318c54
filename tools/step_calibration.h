// A step calibration: the one factor by which a software stack's kernels inside a training
// step run slower than the same kernels measured alone (platforms::Efficiency::step), fitted
// on a public suite's fit rows of one GPU type and reported on its held-out rows, which the
// fit never reads.
//
// The fit minimises the mean squared log(predicted / measured) over the fit rows, by golden-
// section search over the step efficiency; each evaluation simulates every fit row. The
// efficiency scales kernels only, not collectives, so a step's share of exposed
// communication keeps the price the NCCL suite validated.
#pragma once

#include <ostream>
#include <string>

namespace dejavu::tools {

// Geometric mean |predicted / measured - 1| over a set's rows, before (the suite's own
// calibrations) and after the fitted step efficiency.
struct SetFit {
  int rows = 0;
  double before = 0, after = 0;
};

struct StepFit {
  std::string suite, gpu;
  double step_efficiency = 1;
  int evaluations = 0;  // simulations of the fit set
  SetFit fit, held_out;
};

// At least kMinStepFitRows fit rows on `gpu` (a ConfigError otherwise).
constexpr int kMinStepFitRows = 2;
StepFit fit_step_efficiency(const std::string& suite_yaml, const std::string& gpu);

// The calibration YAML `--calibration` reads: the GPU type and its step efficiency, with how
// it was fitted in comments.
void write_step_calibration(std::ostream& out, const StepFit& fit, const std::string& suite_yaml);

}  // namespace dejavu::tools
