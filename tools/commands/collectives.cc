// `dejavu collectives`: an nccl-tests-style sweep of one collective over the first n GPUs
// of a platform, optionally against measured bus bandwidths.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "platforms/cluster.h"
#include "sim/limits.h"
#include "tools/collective_sweep.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"

namespace dejavu::tools {

namespace {

class CollectivesCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", platform_, "cluster YAML")->required();
    cmd.add_option("--op", op_, sim::collective_op_names());
    cmd.add_option("--gpus", gpus_, "GPUs taking part (the first n of the platform; default all)")
        ->check(whole_in(2, limits::kMaxGpus));
    cmd.add_option("--min", min_, "smallest size (1M, 64 MiB, ...)");
    cmd.add_option("--max", max_, "largest size");
    cmd.add_option("--factor", factor_, "size multiplier between rows")->check(number_in(1.001, 1e6));
    cmd.add_option("--algo", options_.collective_algorithm, "collective algorithm or auto");
    cmd.add_option("--engine", engine_, "engine (see `dejavu list`)");
    cmd.add_option("--collectives", options_.fidelity, "fidelity on network engines")
        ->check(CLI::IsMember({"closed", "flow", "step"}));
    cmd.add_option("--csv", csv_, "also write the rows as CSV");
    cmd.add_option("--validate", validate_, "measured bus bandwidths to compare with (CSV)");
  }

  int run() override {
    OutputSet out;
    out.add("--csv", csv_);
    check_engine(engine_);
    const platforms::Cluster cluster = platforms::load_cluster_file(platform_);
    SweepOptions o;
    if (!sim::parse_collective_op(op_, &o.op))
      throw ConfigError(SourceLoc{"--op", 0, 0}, "",
                        "unknown operation \"" + op_ + "\"; valid: " + sim::collective_op_names());
    o.gpus = gpus_ > 0 ? gpus_ : cluster.gpu_count();
    o.min_bytes = parse_message_size("--min", min_);
    o.max_bytes = parse_message_size("--max", max_);
    o.factor = factor_;
    o.algorithm = options_.collective_algorithm;
    o.engine = engine_;
    o.engine_options = options_;
    std::vector<SweepRow> rows = run_sweep(cluster, o);
    if (!validate_.empty()) attach_measurements(validate_, cluster.gpus[0].spec->name, o.gpus, rows);
    if (!csv_.empty()) out.write(csv_, [&](std::ostream& f) { write_sweep_csv(f, rows); });
    out.commit();
    std::cout << "# dejavu collectives: " << op_ << " over " << o.gpus << " GPUs of " << cluster.name << " (algorithm "
              << o.algorithm << ", " << o.engine << " engine)\n";
    write_sweep_table(std::cout, rows);
    write_validation_line(rows, cluster, o.gpus);
    return 0;
  }

 private:
  void write_validation_line(const std::vector<SweepRow>& rows, const platforms::Cluster& cluster, int gpus) const {
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
    } else if (!validate_.empty()) {
      std::cout << "# no measured row matches " << cluster.gpus[0].spec->name << " x " << gpus << "\n";
    }
  }

  std::string platform_, op_ = "all_reduce", min_ = "1M", max_ = "8G", csv_, validate_, engine_ = "analytic";
  int gpus_ = 0;
  double factor_ = 2;
  sim::EngineOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_collectives_command() { return std::make_unique<CollectivesCommand>(); }

}  // namespace dejavu::tools
