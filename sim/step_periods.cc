#include "sim/step_periods.h"

#include <algorithm>
#include <cmath>

namespace dejavu::sim {

namespace {

// Two event times one period apart agree to this (seconds): SimGrid keeps its clock to
// about 1e-9 s of work, so a period measured over many steps is far finer than that.
constexpr double kTimeTolerance_s = 1e-9;

}  // namespace

StepPeriods::StepPeriods(const Expansion& exp) : start_(exp.flows.size(), -1.0), end_(exp.flows.size(), -1.0) {
  for (const AlikeSteps& s : exp.cut) {
    Run r;
    r.steps = s;
    r.lo = s.steps / 4;
    r.hi = s.steps - 1 - s.steps / 4;
    r.pending.assign(static_cast<size_t>(s.steps), s.per_step);
    runs_.push_back(std::move(r));
  }
}

int StepPeriods::run_of(int32_t flow) const {
  for (size_t i = 0; i < runs_.size(); ++i) {
    const AlikeSteps& s = runs_[i].steps;
    if (flow >= s.first_flow && flow < s.first_flow + s.per_step * s.steps) return static_cast<int>(i);
  }
  return -1;
}

void StepPeriods::started(int32_t flow, double t) { start_[flow] = t; }

int StepPeriods::ended(int32_t flow, double t) {
  end_[flow] = t;
  const int i = run_of(flow);
  if (i < 0) return -1;
  Run& r = runs_[i];
  const int step = (flow - r.steps.first_flow) / r.steps.per_step;
  if (--r.pending[step] > 0) return -1;
  if (step == r.lo) return 2 * i;
  if (step == r.hi) return 2 * i + 1;
  return -1;
}

int StepPeriods::window_steps(int run) const { return runs_[run].hi - runs_[run].lo; }

double StepPeriods::cut_windows(int run) const {
  return static_cast<double>(runs_[run].steps.skipped) / window_steps(run);
}

// Every flow of every step in the window starts and ends one period after the same flow
// of the step before.
bool StepPeriods::periodic(const Run& r, double period) const {
  const AlikeSteps& s = r.steps;
  for (int step = r.lo + 1; step <= r.hi; ++step)
    for (int32_t k = 0; k < s.per_step; ++k) {
      const int32_t f = s.first_flow + step * s.per_step + k, g = f - s.per_step;
      if (std::abs(start_[f] - start_[g] - period) > kTimeTolerance_s) return false;
      if (std::abs(end_[f] - end_[g] - period) > kTimeTolerance_s) return false;
    }
  return true;
}

double StepPeriods::cut_time_s() const {
  double total = 0;
  for (const Run& r : runs_) {
    const AlikeSteps& s = r.steps;
    const auto last_of = [&](int step) {
      const int32_t b = s.first_flow + step * s.per_step;
      return *std::max_element(end_.begin() + b, end_.begin() + b + s.per_step);
    };
    const double period = (last_of(r.hi) - last_of(r.lo)) / (r.hi - r.lo);
    if (!(period >= 0) || !periodic(r, period)) return -1;
    total += static_cast<double>(s.skipped) * period;
  }
  return total;
}

}  // namespace dejavu::sim
