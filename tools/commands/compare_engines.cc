// `dejavu compare-engines`: the same inputs on the analytic and the SimGrid engine, side
// by side per simulated device.
#include <cstdio>
#include <iostream>

#include "sim/units.h"
#include "strategies/simulate.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/report/iteration.h"

namespace dejavu::tools {

namespace {

double percent(double b, double base) { return base > 0 ? 100.0 * (b - base) / base : 0.0; }

void write_side_by_side(std::ostream& out, const strategies::Report& x, const strategies::Report& y,
                        const std::string& fidelity) {
  char buf[256];
  out << "dejavu: " << x.workload << " on " << x.platform << ", plan " << x.plan << ": analytic vs simgrid ("
      << fidelity << " collectives)\n";
  std::snprintf(buf, sizeof buf, "  iteration time   %-12s %-12s %+.3f%%\n",
                units::format_time(x.iteration_time_s).c_str(), units::format_time(y.iteration_time_s).c_str(),
                percent(y.iteration_time_s, x.iteration_time_s));
  out << buf;
  std::snprintf(buf, sizeof buf, "  MFU              %-12.1f %-12.1f (%%)\n", 100 * x.mfu, 100 * y.mfu);
  out << buf;
  std::snprintf(buf, sizeof buf, "  busiest link     %s %.1f%% | %s %.1f%%\n", x.busiest_link.name.c_str(),
                100 * x.busiest_link.utilization, y.busiest_link.name.c_str(), 100 * y.busiest_link.utilization);
  out << buf;
  out << "  device (stage)         exposed comm: analytic   simgrid      idle: analytic   simgrid\n";
  for (size_t d = 0; d < x.simulated.size() && d < y.simulated.size(); ++d) {
    const auto& p = x.simulated[d];
    const auto& q = y.simulated[d];
    std::snprintf(buf, sizeof buf, "  %-16s (%d)  %21s %9s %18s %9s\n", p.name.c_str(), p.stage,
                  units::format_time(p.exposed_communication_s).c_str(),
                  units::format_time(q.exposed_communication_s).c_str(), units::format_time(p.idle_s).c_str(),
                  units::format_time(q.idle_s).c_str());
    out << buf;
  }
}

class CompareEnginesCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    add_simulation_inputs(cmd, in_, false);
    cmd.add_option("--json", json_, "write both reports as JSON");
  }

  int run() override {
    OutputSet out;
    out.add("--json", json_);
    const LoadedInputs loaded = load_inputs(in_);
    const auto an = strategies::simulate(loaded.model, loaded.cluster, loaded.plan, "analytic", in_.options);
    const auto sg = strategies::simulate(loaded.model, loaded.cluster, loaded.plan, "simgrid", in_.options);
    if (!json_.empty())
      out.write(json_, [&](std::ostream& o) {
        o << "{\"analytic\":\n";
        report::write_json(o, an.report);
        o << ",\"simgrid\":\n";
        report::write_json(o, sg.report);
        o << "}\n";
      });
    out.commit();
    if (!in_.quiet) write_side_by_side(std::cout, an.report, sg.report, in_.options.fidelity);
    return 0;
  }

 private:
  SimulationInputs in_;
  std::string json_;
};

}  // namespace

std::unique_ptr<Command> make_compare_engines_command() { return std::make_unique<CompareEnginesCommand>(); }

}  // namespace dejavu::tools
