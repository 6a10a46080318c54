// `dejavu profile-fit`: predict unprofiled stage configurations from a few profiled ones.
#include <iostream>

#include "sim/limits.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/platform_input.h"
#include "tools/profile_fit.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace {

class ProfileFitCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", platform_, "cluster YAML (its first GPU type)")->required();
    cmd.add_option("--workload", workload_, "model YAML")->required();
    cmd.add_option("--measurements", measurements_, "CSV: tp,micro_batch,recompute,sequence_parallel,layers,seconds")
        ->required();
    cmd.add_option("--train", train_, "how many rows (the first) are profiled; the rest are predicted")
        ->check(whole_in(1, 1 << 20));
    add_calibrations(cmd, calibrations_);
  }

  int run() override {
    const ProfileFit fit =
        fit_profiles(workloads::load_workload_file(workload_), load_platform(platform_, calibrations_),
                     load_stage_measurements(measurements_), train_);
    write_profile_fit(std::cout, fit);
    return 0;
  }

 private:
  std::string platform_, workload_, measurements_;
  std::vector<std::string> calibrations_;
  int train_ = 3;
};

}  // namespace

std::unique_ptr<Command> make_profile_fit_command() { return std::make_unique<ProfileFitCommand>(); }

}  // namespace dejavu::tools
