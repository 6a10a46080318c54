// `dejavu converge`: time to a target loss for one plan or several (--compare), with the
// worker timings simulated on the platform (faults included) and the training real.
#pragma once

#include <string>
#include <vector>

#include "strategies/training/convergence.h"

namespace dejavu::tools {

struct ConvergeArgs {
  std::string platform, workload, plan, faults, compare, csv, plot, data = "synthetic:classes=10,dim=64";
  std::vector<std::string> calibrations;
  strategies::ConvergenceConfig config;
  std::string rule;                 // "" : from the plan
  std::string engine = "analytic";  // what times the workers' steps
};

struct ConvergeRow {
  std::string name, rule;
  double step_s = 0;
  strategies::ConvergenceResult result;
};

std::vector<ConvergeRow> run_converge(const ConvergeArgs& args);
void write_converge_table(std::ostream& out, const std::vector<ConvergeRow>& rows, double target);

}  // namespace dejavu::tools
