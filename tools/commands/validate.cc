// `dejavu validate`: a validation suite's predictions against its measurements.
#include <iostream>
#include <vector>

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
  }

  int run() override {
    OutputSet out;
    out.add("--residuals", residuals_);
    std::vector<ValidationReport> reports;
    for (const std::string& suite : suites_) reports.push_back(run_validation_suite(suite, jobs_));
    if (!residuals_.empty()) out.write(residuals_, [&](std::ostream& o) { write_residuals(o, residuals_of(reports)); });
    out.commit();
    if (summary_)
      write_validation_summary(std::cout, reports);
    else
      for (const ValidationReport& r : reports) write_validation_report(std::cout, r);
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
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace dejavu::tools
