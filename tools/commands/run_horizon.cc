// `dejavu run-horizon`: a whole training run under the scenario's failures, recovered by
// checkpoint/restart, hot spares or elastic re-planning.
#include <iostream>

#include "sim/limits.h"
#include "sim/units.h"
#include "strategies/recovery/recovery_policy.h"
#include "strategies/training/elastic.h"
#include "strategies/training/horizon.h"
#include "strategies/lowering.h"
#include "strategies/simulate.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/report/iteration.h"
#include "tools/report/training.h"

namespace dejavu::tools {

namespace {

class RunHorizonCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    add_simulation_inputs(cmd, in_, false);
    cmd.add_option("--json", json_, "write the iteration's report as JSON");
    cmd.add_option("--engine", in_.engine, "engine for the iteration time (see `dejavu list`)");
    cmd.add_option("--faults", faults_, "fault scenario YAML (random_failures, gpu_fail, recovery)")->required();
    cmd.add_option("--iterations", iterations_, "iterations to train")
        ->required()
        ->check(whole_in(1, 1000000000000000LL));
    cmd.add_option("--policy", policy_, "recovery policy (default: the scenario's; see `dejavu list`)")
        ->check(CLI::IsMember(strategies::recovery_policies().names()));
    cmd.add_option("--spares", spares_, "hot spare GPUs (policy spares)")->check(whole_in(0, limits::kMaxGpus));
    cmd.add_option("--checkpoint-interval", interval_, "e.g. 30 min (default: the scenario's, else the best)");
    cmd.add_option("--horizon-json", horizon_json_, "write the run's results as JSON");
  }

  int run() override {
    OutputSet out;
    out.add("--json", json_);
    out.add("--horizon-json", horizon_json_);
    const LoadedInputs loaded = load_inputs(in_);
    strategies::FaultScenario scenario = strategies::load_fault_scenario_file(faults_, loaded.cluster);
    if (!policy_.empty()) scenario.recovery.policy = policy_;
    if (spares_ >= 0) scenario.recovery.spares = spares_;
    if (!interval_.empty())
      scenario.recovery.interval_s =
          quantity_option("--checkpoint-interval", interval_, units::Dimension::Time, 1e-3, limits::kMaxTime);
    const strategies::Simulation s =
        strategies::simulate(loaded.model, loaded.cluster, loaded.plan, in_.engine, in_.options);
    if (s.report.stopped) throw ModelError("the iteration itself cannot finish: " + s.report.stop_cause);
    strategies::HorizonInputs hi;
    hi.iteration_s = s.report.iteration_time_s;
    hi.iterations = iterations_;
    hi.gpus = loaded.cluster.gpu_count();
    const strategies::ModelStateBytes state = strategies::model_state_per_param(loaded.model.dtype, 0, 1);
    hi.checkpoint_bytes = loaded.model.parameter_count() * (state.weights + state.optimizer);  // not the gradients
    hi.storage_Bps = loaded.cluster.storage_bandwidth_Bps;
    hi.scenario = scenario;
    hi.gpus_per_server = loaded.cluster.groups.back().gpus_per_server;
    strategies::ElasticPlanner elastic(loaded.model, loaded.cluster, loaded.plan);
    hi.elastic_plan = [&](int lost) { return elastic.after_losing(lost); };
    const strategies::HorizonResult r = strategies::run_horizon(hi);
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { report::write_json(o, s.report); });
    if (!horizon_json_.empty()) out.write(horizon_json_, [&](std::ostream& o) { report::write_horizon_json(o, r); });
    out.commit();
    if (!in_.quiet) {
      std::cout << "dejavu: " << s.report.workload << " on " << s.report.platform << ", plan " << s.report.plan << ": "
                << units::format_time(hi.iteration_s) << " per iteration\n";
      report::write_horizon_summary(std::cout, r);
    }
    return 0;
  }

 private:
  SimulationInputs in_;
  std::string json_, faults_, policy_, interval_, horizon_json_;
  long long iterations_ = 0;
  int spares_ = -1;
};

}  // namespace

std::unique_ptr<Command> make_run_horizon_command() { return std::make_unique<RunHorizonCommand>(); }

}  // namespace dejavu::tools
