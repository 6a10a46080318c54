// The `dejavu` command line. Every error in the input becomes one line on stderr and exit
// code 2; nothing is written unless the whole run succeeded.
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "platforms/cluster.h"
#include "sim/chrome_trace.h"
#include "sim/collective.h"
#include "strategies/builtins.h"
#include "strategies/schedules/schedule.h"
#include "strategies/simulate.h"
#include "tools/output_file.h"
#include "workloads/generator.h"

#ifndef DEJAVU_SOURCE_DIR
#define DEJAVU_SOURCE_DIR "."
#endif

namespace {

using namespace dejavu;

struct SimulateArgs {
  std::string platform, workload, plan, json, trace;
  std::string engine = "analytic";
  sim::EngineOptions options;
  bool quiet = false;
};

int run_simulate(const SimulateArgs& a) {
  const platforms::Cluster cluster = platforms::load_cluster_file(a.platform);
  const workloads::ModelGraph model = workloads::load_workload_file(a.workload);
  const strategies::Plan plan = strategies::load_plan_file(a.plan);
  if (!sim::engines().has(a.engine))
    throw ConfigError(SourceLoc{"--engine", 0, 0}, "", "unknown engine \"" + a.engine +
                                                           "\"; valid: " + sim::engines().names_joined());
  const strategies::Simulation s = strategies::simulate(model, cluster, plan, a.engine, a.options);
  if (!a.json.empty())
    tools::write_file_atomically(a.json, [&](std::ostream& o) { strategies::write_json(o, s.report); });
  if (!a.trace.empty())
    tools::write_file_atomically(a.trace, [&](std::ostream& o) {
      sim::write_chrome_trace(o, s.job.graph, s.result);
    });
  if (!a.quiet) strategies::write_summary(std::cout, s.report);
  return 0;
}

void list_presets(const std::string& folder) {
  const std::filesystem::path dir = std::filesystem::path(DEJAVU_SOURCE_DIR) / folder / "presets";
  std::set<std::string> names;  // sorted: the listing is deterministic
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") names.insert((std::filesystem::path(folder) / "presets" / e.path().filename()).string());
  for (const auto& n : names) std::cout << "  " << n << "\n";
}

template <class R>
void list_registry(const char* title, const R& registry) {
  std::cout << title << ":\n";
  for (const auto& [name, entry] : registry.entries())
    std::cout << "  " << name << std::string(name.size() < 14 ? 14 - name.size() : 1, ' ')
              << entry.description << "\n";
}

std::string tflops(double flops) {
  if (flops <= 0) return "-";
  std::ostringstream s;
  s << flops / 1e12;
  return s.str();
}

int run_list() {
  std::cout << "GPU types:\n";
  for (const auto& g : platforms::gpu_catalog())
    std::cout << "  " << g.name << std::string(16 - std::min<size_t>(15, g.name.size()), ' ')
              << "TFLOPS bf16 " << tflops(g.peak_bf16) << ", fp16 " << tflops(g.peak_fp16)
              << ", fp32 " << tflops(g.peak_fp32) << "; " << g.memory_bytes / (1 << 30)
              << " GiB, HBM " << units::format_rate(g.memory_bandwidth_Bps) << "\n";
  list_registry("engines", sim::engines());
  list_registry("collective algorithms", sim::collective_algorithms());
  list_registry("pipeline schedules", strategies::schedules());
  list_registry("workload kinds", workloads::generators());
  std::cout << "platform presets:\n";
  list_presets("platforms");
  std::cout << "workload presets:\n";
  list_presets("workloads");
  std::cout << "plan presets:\n";
  list_presets("strategies");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sim::register_builtins();
  workloads::register_builtins();
  strategies::register_builtins();

  CLI::App app{"dejavu: a discrete-event simulator of distributed deep-learning training"};
  app.require_subcommand(1);
  SimulateArgs sa;
  CLI::App* simulate = app.add_subcommand("simulate", "simulate one training iteration");
  simulate->add_option("--platform", sa.platform, "cluster YAML")->required();
  simulate->add_option("--workload", sa.workload, "model YAML")->required();
  simulate->add_option("--plan", sa.plan, "parallelization plan YAML")->required();
  simulate->add_option("--json", sa.json, "write the report as JSON");
  simulate->add_option("--trace", sa.trace, "write a Chrome/Perfetto trace");
  simulate->add_option("--engine", sa.engine, "engine (see `dejavu list`)");
  simulate->add_option("--collective-algorithm", sa.options.collective_algorithm, "collective algorithm");
  simulate->add_option("--collectives", sa.options.fidelity, "collective fidelity on network engines")
      ->check(CLI::IsMember({"closed", "flow", "step"}));
  simulate->add_option("--network-model", sa.options.network_model,
                       "simgrid: exact (links mean their YAML), lv08 or smpi (SimGrid's calibrated)")
      ->check(CLI::IsMember({"exact", "lv08", "smpi"}));
  simulate->add_option("--sharing", sa.options.sharing, "simgrid: max-min or fair-bottleneck")
      ->check(CLI::IsMember({"max-min", "fair-bottleneck"}));
  simulate->add_flag("--quiet", sa.quiet, "print no summary");
  CLI::App* list = app.add_subcommand("list", "GPU types, engines, schedules and presets");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dejavu: " << e.what() << " (see dejavu --help)\n";
    return 2;
  }
  try {
    if (simulate->parsed()) return run_simulate(sa);
    if (list->parsed()) return run_list();
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dejavu: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
