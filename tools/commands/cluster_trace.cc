// `dejavu cluster-trace`: a job trace in dejavu's format (for `dejavu cluster --trace`),
// drawn from the synthetic generator's distributions or converted from a Helios log, each
// job's training from a job mix.
#include <filesystem>
#include <iostream>

#include "sim/limits.h"
#include "strategies/cluster/trace_sources.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"

namespace dejavu::tools {

namespace {

class ClusterTraceCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("-o,--output", out_, "the trace CSV to write")->required();
    cmd.add_option("--mix", mix_, "job mix YAML: what a job of so many GPUs trains")
        ->default_val(std::string(DEJAVU_SOURCE_DIR) + "/strategies/presets/cluster/job-mix.yaml");
    cmd.add_option("--helios", helios_, "convert SenseTime Helios' cluster_log.csv instead of generating");
    cmd.add_option("--jobs", s_.jobs, "synthetic: jobs to draw")->check(whole_in(1, 10000000));
    cmd.add_option("--days", days_, "synthetic: arrivals over this many days; helios: keep this many days")
        ->check(number_in(1e-6, 1e5));
    cmd.add_option("--gpus", s_.cluster_gpus, "synthetic: the cluster's GPUs (no job is larger; the load is of them)")
        ->check(whole_in(1, limits::kMaxGpus));
    cmd.add_option("--load", s_.load, "synthetic: the jobs' GPU-hours over the cluster's in those days")
        ->check(number_in(1e-3, 100));
    cmd.add_option("--seed", seed_, "synthetic: seed")->check(whole_in(0, limits::kMaxSeed));
    cmd.add_option("--max-gpus", h_.max_gpus, "helios: drop jobs larger than this")
        ->check(whole_in(1, limits::kMaxGpus));
    cmd.add_option("--max-jobs", h_.max_jobs, "helios: keep the first this many jobs")->check(whole_in(1, 10000000));
  }

  int run() override {
    OutputSet out;
    const std::filesystem::path target(out_);
    // The CSV's folder is made at commit if it is missing (one level, as --plot does).
    out.add_folder("--output", target.parent_path().string(), {target.filename().string()});
    if (target.parent_path().empty()) out.add("--output", out_);
    const strategies::cluster::JobMix mix = strategies::cluster::load_job_mix_file(mix_);
    std::vector<strategies::cluster::TraceRow> rows;
    if (!helios_.empty()) {
      if (days_ > 0) h_.days = days_;
      rows = strategies::cluster::helios_trace(helios_, h_);
    } else {
      if (days_ > 0) s_.days = days_;
      s_.seed = static_cast<uint64_t>(seed_);
      rows = strategies::cluster::synthetic_trace(s_);
    }
    const std::string dir = std::filesystem::path(out_).parent_path().string();
    out.write(out_, [&](std::ostream& o) { strategies::cluster::write_trace_csv(o, rows, mix, dir); });
    out.commit();
    std::cout << "dejavu: " << rows.size() << " jobs written to " << out_ << "\n";
    return 0;
  }

 private:
  std::string out_, mix_, helios_;
  strategies::cluster::SyntheticSpec s_;
  strategies::cluster::HeliosSpec h_;
  double days_ = 0;
  long long seed_ = 1;
};

}  // namespace

std::unique_ptr<Command> make_cluster_trace_command() { return std::make_unique<ClusterTraceCommand>(); }

}  // namespace dejavu::tools
