#include "tools/commands/options.h"

#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/error.h"
#include "sim/registry.h"
#include "sim/units.h"
#include "strategies/plan.h"
#include "tools/platform_input.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace {
std::string shown(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}
}  // namespace

CLI::Validator number_in(double min, double max) {
  const std::string range = "a number from " + shown(min) + " to " + shown(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < min || v > max)
          return "expected " + range + ", got \"" + text.substr(0, 40) + "\"";
        return "";
      },
      range);
}

CLI::Validator whole_in(long long min, long long max) {
  const std::string range = "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
          return "expected " + range + ", got \"" + text.substr(0, 40) + "\"";
        return "";
      },
      range);
}

double quantity_option(const std::string& option, const std::string& text, units::Dimension dim, double min,
                       double max) {
  double v = 0;
  try {
    v = units::parse(text, dim);
  } catch (const units::UnitError& e) {
    throw ConfigError(SourceLoc{option, 0, 0}, "", e.what());
  }
  if (v < min || v > max)
    throw ConfigError(
        SourceLoc{option, 0, 0}, "",
        "\"" + text + "\" is out of range; expected " + shown(min) + " to " + shown(max) + " in base units");
  return v;
}

void add_calibrations(CLI::App& cmd, std::vector<std::string>& calibrations) {
  cmd.add_option(
      "--calibration", calibrations,
      "calibration YAML for a GPU type, or a framework whose shipped step calibrations apply to the "
      "platform's GPU types (nemo, megatron-bridge, ...: dejavu list), or typical (fitted across frameworks, "
      "for one without its own); repeatable");
}

void add_engine_options(CLI::App& cmd, sim::EngineOptions& options) {
  cmd.add_option("--collective-algorithm", options.collective_algorithm, "collective algorithm");
  cmd.add_option("--collectives", options.fidelity, "collective fidelity on network engines")
      ->check(CLI::IsMember({"closed", "flow", "step"}));
  cmd.add_option("--network-model", options.network_model,
                 "simgrid: exact (links mean their YAML), lv08 or smpi (SimGrid's calibrated)")
      ->check(CLI::IsMember({"exact", "lv08", "smpi"}));
  cmd.add_option("--sharing", options.sharing, "simgrid: max-min or fair-bottleneck")
      ->check(CLI::IsMember({"max-min", "fair-bottleneck"}));
}

void add_simulation_inputs(CLI::App& cmd, SimulationInputs& in, bool with_engine) {
  cmd.add_option("--platform", in.platform, "cluster YAML")->required();
  cmd.add_option("--workload", in.workload, "model YAML, or trace:<prefix> for Chakra files <prefix>.<rank>.et")
      ->required();
  cmd.add_option("--plan", in.plan, "parallelization plan YAML (not for trace: workloads)");
  add_engine_options(cmd, in.options);
  cmd.add_flag("--quiet", in.quiet, "print no summary");
  add_calibrations(cmd, in.calibrations);
  if (with_engine) cmd.add_option("--engine", in.engine, "engine (see `dejavu list`)");
}

void check_engine(const std::string& engine) {
  if (!sim::engines().has(engine))
    throw ConfigError(SourceLoc{"--engine", 0, 0}, "",
                      "unknown engine \"" + engine + "\"; valid: " + sim::engines().names_joined());
}

LoadedInputs load_inputs(const SimulationInputs& in) {
  if (in.plan.empty()) throw ConfigError(SourceLoc{"--plan", 0, 0}, "", "missing; a plan YAML is required");
  check_engine(in.engine);
  strategies::Plan plan = strategies::load_plan_file(in.plan);
  // The plan's gpu_order (and gpus) places it on the servers before anything sees their node ids.
  return {strategies::cluster_for_plan(load_platform(in.platform, in.calibrations), plan),
          strategies::model_for_plan(workloads::load_workload_file(in.workload), plan), std::move(plan)};
}

}  // namespace dejavu::tools
