// `dejavu validate`: a validation suite's predictions against its measurements.
#include <iostream>
#include <string>
#include <vector>

#include "sim/error.h"

#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/validation_suite.h"

namespace dejavu::tools {

namespace {

class ValidateCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("suite", suites_, "suite YAMLs (strategies/validation/, platforms/validation/)")->required();
    cmd.add_flag("--summary", summary_, "one table of every suite's fit and held-out errors, without the rows");
    cmd.add_option("--residuals", residuals_,
                   "CSV of every step-time row (what ran, predicted, measured): simulate's error bars come from "
                   "strategies/validation/residuals.csv");
    cmd.add_option("--jobs", jobs_,
                   "a public suite's rows simulated at once, each in its own process (the same report)")
        ->check(whole_in(1, 256));
    CLI::Option* row =
        cmd.add_option("--row", row_, "one row of a public suite, by row_id (the number that starts each row)");
    cmd.add_option("--export", export_,
                   "a folder to write the --row's platform, workload, plan and calibration to, the files "
                   "`dejavu simulate` reruns it from")
        ->needs(row);
  }

  int run() override {
    if (!row_.empty() && suites_.size() != 1)
      throw ConfigError(SourceLoc{"--row", 0, 0}, "",
                        "picks a row of one suite; got " + std::to_string(suites_.size()) + " suites");
    OutputSet out;  // every path checked before any row runs
    out.add("--residuals", residuals_);
    out.add_folder("--export", export_, {"platform.yaml", "workload.yaml", "plan.yaml", "calibration.yaml"});
    const RowExport exported = export_.empty() ? RowExport{} : export_validation_row(suites_[0], row_);
    std::vector<ValidationReport> reports;
    for (const std::string& suite : suites_)
      reports.push_back(run_validation_suite(suite, jobs_, row_, export_.empty() ? nullptr : &exported.run));
    if (!residuals_.empty()) out.write(residuals_, [&](std::ostream& o) { write_residuals(o, residuals_of(reports)); });
    for (const auto& [name, text] : exported.files)
      out.write(export_ + "/" + name, [&, &text = text](std::ostream& o) { o << text; });
    out.commit();
    if (summary_)
      write_validation_summary(std::cout, reports);
    else
      for (const ValidationReport& r : reports) write_validation_report(std::cout, r);
    if (!export_.empty()) write_export_note(exported);
    int status = 0;
    for (size_t i = 0; i < reports.size(); ++i)
      if (reports[i].regressed()) {
        std::cerr << "dejavu: " << suites_[i] << ": the geometric-mean error grew past the recorded "
                  << 100 * reports[i].recorded_error << "%\n";
        status = 1;
      }
    return status;
  }

 private:
  std::vector<std::string> suites_;
  bool summary_ = false;
  std::string residuals_;
  int jobs_ = 1;
  std::string row_, export_;

  // What was written and the simulate command that reads it back.
  void write_export_note(const RowExport& e) const {
    std::cout << "wrote " << export_ << "/:";
    for (const auto& [name, text] : e.files) std::cout << " " << name;
    std::cout << "\nrerun it (" << e.run.predicted_s << " s predicted): dejavu simulate --platform " << export_
              << "/platform.yaml --workload " << export_ << "/workload.yaml --plan " << export_ << "/plan.yaml";
    for (const auto& [name, text] : e.files)
      if (name == "calibration.yaml") std::cout << " --calibration " << export_ << "/calibration.yaml";
    std::cout << "\n";
  }
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace dejavu::tools
