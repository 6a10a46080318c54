// What several commands share: checked numeric options (the one rule for numbers on the
// command line: a number, finite, within range, whole where it must be), the inputs of
// one simulation, and loading them.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "platforms/cluster.h"
#include "sim/engine.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::tools {

// Checks for numeric options: the text must be a number in [min, max] (whole for
// whole_in), finite; the message names the option and the range.
CLI::Validator number_in(double min, double max);
CLI::Validator whole_in(long long min, long long max);
// An option given as text with a unit ("30 min", "8 GiB"), checked the same way.
double quantity_option(const std::string& option, const std::string& text, units::Dimension dim, double min,
                       double max);

// A platform, a workload (or trace:<prefix>) and a plan, with engine options: what
// simulate, compare-engines and run-horizon take.
struct SimulationInputs {
  std::string platform, workload, plan;
  std::vector<std::string> calibrations;
  std::string engine = "analytic";
  sim::EngineOptions options;
  bool quiet = false;
};
void add_simulation_inputs(CLI::App& cmd, SimulationInputs& in, bool with_engine);
// --collective-algorithm, --collectives, --network-model, --sharing.
void add_engine_options(CLI::App& cmd, sim::EngineOptions& options);
void add_calibrations(CLI::App& cmd, std::vector<std::string>& calibrations);

struct LoadedInputs {
  platforms::Cluster cluster;
  workloads::ModelGraph model;
  strategies::Plan plan;
};
LoadedInputs load_inputs(const SimulationInputs& in);
void check_engine(const std::string& engine);

}  // namespace dejavu::tools
