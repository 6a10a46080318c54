// What `converge` and `run-horizon` write: loss curves (CSV; SVG, a panel against
// simulated time and one against steps), and a run under failures (summary, JSON).
#pragma once

#include <ostream>
#include <vector>

#include "strategies/training/convergence.h"
#include "strategies/training/horizon.h"

namespace dejavu::report {

void write_curves_csv(std::ostream& out, const std::vector<strategies::ConvergenceResult>& results);
void write_curves_svg(std::ostream& out, const std::vector<strategies::ConvergenceResult>& results, double target_loss);
void write_horizon_summary(std::ostream& out, const strategies::HorizonResult& r);
void write_horizon_json(std::ostream& out, const strategies::HorizonResult& r);

}  // namespace dejavu::report
