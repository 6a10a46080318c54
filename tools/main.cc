// The `dejavu` command line. Every error in the input becomes one line on stderr and exit
// code 2; nothing is written unless the whole run succeeded.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "platforms/cluster.h"
#include "platforms/simgrid_xml.h"
#include "sim/chrome_trace.h"
#include "sim/collective.h"
#include "strategies/builtins.h"
#include "strategies/schedules/schedule.h"
#include "strategies/simulate.h"
#include "tools/collective_sweep.h"
#include "tools/output_file.h"
#include "tools/plan_search.h"
#include "tools/platform_input.h"
#include "tools/validation_suite.h"
#include "tools/profile_fit.h"
#include "tools/sweep.h"
#include "tools/converge.h"
#include "tools/html_report.h"
#include "platforms/calibration.h"
#include "strategies/horizon.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"
#include "workloads/chakra/chakra_trace.h"
#include "workloads/generator.h"
#include "workloads/inspect.h"

#ifndef DEJAVU_SOURCE_DIR
#define DEJAVU_SOURCE_DIR "."
#endif

namespace {

using namespace dejavu;

struct SimulateArgs {
  std::string platform, workload, plan, json, trace, faults, report, plot_dir;
  std::vector<std::string> calibrations;
  std::string engine = "analytic";
  sim::EngineOptions options;
  bool quiet = false;
};

struct Inputs {
  platforms::Cluster cluster;
  workloads::ModelGraph model;
  strategies::Plan plan;
};

Inputs load_inputs(const SimulateArgs& a) {
  if (a.plan.empty()) throw ConfigError(SourceLoc{"--plan", 0, 0}, "", "missing; a plan YAML is required");
  return {tools::load_platform(a.platform, a.calibrations), workloads::load_workload_file(a.workload),
          strategies::load_plan_file(a.plan)};
}

int run_simulate(const SimulateArgs& a) {
  if (!sim::engines().has(a.engine))
    throw ConfigError(SourceLoc{"--engine", 0, 0}, "", "unknown engine \"" + a.engine +
                                                           "\"; valid: " + sim::engines().names_joined());
  strategies::Simulation s;
  platforms::Cluster cluster;
  std::unique_ptr<strategies::FaultReport> faults;
  if (a.workload.rfind("trace:", 0) == 0) {  // a Chakra trace carries its own plan
    cluster = tools::load_platform(a.platform, a.calibrations);
    s = strategies::simulate_trace(workloads::load_chakra_trace(a.workload.substr(6)), cluster, a.engine, a.options);
  } else {
    if (a.plan.empty()) throw ConfigError(SourceLoc{"--plan", 0, 0}, "", "missing; a plan YAML is required unless --workload is trace:<prefix>");
    const Inputs in = load_inputs(a);
    cluster = in.cluster;
    if (!a.faults.empty()) {
      const strategies::FaultScenario scenario = strategies::load_fault_scenario_file(a.faults, in.cluster);
      strategies::FaultSimulation fs = strategies::simulate_with_faults(in.model, in.cluster, in.plan, scenario, a.engine, a.options);
      std::ostringstream fj;
      strategies::write_fault_json(fj, fs.faults);
      fs.simulation.report.faults_json = fj.str();
      s = std::move(fs.simulation);
      faults = std::make_unique<strategies::FaultReport>(fs.faults);
    } else {
      s = strategies::simulate(in.model, in.cluster, in.plan, a.engine, a.options);
    }
  }
  // Files first, each whole or not at all; the summary last.
  if (!a.json.empty())
    tools::write_file_atomically(a.json, [&](std::ostream& o) { strategies::write_json(o, s.report); });
  if (!a.trace.empty())
    tools::write_file_atomically(a.trace, [&](std::ostream& o) { sim::write_chrome_trace(o, s.job.graph, s.result); });
  if (!a.report.empty())
    tools::write_file_atomically(a.report, [&](std::ostream& o) { tools::write_html_report(o, s, cluster); });
  if (!a.plot_dir.empty()) tools::write_report_svgs(a.plot_dir, s, cluster);
  if (!a.quiet) {
    strategies::write_summary(std::cout, s.report);
    if (faults) strategies::write_fault_summary(std::cout, *faults);
  }
  return 0;
}

// Both engines on the same inputs, side by side per simulated device.
int run_compare(const SimulateArgs& a) {
  const Inputs in = load_inputs(a);
  const strategies::Simulation an = strategies::simulate(in.model, in.cluster, in.plan, "analytic", a.options);
  const strategies::Simulation sg = strategies::simulate(in.model, in.cluster, in.plan, "simgrid", a.options);
  const strategies::Report& x = an.report;
  const strategies::Report& y = sg.report;
  if (!a.json.empty())
    tools::write_file_atomically(a.json, [&](std::ostream& o) {
      o << "{\"analytic\":\n";
      strategies::write_json(o, x);
      o << ",\"simgrid\":\n";
      strategies::write_json(o, y);
      o << "}\n";
    });
  if (a.quiet) return 0;
  auto pct = [](double b, double base) { return base > 0 ? 100.0 * (b - base) / base : 0.0; };
  char buf[256];
  std::cout << "dejavu: " << x.workload << " on " << x.platform << ", plan " << x.plan
            << ": analytic vs simgrid (" << a.options.fidelity << " collectives)\n";
  std::snprintf(buf, sizeof buf, "  iteration time   %-12s %-12s %+.3f%%\n",
                units::format_time(x.iteration_time_s).c_str(),
                units::format_time(y.iteration_time_s).c_str(), pct(y.iteration_time_s, x.iteration_time_s));
  std::cout << buf;
  std::snprintf(buf, sizeof buf, "  MFU              %-12.1f %-12.1f (%%)\n", 100 * x.mfu, 100 * y.mfu);
  std::cout << buf;
  std::snprintf(buf, sizeof buf, "  busiest link     %s %.1f%% | %s %.1f%%\n", x.busiest_link.name.c_str(),
                100 * x.busiest_link.utilization, y.busiest_link.name.c_str(), 100 * y.busiest_link.utilization);
  std::cout << buf;
  std::cout << "  device (stage)         exposed comm: analytic   simgrid      idle: analytic   simgrid\n";
  for (size_t d = 0; d < x.simulated.size() && d < y.simulated.size(); ++d) {
    const auto& p = x.simulated[d];
    const auto& q = y.simulated[d];
    std::snprintf(buf, sizeof buf, "  %-16s (%d)  %21s %9s %18s %9s\n", p.name.c_str(), p.stage,
                  units::format_time(p.exposed_communication_s).c_str(),
                  units::format_time(q.exposed_communication_s).c_str(), units::format_time(p.idle_s).c_str(),
                  units::format_time(q.idle_s).c_str());
    std::cout << buf;
  }
  return 0;
}

int run_search_command(const tools::SearchArgs& a, bool quiet) {
  const tools::SearchRun run = tools::run_search(a);
  const auto* best = run.best();
  if (!a.output.empty() && best)
    tools::write_file_atomically(a.output, [&](std::ostream& o) {
      strategies::search::write_plan_yaml(o, best->plan,
                                          "found by dejavu search (" + a.algo + ") for " + run.workload + " on " +
                                              run.platform + ": " + units::format_time(best->score.iteration_time_s) +
                                              " per iteration");
    });
  if (!a.json.empty()) tools::write_file_atomically(a.json, [&](std::ostream& o) { tools::write_search_json(o, run); });
  if (!a.report.empty()) tools::write_file_atomically(a.report, [&](std::ostream& o) { tools::write_search_html(o, run); });
  if (!quiet) tools::write_search_table(std::cout, run);
  if (!best) {
    std::cerr << "dejavu: no plan of the search space fits in memory on " << run.platform << "\n";
    return 1;
  }
  return 0;
}

struct HorizonArgs {
  std::string faults, policy, interval, json;
  long iterations = 0;
  int spares = -1;
};

int run_horizon_command(const SimulateArgs& a, const HorizonArgs& h) {
  const Inputs in = load_inputs(a);
  strategies::FaultScenario scenario = strategies::load_fault_scenario_file(h.faults, in.cluster);
  if (!h.policy.empty()) scenario.recovery.policy = h.policy;
  if (h.spares >= 0) scenario.recovery.spares = h.spares;
  if (!h.interval.empty()) {
    try {
      scenario.recovery.interval_s = units::parse_time(h.interval);
    } catch (const Error& e) {
      throw ConfigError(SourceLoc{"--checkpoint-interval", 0, 0}, "", std::string(e.what()) + " (e.g. 30 min)");
    }
    if (scenario.recovery.interval_s <= 0)
      throw ConfigError(SourceLoc{"--checkpoint-interval", 0, 0}, "", "expected a positive time, e.g. 30 min");
  }
  if (h.iterations <= 0) throw ConfigError(SourceLoc{"--iterations", 0, 0}, "", "expected a positive number of iterations");
  const strategies::Simulation s = strategies::simulate(in.model, in.cluster, in.plan, a.engine, a.options);
  strategies::HorizonInputs hi;
  hi.iteration_s = s.report.iteration_time_s;
  hi.iterations = h.iterations;
  hi.gpus = in.cluster.gpu_count();
  const strategies::ModelStateBytes state = strategies::model_state_per_param(in.model.dtype, 0, 1);
  hi.checkpoint_bytes = in.model.parameter_count() * (state.weights + state.optimizer);  // not the gradients
  hi.storage_Bps = in.cluster.storage_bandwidth_Bps;
  hi.scenario = scenario;
  hi.gpus_per_server = in.cluster.groups.back().gpus_per_server;
  // Elastic: of the servers left, the most on which the plan's shape (tp, pp, schedule,
  // sequence parallelism) takes the global batch with some data-parallel degree; there the
  // grid search re-chooses microbatch, recomputation and ZeRO stage. Cached per server count.
  std::map<int, std::pair<double, int>> by_servers;
  const platforms::Cluster full = tools::load_platform(a.platform, a.calibrations);
  hi.elastic_plan = [&](int lost) -> std::pair<double, int> {
    for (int servers = full.server_count() - lost; servers >= 1; --servers) {
      if (auto it = by_servers.find(servers); it != by_servers.end()) {
        if (it->second.first > 0) return it->second;
        continue;
      }
      std::pair<double, int>& answer = by_servers[servers];
      answer = {-1.0, 0};
      platforms::Cluster smaller = full;
      for (int k = full.server_count() - servers; k > 0; --k) {
        auto g = std::find_if(smaller.groups.rbegin(), smaller.groups.rend(), [](const auto& x) { return x.count > 0; });
        --g->count;
      }
      smaller.groups.erase(std::remove_if(smaller.groups.begin(), smaller.groups.end(), [](const auto& x) { return x.count == 0; }),
                           smaller.groups.end());
      smaller.network = sim::Network{};
      platforms::build_network(smaller);
      const strategies::search::Problem problem{&in.model, &smaller, in.plan.global_batch_size};
      strategies::search::Space space = strategies::search::default_space(problem);
      space.tp = {in.plan.tp};
      space.pp = {in.plan.pp};
      space.schedules = {in.plan.schedule};
      space.chunks = {in.plan.virtual_stages};
      space.sequence_parallel = {in.plan.sequence_parallel};
      const std::vector<strategies::Plan> plans = strategies::search::enumerate(problem, space);
      if (plans.empty()) continue;  // the batch does not divide over these servers
      strategies::search::SimulationEvaluator evaluator(problem);
      double best = -1;
      for (const auto& p : plans) {
        const auto score = evaluator.evaluate(p);
        if (score.cost() < std::numeric_limits<double>::infinity() && (best < 0 || score.cost() < best)) best = score.cost();
      }
      if (best > 0) {
        answer = {best, smaller.gpu_count()};
        return answer;
      }
    }
    return {-1.0, 0};
  };
  const strategies::HorizonResult r = strategies::run_horizon(hi);
  if (!h.json.empty()) tools::write_file_atomically(h.json, [&](std::ostream& o) { strategies::write_horizon_json(o, r); });
  if (!a.quiet) {
    std::cout << "dejavu: " << s.report.workload << " on " << s.report.platform << ", plan " << s.report.plan << ": "
              << units::format_time(hi.iteration_s) << " per iteration\n";
    strategies::write_horizon_summary(std::cout, r);
  }
  return 0;
}

int run_calibrate(const std::string& gpu, const std::string& measurements, const std::string& output) {
  if (!platforms::has_gpu(gpu))
    throw ConfigError(SourceLoc{"--gpu", 0, 0}, "", "unknown GPU \"" + gpu + "\"; valid: " + platforms::gpu_names());
  const auto rows = platforms::load_measurements(measurements);
  const auto fits = platforms::fit_measurements(rows, platforms::gpu_spec(gpu));
  if (!output.empty())
    tools::write_file_atomically(output, [&](std::ostream& o) { platforms::write_calibration(o, gpu, fits, measurements); });
  std::cout << "dejavu calibrate: " << rows.size() << " measurements of " << gpu << "\n";
  std::cout << "  op class     rows  compute/memory  e_max    t_half      e_mem    launch     error (held out)\n";
  char buf[256];
  for (const auto& f : fits) {
    std::snprintf(buf, sizeof buf, "  %-12s %4d  %6d/%-6d  %6.3f   %-10s  %6.3f   %-9s  %5.2f%% (%d rows)\n",
                  sim::to_string(f.op_class), f.rows, f.compute_rows, f.memory_rows, f.efficiency.compute_max,
                  units::format_time(f.efficiency.half_time_s).c_str(), f.efficiency.memory,
                  units::format_time(f.efficiency.launch_s).c_str(), 100 * f.heldout_mean_abs_error, f.held_out);
    std::cout << buf;
  }
  if (!output.empty()) std::cout << "wrote " << output << " (use it with --calibration)\n";
  return 0;
}

int run_validate(const std::string& suite) {
  const tools::ValidationReport r = tools::run_validation_suite(suite);
  tools::write_validation_report(std::cout, r);
  if (r.regressed()) {
    std::cerr << "dejavu: " << suite << ": the geometric-mean error grew past the recorded "
              << 100 * r.recorded_error << "%\n";
    return 1;
  }
  return 0;
}

int run_export(const std::string& platform, const std::string& output) {
  const platforms::Cluster cluster = platforms::load_cluster_file(platform);
  tools::write_file_atomically(output, [&](std::ostream& o) { platforms::write_simgrid_platform(o, cluster); });
  std::cout << "wrote " << output << ": " << cluster.gpu_count() << " hosts, " << cluster.network.link_count()
            << " links, " << cluster.gpu_count() * (cluster.gpu_count() - 1) << " routes\n";
  return 0;
}

struct CollectivesArgs {
  std::string platform, op = "all_reduce", min = "1M", max = "8G", csv, validate;
  int gpus = 0;
  double factor = 2;
  std::string engine = "analytic";
  sim::EngineOptions options;
};

int run_collectives(const CollectivesArgs& a) {
  const platforms::Cluster cluster = platforms::load_cluster_file(a.platform);
  tools::SweepOptions o;
  if (!sim::parse_collective_op(a.op, &o.op))
    throw ConfigError(SourceLoc{"--op", 0, 0}, "", "unknown operation \"" + a.op + "\"; valid: " +
                                                        sim::collective_op_names());
  o.gpus = a.gpus > 0 ? a.gpus : cluster.gpu_count();
  o.min_bytes = tools::parse_message_size(a.min);
  o.max_bytes = tools::parse_message_size(a.max);
  o.factor = a.factor;
  o.algorithm = a.options.collective_algorithm;
  o.engine = a.engine;
  o.engine_options = a.options;
  std::vector<tools::SweepRow> rows = tools::run_sweep(cluster, o);
  if (!a.validate.empty()) tools::attach_measurements(a.validate, cluster.gpus[0].spec->name, o.gpus, rows);
  if (!a.csv.empty())
    tools::write_file_atomically(a.csv, [&](std::ostream& out) { tools::write_sweep_csv(out, rows); });
  std::cout << "# dejavu collectives: " << a.op << " over " << o.gpus << " GPUs of " << cluster.name
            << " (algorithm " << o.algorithm << ", " << o.engine << " engine)\n";
  tools::write_sweep_table(std::cout, rows);
  double worst_large = 0;
  int measured = 0;
  for (const auto& r : rows) {
    if (!r.measured_busbw_Bps) continue;
    ++measured;
    if (r.bytes >= 16 * 1048576.0) worst_large = std::max(worst_large, std::fabs(r.error()));
  }
  if (measured > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "# %d sizes measured; largest |error| at 16 MiB and above: %.1f%%\n", measured,
                  100 * worst_large);
    std::cout << buf;
  } else if (!a.validate.empty()) {
    std::cout << "# no measured row matches " << cluster.gpus[0].spec->name << " x " << o.gpus << "\n";
  }
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
  list_registry("plan searchers", strategies::search::searchers());
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
  auto inputs = [&](CLI::App* cmd) {
    cmd->add_option("--platform", sa.platform, "cluster YAML")->required();
    cmd->add_option("--workload", sa.workload, "model YAML, or trace:<prefix> for Chakra files <prefix>.<rank>.et")->required();
    cmd->add_option("--plan", sa.plan, "parallelization plan YAML (not for trace: workloads)");
    cmd->add_option("--json", sa.json, "write the report as JSON");
    cmd->add_option("--collective-algorithm", sa.options.collective_algorithm, "collective algorithm");
    cmd->add_option("--collectives", sa.options.fidelity, "collective fidelity on network engines")
        ->check(CLI::IsMember({"closed", "flow", "step"}));
    cmd->add_option("--network-model", sa.options.network_model,
                    "simgrid: exact (links mean their YAML), lv08 or smpi (SimGrid's calibrated)")
        ->check(CLI::IsMember({"exact", "lv08", "smpi"}));
    cmd->add_option("--sharing", sa.options.sharing, "simgrid: max-min or fair-bottleneck")
        ->check(CLI::IsMember({"max-min", "fair-bottleneck"}));
    cmd->add_flag("--quiet", sa.quiet, "print no summary");
    cmd->add_option("--calibration", sa.calibrations, "calibration YAML for a GPU type (repeatable; see dejavu calibrate)");
  };
  CLI::App* simulate = app.add_subcommand("simulate", "simulate one training iteration");
  inputs(simulate);
  simulate->add_option("--trace", sa.trace, "write a Chrome/Perfetto trace");
  simulate->add_option("--engine", sa.engine, "engine (see `dejavu list`)");
  simulate->add_option("--report", sa.report, "write a self-contained HTML report (timeline, memory, links)");
  simulate->add_option("--plot", sa.plot_dir, "write the report's views as SVG files into this folder");
  simulate->add_option("--faults", sa.faults, "fault scenario YAML (stragglers, degraded links, failures)");
  CLI::App* compare = app.add_subcommand("compare-engines", "analytic and simgrid side by side");
  inputs(compare);
  std::string export_input, export_output;
  CLI::App* export_platform = app.add_subcommand("export-platform", "write a cluster as a SimGrid platform XML");
  export_platform->add_option("platform", export_input, "cluster YAML")->required();
  export_platform->add_option("-o,--output", export_output, "XML file to write")->required();
  CLI::App* list = app.add_subcommand("list", "GPU types, engines, schedules and presets");
  std::string inspect_input, inspect_dot;
  double inspect_batch = 1;
  CLI::App* inspect = app.add_subcommand("inspect", "parameters, FLOPs and memory of a workload");
  inspect->add_option("workload", inspect_input, "workload YAML")->required();
  inspect->add_option("--batch", inspect_batch, "samples per iteration, for the FLOP count");
  inspect->add_option("--dot", inspect_dot, "also write the operator graph as Graphviz DOT");
  CollectivesArgs ca;
  CLI::App* coll = app.add_subcommand("collectives", "nccl-tests-style sweep of one collective");
  coll->add_option("--platform", ca.platform, "cluster YAML")->required();
  coll->add_option("--op", ca.op, sim::collective_op_names());
  coll->add_option("--gpus", ca.gpus, "GPUs taking part (the first n of the platform; default all)");
  coll->add_option("--min", ca.min, "smallest size (1M, 64 MiB, ...)");
  coll->add_option("--max", ca.max, "largest size");
  coll->add_option("--factor", ca.factor, "size multiplier between rows");
  coll->add_option("--algo", ca.options.collective_algorithm, "collective algorithm or auto");
  coll->add_option("--engine", ca.engine, "engine (see `dejavu list`)");
  coll->add_option("--collectives", ca.options.fidelity, "fidelity on network engines")
      ->check(CLI::IsMember({"closed", "flow", "step"}));
  coll->add_option("--csv", ca.csv, "also write the rows as CSV");
  coll->add_option("--validate", ca.validate, "measured bus bandwidths to compare with (CSV)");

  HorizonArgs ha;
  CLI::App* horizon = app.add_subcommand("run-horizon", "a whole training run under failures, with recovery");
  inputs(horizon);
  horizon->add_option("--engine", sa.engine, "engine for the iteration time (see `dejavu list`)");
  horizon->add_option("--faults", ha.faults, "fault scenario YAML (random_failures, gpu_fail, recovery)")->required();
  horizon->add_option("--iterations", ha.iterations, "iterations to train")->required();
  horizon->add_option("--policy", ha.policy, "recovery: checkpoint, spares or elastic (default: the scenario's)")
      ->check(CLI::IsMember({"checkpoint", "spares", "elastic"}));
  horizon->add_option("--spares", ha.spares, "hot spare GPUs (policy spares)")->check(CLI::NonNegativeNumber);
  horizon->add_option("--checkpoint-interval", ha.interval, "e.g. 30 min (default: the scenario's, else the best)");
  horizon->add_option("--horizon-json", ha.json, "write the run's results as JSON");
  std::string calib_gpu, calib_measurements, calib_output, validate_suite;
  CLI::App* calibrate = app.add_subcommand("calibrate", "fit the kernel performance model to measurements (CSV)");
  calibrate->add_option("--gpu", calib_gpu, "GPU type measured (see dejavu list)")->required();
  calibrate->add_option("--measurements", calib_measurements, "CSV: op_class,flops,bytes,dtype,seconds")->required();
  calibrate->add_option("-o,--output", calib_output, "calibration YAML to write");
  std::string pf_measurements;
  int pf_train = 3;
  CLI::App* profile = app.add_subcommand("profile-fit", "predict unprofiled stage times from a few profiled ones");
  profile->add_option("--platform", sa.platform, "cluster YAML (its first GPU type)")->required();
  profile->add_option("--workload", sa.workload, "model YAML")->required();
  profile->add_option("--measurements", pf_measurements, "CSV: tp,micro_batch,recompute,sequence_parallel,layers,seconds")
      ->required();
  profile->add_option("--train", pf_train, "how many rows (the first) are profiled; the rest are predicted");
  profile->add_option("--calibration", sa.calibrations, "calibration YAML (repeatable)");
  std::string sweep_file, sweep_out, sweep_shard = "0/1", merge_dir, merge_csv, merge_plot;
  tools::SweepRunOptions sweep_options;
  CLI::App* sweep = app.add_subcommand("sweep", "simulate every point of a sweep YAML (resumable, shardable)");
  sweep->add_option("sweep", sweep_file, "sweep YAML (strategies/presets/sweeps/)")->required();
  sweep->add_option("-o,--output", sweep_out, "results folder (one file per point; a rerun skips finished points)")
      ->required();
  sweep->add_option("--jobs", sweep_options.jobs, "points simulated at once, each in its own process")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--shard", sweep_shard, "i/n: run only points with index mod n = i (Slurm arrays)");
  sweep->add_flag("!--no-progress", sweep_options.progress, "no progress bar");
  CLI::App* merge = app.add_subcommand("sweep-merge", "one CSV (and a plot) from a sweep's results folder");
  merge->add_option("results", merge_dir, "results folder of dejavu sweep")->required();
  merge->add_option("-o,--output", merge_csv, "CSV to write")->required();
  merge->add_option("--plot", merge_plot, "SVG: a heatmap over two axes, a line over one");
  tools::ConvergeArgs cv;
  CLI::App* converge = app.add_subcommand("converge", "time to a target loss: real training, simulated timings");
  converge->add_option("--platform", cv.platform, "cluster YAML")->required();
  converge->add_option("--workload", cv.workload, "model YAML whose simulated step sets the clock")->required();
  converge->add_option("--plan", cv.plan, "plan YAML (its dp is the number of workers; sync topology, compression)");
  converge->add_option("--compare", cv.compare, "YAML listing strategies to compare (strategies/presets/convergence/)");
  converge->add_option("--model", cv.config.model, "logistic | mlp")->check(CLI::IsMember({"logistic", "mlp"}));
  converge->add_option("--data", cv.data, "synthetic:classes=10,dim=64,samples=512,separation=1,skew=0");
  converge->add_option("--target-loss", cv.config.target_loss, "validation loss to reach");
  converge->add_option("--rule", cv.rule, "update rule (default: from the plan's sync)")
      ->check(CLI::IsMember({"sync", "ps-async", "gossip", "pipedream", "delayed"}));
  converge->add_option("--aggregator", cv.config.aggregator, "mean | median | trimmed | krum | zeno")
      ->check(CLI::IsMember({"mean", "median", "trimmed", "krum", "zeno"}));
  converge->add_option("--trim", cv.config.trim, "trimmed/krum/zeno: how many workers may be bad");
  converge->add_option("--staleness", cv.config.staleness, "ps-async bound");
  converge->add_option("--gossip", cv.config.gossip_topology, "gossip partners: random (the plan's peers) or ring")
      ->check(CLI::IsMember({"random", "ring"}));
  converge->add_option("--delay", cv.config.delay, "delayed averaging: steps");
  converge->add_option("--lr", cv.config.learning_rate, "learning rate");
  converge->add_option("--batch", cv.config.batch, "samples per worker per step");
  converge->add_option("--max-steps", cv.config.max_steps, "give up after this many steps");
  converge->add_option("--seed", cv.config.seed, "data, initialisation, minibatches");
  converge->add_option("--init-candidates", cv.config.init_candidates, "parallel random initialisation: seeded starts probed")
      ->check(CLI::PositiveNumber);
  converge->add_option("--probe-steps", cv.config.probe_steps, "steps each initialisation is probed")->check(CLI::PositiveNumber);
  converge->add_option("--keep", cv.config.keep, "initialisations kept for a second probe")->check(CLI::PositiveNumber);
  converge->add_option("--resample", cv.config.resample, "second probe: perturbations of the best, noise x the weights' RMS")
      ->check(CLI::NonNegativeNumber);
  converge->add_option("--faults", cv.faults, "fault scenario: stragglers, fail-stops and their recovery, Byzantine workers");
  converge->add_option("--csv", cv.csv, "loss against time and steps, per strategy");
  converge->add_option("--plot", cv.plot, "SVG of loss against simulated time");
  converge->add_option("--calibration", cv.calibrations, "calibration YAML (repeatable)");
  converge->add_option("--engine", cv.engine, "engine timing the steps: analytic or simgrid")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
  CLI::App* validate = app.add_subcommand("validate", "predicted against measured for a validation suite");
  validate->add_option("suite", validate_suite, "suite YAML (strategies/validation/, platforms/validation/)")->required();
  tools::SearchArgs sr;
  bool search_quiet = false;
  CLI::App* search = app.add_subcommand("search", "search the best plan (grid, dp, mcmc, diff, or all)");
  search->add_option("--platform", sr.platform, "cluster YAML")->required();
  search->add_option("--workload", sr.workload, "model YAML")->required();
  search->add_option("--algo", sr.algo, "searcher (grid, dp, mcmc, diff) or all");
  search->add_option("--global-batch", sr.global_batch, "samples per iteration (default: the workload's global_batch_size)");
  search->add_option("--budget", sr.budget, "wall-clock cap per searcher, e.g. 30s");
  search->add_option("--seed", sr.seed, "seed for mcmc and diff");
  search->add_option("--top", sr.top, "how many plans to list");
  search->add_option("--iterations", sr.iterations, "mcmc proposals / diff gradient steps");
  search->add_option("--verify", sr.verify, "re-simulate the top plans on this engine (simgrid)");
  search->add_option("--json", sr.json, "write the results as JSON");
  search->add_option("-o,--output", sr.output, "write the best plan as a plan YAML");
  search->add_option("--report", sr.report, "write the top plans of every searcher as an HTML page");
  search->add_flag("--quiet", search_quiet, "print no table");
  search->add_flag("!--no-progress", sr.progress, "no progress bar");
  search->add_option("--calibration", sr.calibrations, "calibration YAML for a GPU type (repeatable)");

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
    if (search->parsed()) return run_search_command(sr, search_quiet);
    if (horizon->parsed()) return run_horizon_command(sa, ha);
    if (calibrate->parsed()) return run_calibrate(calib_gpu, calib_measurements, calib_output);
    if (validate->parsed()) return run_validate(validate_suite);
    if (converge->parsed()) {
      const std::vector<tools::ConvergeRow> rows = tools::run_converge(cv);
      std::vector<strategies::ConvergenceResult> results;
      for (const auto& r : rows) results.push_back(r.result);
      if (!cv.csv.empty())
        tools::write_file_atomically(cv.csv, [&](std::ostream& o) { strategies::write_curves_csv(o, results); });
      if (!cv.plot.empty())
        tools::write_file_atomically(cv.plot, [&](std::ostream& o) { strategies::write_curves_svg(o, results, cv.config.target_loss); });
      tools::write_converge_table(std::cout, rows, cv.config.target_loss);
      return 0;
    }
    if (sweep->parsed()) {
      const tools::SweepSpec spec = tools::load_sweep(sweep_file);
      std::tie(sweep_options.shard, sweep_options.shards) = tools::parse_shard(sweep_shard);
      sweep_options.out_dir = sweep_out;
      const tools::SweepSummary sum = tools::run_sweep_points(spec, sweep_options);
      std::cout << "dejavu sweep " << spec.name << ": " << spec.points() << " points; shard " << sweep_shard << " has "
                << sum.total << ": " << sum.done << " simulated, " << sum.failed << " failed, " << sum.skipped
                << " already done; results in " << sweep_out << "\n";
      return 0;
    }
    if (merge->parsed()) {
      const tools::MergedTable t = tools::merge_results(merge_dir);
      std::ostringstream svg;
      if (!merge_plot.empty()) tools::write_merged_svg(svg, t);  // before any file: a bad plot writes nothing
      tools::write_file_atomically(merge_csv, [&](std::ostream& o) { tools::write_merged_csv(o, t); });
      if (!merge_plot.empty()) tools::write_file_atomically(merge_plot, [&](std::ostream& o) { o << svg.str(); });
      std::cout << "merged " << t.rows.size() << " points into " << merge_csv << (merge_plot.empty() ? "" : " and " + merge_plot)
                << "\n";
      return 0;
    }
    if (profile->parsed()) {
      const tools::ProfileFit fit = tools::fit_profiles(workloads::load_workload_file(sa.workload),
                                                        tools::load_platform(sa.platform, sa.calibrations),
                                                        tools::load_stage_measurements(pf_measurements), pf_train);
      tools::write_profile_fit(std::cout, fit);
      return 0;
    }
    if (compare->parsed()) return run_compare(sa);
    if (coll->parsed()) return run_collectives(ca);
    if (inspect->parsed()) {
      const workloads::ModelGraph model = workloads::load_workload_file(inspect_input);
      if (!inspect_dot.empty())
        tools::write_file_atomically(inspect_dot, [&](std::ostream& o) { workloads::write_dot(o, model); });
      workloads::write_inspection(std::cout, model, inspect_batch);
      return 0;
    }
    if (export_platform->parsed()) return run_export(export_input, export_output);
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dejavu: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
