// `dejavu cluster`: several jobs on one platform at once (a jobs file), each one's step
// alone and beside the others on one engine run over the shared network.
#include <iostream>

#include "sim/limits.h"
#include "strategies/cluster/placement.h"
#include "strategies/cluster/shared_run.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/platform_input.h"
#include "tools/report/cluster.h"

namespace dejavu::tools {

namespace {

class ClusterCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", platform_, "cluster YAML")->required();
    cmd.add_option("--jobs", jobs_, "jobs YAML: each job's workload, plan and (optionally) servers or GPUs")
        ->required();
    cmd.add_option("--policy", o_.policy, "placement policy for the jobs the file does not place (see `dejavu list`)")
        ->check(CLI::IsMember(strategies::cluster::placement_policies().names()));
    cmd.add_option("--seed", seed_, "seed for the random policy")->check(whole_in(0, limits::kMaxSeed));
    cmd.add_option("--steps", o_.steps,
                   "steps the job with the longest step runs together (the others: as many as fit)")
        ->check(whole_in(1, 100));
    cmd.add_option("--engine", o_.engine, "engine (see `dejavu list`)");
    cmd.add_option("--json", json_, "write the jobs' steps alone and together as JSON");
    cmd.add_flag("--quiet", quiet_, "print no summary");
    add_engine_options(cmd, o_.options);
    add_calibrations(cmd, calibrations_);
  }

  int run() override {
    OutputSet out;
    out.add("--json", json_);
    check_engine(o_.engine);
    o_.seed = static_cast<uint64_t>(seed_);
    const platforms::Cluster cluster = load_platform(platform_, calibrations_);
    const strategies::cluster::JobsFile jobs = strategies::cluster::load_jobs_file(jobs_, cluster);
    const strategies::cluster::SharedRun run = strategies::cluster::run_shared(jobs, cluster, o_);
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { report::write_cluster_json(o, run); });
    out.commit();
    if (!quiet_) report::write_cluster_summary(std::cout, run, cluster);
    return 0;
  }

 private:
  std::string platform_, jobs_, json_;
  std::vector<std::string> calibrations_;
  strategies::cluster::SharedRunOptions o_;
  long long seed_ = 1;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_cluster_command() { return std::make_unique<ClusterCommand>(); }

}  // namespace dejavu::tools
