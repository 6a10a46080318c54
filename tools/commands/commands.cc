#include "tools/commands/command.h"

namespace dejavu::tools {

std::unique_ptr<Command> make_simulate_command();
std::unique_ptr<Command> make_compare_engines_command();
std::unique_ptr<Command> make_export_platform_command();
std::unique_ptr<Command> make_list_command();
std::unique_ptr<Command> make_inspect_command();
std::unique_ptr<Command> make_collectives_command();
std::unique_ptr<Command> make_run_horizon_command();
std::unique_ptr<Command> make_calibrate_command();
std::unique_ptr<Command> make_profile_fit_command();
std::unique_ptr<Command> make_sweep_command();
std::unique_ptr<Command> make_sweep_merge_command();
std::unique_ptr<Command> make_converge_command();
std::unique_ptr<Command> make_validate_command();
std::unique_ptr<Command> make_search_command();
std::unique_ptr<Command> make_cluster_command();
std::unique_ptr<Command> make_cluster_trace_command();
std::unique_ptr<Command> make_shard_command();

Registry<Command>& commands() {
  static Registry<Command> r("command");
  return r;
}

void register_commands() {
  auto& r = commands();
  if (r.has("simulate")) return;
  r.add("simulate", "simulate one training iteration", make_simulate_command);
  r.add("compare-engines", "analytic and simgrid side by side", make_compare_engines_command);
  r.add("export-platform", "write a cluster as a SimGrid platform XML", make_export_platform_command);
  r.add("list", "GPU types, engines, schedules, every registry and the presets", make_list_command);
  r.add("inspect", "parameters, FLOPs and memory of a workload", make_inspect_command);
  r.add("collectives", "nccl-tests-style sweep of one collective", make_collectives_command);
  r.add("run-horizon", "a whole training run under failures, with recovery", make_run_horizon_command);
  r.add("calibrate", "fit the kernel performance model to measurements (CSV)", make_calibrate_command);
  r.add("profile-fit", "predict unprofiled stage times from a few profiled ones", make_profile_fit_command);
  r.add("sweep", "simulate every point of a sweep YAML (resumable, shardable)", make_sweep_command);
  r.add("sweep-merge", "one CSV (and a plot) from a sweep's results folder", make_sweep_merge_command);
  r.add("converge", "time to a target loss: real training, simulated timings", make_converge_command);
  r.add("validate", "predicted against measured for a validation suite", make_validate_command);
  r.add("search", "search the best plan (grid, dp, mcmc, diff, or all)", make_search_command);
  r.add("shard", "the intra-operator sharding of one layer, solved as an ILP (GLPK)", make_shard_command);
  r.add("cluster", "several jobs on one cluster at once: each one's step alone and together", make_cluster_command);
  r.add("cluster-trace", "a job trace for cluster --trace: synthetic, or converted from a Helios log",
        make_cluster_trace_command);
}

}  // namespace dejavu::tools
