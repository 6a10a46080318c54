// `dejavu cluster`: several jobs on one platform at once (a jobs file), each one's step
// alone and beside the others on one engine run over the shared network; or a trace of
// arrivals scheduled over time, per placement policy, with the scenario's failures.
#include <filesystem>
#include <iostream>

#include "sim/config_node.h"
#include "sim/limits.h"
#include "strategies/cluster/placement.h"
#include "strategies/cluster/shared_run.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/platform_input.h"
#include "sim/units.h"
#include "strategies/cluster/scheduler.h"
#include "tools/report/cluster.h"
#include "tools/report/schedule.h"

namespace dejavu::tools {

namespace {

class ClusterCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", platform_, "cluster YAML")->required();
    auto* jobs =
        cmd.add_option("--jobs", jobs_, "jobs YAML: each job's workload, plan and (optionally) servers or GPUs");
    auto* trace = cmd.add_option("--trace", trace_, "job trace CSV: arrivals scheduled over time (docs/CLUSTER.md)");
    jobs->excludes(trace);
    cmd.add_option("--policy", policies_,
                   "placement policy (see `dejavu list`); with --trace, repeat it to compare policies")
        ->check(CLI::IsMember(strategies::cluster::placement_policies().names()));
    cmd.add_option("--faults", faults_, "with --trace: fault scenario YAML (failures and the recovery policy)");
    cmd.add_option("--repair", repair_, "with --trace: a failed GPU's time out of service (default 4 h)");
    cmd.add_option("--report", html_, "with --trace: write an HTML page with the policies' distributions");
    cmd.add_option("--results", results_,
                   "with --trace: keep each policy's run in this folder as it ends; a rerun takes those back");
    cmd.add_option("--seed", seed_, "seed for the random policy")->check(whole_in(0, limits::kMaxSeed));
    cmd.add_option("--steps", steps_,
                   "steps the job with the longest step runs together, the others as many as fit (default: 3 for "
                   "--jobs, 1 for --trace)")
        ->check(whole_in(1, 100));
    cmd.add_option("--engine", o_.engine, "engine (see `dejavu list`)");
    cmd.add_option("--json", json_, "write the jobs' steps alone and together as JSON");
    cmd.add_flag("--quiet", quiet_, "print no summary");
    add_engine_options(cmd, o_.options);
    add_calibrations(cmd, calibrations_);
  }

  int run() override {
    if (jobs_.empty() == trace_.empty())
      throw ConfigError(SourceLoc{"--jobs", 0, 0}, "", "give a jobs file (--jobs) or a trace (--trace)");
    check_engine(o_.engine);
    o_.seed = static_cast<uint64_t>(seed_);
    if (!policies_.empty()) o_.policy = policies_.front();
    const platforms::Cluster cluster = load_platform(platform_, calibrations_);
    return trace_.empty() ? run_jobs(cluster) : run_trace(cluster);
  }

 private:
  int run_trace(const platforms::Cluster& cluster) {
    OutputSet out;
    out.add("--json", json_);
    out.add("--report", html_);
    const strategies::cluster::Trace trace = strategies::cluster::load_trace_file(trace_, cluster);
    strategies::FaultScenario scenario;
    strategies::cluster::ScheduleOptions so;
    if (!faults_.empty()) {
      scenario = strategies::load_fault_scenario_file(faults_, cluster);
      so.faults = &scenario;
    }
    if (!repair_.empty())
      so.repair_s = quantity_option("--repair", repair_, units::Dimension::Time, 0, limits::kMaxTime);
    so.seed = o_.seed;
    if (steps_ > 0) so.run.steps = steps_;
    so.run.engine = o_.engine;
    so.run.options = o_.options;
    std::vector<strategies::cluster::ScheduleResult> runs;
    const std::string inputs = trace_ + " | " + platform_ + " | " + faults_ + " | " + repair_ + " | " +
                               std::to_string(seed_) + " | " + o_.engine + " | " + o_.options.collective_algorithm;
    for (const std::string& policy : policies_.empty() ? std::vector<std::string>{"first-fit"} : policies_) {
      so.policy = policy;
      const std::string kept = (std::filesystem::path(results_) / (policy + ".json")).string();
      if (!results_.empty() && std::filesystem::exists(kept)) {
        runs.push_back(report::read_schedule_result(read_input_file(kept), kept, inputs));
        continue;
      }
      runs.push_back(strategies::cluster::run_schedule(trace, cluster, so));
      if (results_.empty()) continue;
      OutputSet one;  // kept as soon as it ends: a killed run keeps the policies done
      one.add_folder("--results", results_, {policy + ".json"});
      one.write(kept, [&](std::ostream& o) { report::write_schedule_result(o, runs.back(), inputs); });
      one.commit();
    }
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { report::write_schedule_json(o, runs); });
    if (!html_.empty()) out.write(html_, [&](std::ostream& o) { report::write_schedule_html(o, runs); });
    out.commit();
    if (!quiet_) report::write_schedule_summary(std::cout, runs);
    return 0;
  }

  int run_jobs(const platforms::Cluster& cluster) {
    if (steps_ > 0) o_.steps = steps_;
    for (const auto& [option, value] :
         {std::pair{"--faults", faults_}, {"--repair", repair_}, {"--report", html_}, {"--results", results_}})
      if (!value.empty()) throw ConfigError(SourceLoc{option, 0, 0}, "", "is for --trace; a jobs file runs one step");
    if (policies_.size() > 1)
      throw ConfigError(SourceLoc{"--policy", 0, 0}, "", "one policy places a jobs file; several compare on --trace");
    OutputSet out;
    out.add("--json", json_);
    const strategies::cluster::JobsFile jobs = strategies::cluster::load_jobs_file(jobs_, cluster);
    const strategies::cluster::SharedRun run = strategies::cluster::run_shared(jobs, cluster, o_);
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { report::write_cluster_json(o, run); });
    out.commit();
    if (!quiet_) report::write_cluster_summary(std::cout, run, cluster);
    return 0;
  }

  std::string platform_, jobs_, trace_, json_, faults_, repair_, html_, results_;
  std::vector<std::string> policies_;
  std::vector<std::string> calibrations_;
  strategies::cluster::SharedRunOptions o_;
  long long seed_ = 1;
  int steps_ = 0;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_cluster_command() { return std::make_unique<ClusterCommand>(); }

}  // namespace dejavu::tools
