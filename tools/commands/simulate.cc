// `dejavu simulate`: one training iteration, its summary, and the report as JSON, a
// Chrome trace, an HTML page or SVG plots; with --faults, against the fault-free run.
#include <iostream>
#include <memory>
#include <sstream>

#include "strategies/faults.h"
#include "strategies/simulate.h"
#include "tools/commands/command.h"
#include "tools/validation_residuals.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/platform_input.h"
#include "tools/report/chrome_trace.h"
#include "tools/report/html.h"
#include "tools/report/iteration.h"
#include "workloads/chakra/chakra_trace.h"

namespace dejavu::tools {

namespace {

class SimulateCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    add_simulation_inputs(cmd, in_, true);
    cmd.add_option("--json", json_, "write the report as JSON");
    cmd.add_option("--trace", trace_, "write a Chrome/Perfetto trace");
    cmd.add_option("--report", report_, "write a self-contained HTML report (timeline, memory, links)");
    cmd.add_option("--plot", plot_dir_, "write the report's views as SVG files into this folder");
    cmd.add_option("--faults", faults_, "fault scenario YAML (stragglers, degraded links, failures)");
  }

  int run() override {
    OutputSet out;  // every output path checked before any work
    out.add("--json", json_);
    out.add("--trace", trace_);
    out.add("--report", report_);
    out.add_folder("--plot", plot_dir_, report::report_svg_names());
    check_engine(in_.engine);
    platforms::Cluster cluster;
    std::unique_ptr<strategies::FaultReport> faults;
    strategies::Simulation s = simulate(cluster, faults);
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { report::write_json(o, s.report, faults.get()); });
    if (!trace_.empty())
      out.write(trace_, [&](std::ostream& o) { report::write_chrome_trace(o, s.job.graph, s.result); });
    if (!report_.empty()) out.write(report_, [&](std::ostream& o) { report::write_html_report(o, s, cluster); });
    if (!plot_dir_.empty()) report::write_report_svgs(out, plot_dir_, s, cluster);
    out.commit();
    if (!in_.quiet) {
      report::write_summary(std::cout, s.report);
      if (faults) report::write_fault_summary(std::cout, *faults);
    }
    return 0;
  }

 private:
  strategies::Simulation simulate(platforms::Cluster& cluster, std::unique_ptr<strategies::FaultReport>& faults) const {
    if (in_.workload.rfind("trace:", 0) == 0) {  // a Chakra trace carries its own plan
      cluster = load_platform(in_.platform, in_.calibrations);
      return strategies::simulate_trace(workloads::load_chakra_trace(in_.workload.substr(6)), cluster, in_.engine,
                                        in_.options);
    }
    if (in_.plan.empty())
      throw ConfigError(SourceLoc{"--plan", 0, 0}, "",
                        "missing; a plan YAML is required unless --workload is trace:<prefix>");
    const LoadedInputs loaded = load_inputs(in_);
    cluster = loaded.cluster;
    if (faults_.empty()) {
      strategies::Simulation s = strategies::simulate(loaded.model, cluster, loaded.plan, in_.engine, in_.options);
      s.report.validation = band_of(loaded.model, cluster, loaded.plan, s.report);
      return s;
    }
    const strategies::FaultScenario scenario = strategies::load_fault_scenario_file(faults_, cluster);
    strategies::FaultSimulation fs =
        strategies::simulate_with_faults(loaded.model, cluster, loaded.plan, scenario, in_.engine, in_.options);
    faults = std::make_unique<strategies::FaultReport>(fs.faults);
    fs.simulation.report.validation = band_of(loaded.model, cluster, loaded.plan, fs.simulation.report);
    return std::move(fs.simulation);
  }

  SimulationInputs in_;
  std::string json_, trace_, report_, plot_dir_, faults_;
};

}  // namespace

std::unique_ptr<Command> make_simulate_command() { return std::make_unique<SimulateCommand>(); }

}  // namespace dejavu::tools
