// `dejavu sweep` (every point of a sweep YAML, resumable, shardable) and `dejavu
// sweep-merge` (one CSV and a plot from a sweep's results folder).
#include <iostream>
#include <sstream>

#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/sweep.h"

namespace dejavu::tools {

namespace {

class SweepCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("sweep", file_, "sweep YAML (strategies/presets/sweeps/)")->required();
    cmd.add_option("-o,--output", options_.out_dir,
                   "results folder (one file per point; a rerun skips finished points)")
        ->required();
    cmd.add_option("--jobs", options_.jobs, "points simulated at once, each in its own process")
        ->check(whole_in(1, 256));
    cmd.add_option("--shard", shard_, "i/n: run only points with index mod n = i (Slurm arrays)");
    cmd.add_flag("!--no-progress", options_.progress, "no progress bar");
  }

  int run() override {
    const SweepSpec spec = load_sweep(file_);
    std::tie(options_.shard, options_.shards) = parse_shard(shard_);
    const SweepSummary sum = run_sweep_points(spec, options_);
    std::cout << "dejavu sweep " << spec.name << ": " << spec.points() << " points; shard " << shard_ << " has "
              << sum.total << ": " << sum.done << " simulated, " << sum.failed << " failed, " << sum.skipped
              << " already done; results in " << options_.out_dir << "\n";
    return 0;
  }

 private:
  std::string file_, shard_ = "0/1";
  SweepRunOptions options_;
};

class SweepMergeCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("results", dir_, "results folder of dejavu sweep")->required();
    cmd.add_option("-o,--output", csv_, "CSV to write")->required();
    cmd.add_option("--plot", plot_, "SVG: a heatmap over two axes, a line over one");
  }

  int run() override {
    OutputSet out;
    out.add("--output", csv_);
    out.add("--plot", plot_);
    const MergedTable t = merge_results(dir_);
    out.write(csv_, [&](std::ostream& o) { write_merged_csv(o, t); });
    if (!plot_.empty()) out.write(plot_, [&](std::ostream& o) { write_merged_svg(o, t); });
    out.commit();
    std::cout << "merged " << t.rows.size() << " points into " << csv_ << (plot_.empty() ? "" : " and " + plot_)
              << "\n";
    return 0;
  }

 private:
  std::string dir_, csv_, plot_;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command() { return std::make_unique<SweepCommand>(); }
std::unique_ptr<Command> make_sweep_merge_command() { return std::make_unique<SweepMergeCommand>(); }

}  // namespace dejavu::tools
