// `dejavu validate`: a validation suite's predictions against its measurements.
#include <iostream>

#include "tools/commands/command.h"
#include "tools/validation_suite.h"

namespace dejavu::tools {

namespace {

class ValidateCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("suite", suite_, "suite YAML (strategies/validation/, platforms/validation/)")->required();
  }

  int run() override {
    const ValidationReport r = run_validation_suite(suite_);
    write_validation_report(std::cout, r);
    if (r.regressed()) {
      std::cerr << "dejavu: " << suite_ << ": the geometric-mean error grew past the recorded "
                << 100 * r.recorded_error << "%\n";
      return 1;
    }
    return 0;
  }

 private:
  std::string suite_;
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace dejavu::tools
