// `dejavu calibrate`: fit the kernel performance model of one GPU type to measured kernel
// times (CSV), or a software stack's step efficiency on that GPU type to a public suite's
// measured steps (--suite), or a typical one to several suites' (--suite repeated, --gpu any),
// and write the calibration YAML `--calibration` reads.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "platforms/calibration.h"
#include "sim/units.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/step_calibration.h"

namespace dejavu::tools {

namespace {

// A pooled fit's suites, each on its own (geometric mean |error|, uncalibrated -> calibrated).
void write_suite_table(const StepFit& fit) {
  if (fit.per_suite.empty()) return;
  std::printf("  suite                              fit rows  before   after   held-out rows  before   after\n");
  for (const SuiteFit& s : fit.per_suite)
    std::printf("  %-34s %8d  %5.1f%%  %5.1f%%   %13d  %5.1f%%  %5.1f%%\n", s.suite.c_str(), s.fit.rows,
                100 * s.fit.before, 100 * s.fit.after, s.held_out.rows, 100 * s.held_out.before,
                100 * s.held_out.after);
}

// Each suite judged by the step efficiency fitted to the others alone.
void write_left_out(const std::vector<LeftOut>& rows) {
  std::printf("  left out (the others fitted; every row of it unseen)  step_efficiency  rows  before   after\n");
  for (const LeftOut& l : rows)
    std::printf("  %-52s  %15.4f  %4d  %5.1f%%  %5.1f%%\n", l.suite.c_str(), l.step, l.rows.rows, 100 * l.rows.before,
                100 * l.rows.after);
}

void write_fit_table(std::ostream& out, const std::vector<platforms::ClassFit>& fits) {
  out << "  op class         rows  compute/memory  e_max    t_half      e_mem    launch     k_fill  error: fit    "
         "held out\n";
  char buf[256];
  for (const auto& f : fits) {
    std::snprintf(buf, sizeof buf,
                  "  %-16s %4d  %6d/%-6d  %6.3f   %-10s  %6.3f   %-9s  %6s  %9.2f%%  %5.2f%% (%d rows)\n",
                  platforms::fit_name(f), f.rows, f.compute_rows, f.memory_rows, f.efficiency.compute_max,
                  units::format_time(f.efficiency.half_time_s).c_str(), f.efficiency.memory,
                  units::format_time(f.efficiency.launch_s).c_str(),
                  f.shaped ? std::to_string(static_cast<int>(f.efficiency.k_fill)).c_str() : "-",
                  100 * f.train_mean_abs_error, 100 * f.heldout_mean_abs_error, f.held_out);
    out << buf;
    if (f.efficiency.causal_extra < 0) continue;
    std::snprintf(buf, sizeof buf,
                  "    by head size: a score's softmax costs %.1f head-size terms; a causal mask's passes x%.3f\n",
                  f.efficiency.k_fill, 1 + f.efficiency.causal_extra);
    out << buf;
  }
}

class CalibrateCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--gpu", gpu_, "GPU type measured (see dejavu list); with --suite also any (every GPU type)")
        ->required();
    auto* m = cmd.add_option("--measurements", measurements_,
                             "CSV: op_class,flops,bytes,dtype,seconds[,m,n,k,batch][,head_dim,causal]");
    auto* s = cmd.add_option("--suite", suite_,
                             "a public validation suite (strategies/validation/public/): fit the step efficiency of "
                             "its framework on --gpu to the suite's fit rows; repeated, a typical one to several "
                             "frameworks' (each suite weighing alike)");
    m->excludes(s);
    cmd.add_option("-o,--output", output_, "calibration YAML to write");
    cmd.add_option("--k-fill", k_fill_,
                   "fix a shaped GEMM fit's pipeline fill (reduction elements) instead of fitting it")
        ->check(CLI::Range(0.0, 1048576.0));
    cmd.add_flag("--leave-one-out", leave_one_out_,
                 "--suite repeated: also fit to all suites but one, for each, and report that one's rows");
    cmd.add_option("--jobs", jobs_, "--suite: rows simulated at once, each in its own process (the same fit)")
        ->check(whole_in(1, 256));
  }

  int run() override {
    if (!platforms::has_gpu(gpu_) && (gpu_ != platforms::kAnyGpu || suite_.empty()))
      throw ConfigError(
          SourceLoc{"--gpu", 0, 0}, "",
          "unknown GPU \"" + gpu_ + "\"; valid: " + platforms::gpu_names() + (suite_.empty() ? "" : ", any"));
    if (suite_.empty() == measurements_.empty())
      throw ConfigError(SourceLoc{"dejavu calibrate", 0, 0}, "", "give --measurements (kernels) or --suite (steps)");
    if (leave_one_out_ && suite_.size() < 3)
      throw ConfigError(SourceLoc{"--leave-one-out", 0, 0}, "",
                        "needs --suite three times or more (each left out, the others fitted)");
    return suite_.empty() ? run_kernels() : run_steps();
  }

 private:
  int run_steps() {
    OutputSet out;
    out.add("--output", output_);
    const StepFit fit = fit_step_efficiency(suite_, gpu_, jobs_);
    if (!output_.empty()) out.write(output_, [&](std::ostream& o) { write_step_calibration(o, fit, suite_); });
    out.commit();
    std::printf("dejavu calibrate: step efficiencies of %s on %s, fitted to %s %d fit rows (%d simulations of them)\n",
                fit.suite.c_str(), gpu_ == platforms::kAnyGpu ? "every GPU type" : gpu_.c_str(),
                fit.pooled ? "their" : "its", fit.fit.rows, fit.evaluations);
    std::printf("  step_efficiency %.4f: kernels in a step at %.1f%% of their speed measured alone\n", fit.factors.step,
                100 * fit.factors.step);
    if (fit.attention_fitted)
      std::printf("  attention_step_efficiency %.4f: attention kernels at %.1f%% of that again\n",
                  fit.factors.attention, 100 * fit.factors.attention);
    else
      std::printf("  attention_step_efficiency %s\n", attention_verdict(fit).c_str());
    if (fit.overhead_fitted)
      std::printf("  step_overhead %.4g s: host time an iteration past its kernels\n", fit.factors.overhead_s);
    else
      std::printf("  step_overhead %s\n", overhead_verdict(fit).c_str());
    std::printf("  set        rows  geomean |error|: uncalibrated  calibrated\n");
    std::printf("  fit        %4d  %28.1f%%  %9.1f%%\n", fit.fit.rows, 100 * fit.fit.before, 100 * fit.fit.after);
    std::printf("  held-out   %4d  %28.1f%%  %9.1f%%  (never read by the fit)\n", fit.held_out.rows,
                100 * fit.held_out.before, 100 * fit.held_out.after);
    write_suite_table(fit);
    if (leave_one_out_) write_left_out(leave_one_out(suite_, gpu_, jobs_));
    if (!output_.empty()) std::printf("wrote %s (use it with --calibration)\n", output_.c_str());
    return 0;
  }

  int run_kernels() {
    OutputSet out;
    out.add("--output", output_);
    const auto rows = platforms::load_measurements(measurements_);
    // A pipeline fill is a shaped GEMM fit's; without shapes it would be silently unused.
    if (k_fill_ >= 0 && std::none_of(rows.begin(), rows.end(), [](const platforms::Measurement& m) {
          return m.op_class == sim::OpClass::Gemm && m.shaped;
        }))
      throw ConfigError(SourceLoc{measurements_, 0, 0}, "",
                        "--k-fill applies to GEMM rows with their shape (m, n, k columns); this file has none");
    platforms::check_dtypes(rows, platforms::gpu_spec(gpu_));
    const auto fits = platforms::fit_measurements(rows, platforms::gpu_spec(gpu_), k_fill_);
    if (!output_.empty())
      out.write(output_, [&](std::ostream& o) { platforms::write_calibration(o, gpu_, fits, measurements_); });
    out.commit();
    std::cout << "dejavu calibrate: " << rows.size() << " measurements of " << gpu_ << "\n";
    write_fit_table(std::cout, fits);
    for (const auto& f : fits)
      for (const std::string& w : f.warnings) std::cout << "  warning: " << platforms::fit_name(f) << ": " << w << "\n";
    if (!output_.empty()) std::cout << "wrote " << output_ << " (use it with --calibration)\n";
    return 0;
  }

  std::string gpu_, measurements_, output_;
  std::vector<std::string> suite_;
  bool leave_one_out_ = false;
  double k_fill_ = -1;
  int jobs_ = 1;
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace dejavu::tools
