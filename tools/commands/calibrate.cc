// `dejavu calibrate`: fit the kernel performance model of one GPU type to measured kernel
// times (CSV) and write the calibration YAML `--calibration` reads.
#include <cstdio>
#include <iostream>

#include "platforms/calibration.h"
#include "sim/units.h"
#include "tools/commands/command.h"
#include "tools/output_file.h"

namespace dejavu::tools {

namespace {

void write_fit_table(std::ostream& out, const std::vector<platforms::ClassFit>& fits) {
  out << "  op class     rows  compute/memory  e_max    t_half      e_mem    launch     k_fill  error: fit    "
         "held out\n";
  char buf[256];
  for (const auto& f : fits) {
    std::snprintf(buf, sizeof buf,
                  "  %-12s %4d  %6d/%-6d  %6.3f   %-10s  %6.3f   %-9s  %6s  %9.2f%%  %5.2f%% (%d rows)\n",
                  sim::to_string(f.op_class), f.rows, f.compute_rows, f.memory_rows, f.efficiency.compute_max,
                  units::format_time(f.efficiency.half_time_s).c_str(), f.efficiency.memory,
                  units::format_time(f.efficiency.launch_s).c_str(),
                  f.shaped ? std::to_string(static_cast<int>(f.efficiency.k_fill)).c_str() : "-",
                  100 * f.train_mean_abs_error, 100 * f.heldout_mean_abs_error, f.held_out);
    out << buf;
  }
}

class CalibrateCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--gpu", gpu_, "GPU type measured (see dejavu list)")->required();
    cmd.add_option("--measurements", measurements_, "CSV: op_class,flops,bytes,dtype,seconds[,m,n,k,batch]")
        ->required();
    cmd.add_option("-o,--output", output_, "calibration YAML to write");
    cmd.add_option("--k-fill", k_fill_,
                   "fix a shaped GEMM fit's pipeline fill (reduction elements) instead of fitting it")
        ->check(CLI::Range(0.0, 1048576.0));
  }

  int run() override {
    OutputSet out;
    out.add("--output", output_);
    if (!platforms::has_gpu(gpu_))
      throw ConfigError(SourceLoc{"--gpu", 0, 0}, "", "unknown GPU \"" + gpu_ + "\"; valid: " + platforms::gpu_names());
    const auto rows = platforms::load_measurements(measurements_);
    const auto fits = platforms::fit_measurements(rows, platforms::gpu_spec(gpu_), k_fill_);
    if (!output_.empty())
      out.write(output_, [&](std::ostream& o) { platforms::write_calibration(o, gpu_, fits, measurements_); });
    out.commit();
    std::cout << "dejavu calibrate: " << rows.size() << " measurements of " << gpu_ << "\n";
    write_fit_table(std::cout, fits);
    for (const auto& f : fits)
      for (const std::string& w : f.warnings)
        std::cout << "  warning: " << sim::to_string(f.op_class) << ": " << w << "\n";
    if (!output_.empty()) std::cout << "wrote " << output_ << " (use it with --calibration)\n";
    return 0;
  }

 private:
  std::string gpu_, measurements_, output_;
  double k_fill_ = -1;
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace dejavu::tools
