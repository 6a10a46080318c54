// `dejavu converge`: time to a target loss, real training with simulated step times, for
// one plan or several (--compare).
#include <iostream>

#include "sim/engine.h"
#include "sim/limits.h"
#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/rules/update_rule.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/converge.h"
#include "tools/output_file.h"
#include "tools/report/training.h"

namespace dejavu::tools {

namespace {

class ConvergeCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    auto& c = a_.config;
    cmd.add_option("--platform", a_.platform, "cluster YAML")->required();
    cmd.add_option("--workload", a_.workload, "model YAML whose simulated step sets the clock")->required();
    cmd.add_option("--plan", a_.plan, "plan YAML (its dp is the number of workers; sync topology, compression)");
    cmd.add_option("--compare", a_.compare, "YAML listing strategies to compare (strategies/presets/convergence/)");
    cmd.add_option("--model", c.model, "logistic | mlp")->check(CLI::IsMember({"logistic", "mlp"}));
    cmd.add_option("--data", a_.data, "synthetic:classes=10,dim=64,samples=512,separation=1,skew=0");
    cmd.add_option("--target-loss", c.target_loss, "validation loss to reach")->check(number_in(0, 1e6));
    cmd.add_option("--rule", a_.rule, "update rule (default: from the plan's sync; see `dejavu list`)")
        ->check(CLI::IsMember(strategies::convergence::update_rules().names()));
    cmd.add_option("--aggregator", c.aggregator, "how gradients combine (see `dejavu list`)")
        ->check(CLI::IsMember(strategies::convergence::aggregators().names()));
    cmd.add_option("--trim", c.trim, "trimmed/krum/zeno: how many workers may be bad")->check(whole_in(0, 1 << 16));
    cmd.add_option("--staleness", c.staleness, "ps-async bound")->check(whole_in(1, 1 << 20));
    cmd.add_option("--gossip", c.gossip_topology, "gossip partners: random (the plan's peers) or ring")
        ->check(CLI::IsMember({"random", "ring"}));
    cmd.add_option("--delay", c.delay, "delayed averaging: steps")->check(whole_in(1, 1 << 20));
    cmd.add_option("--lr", c.learning_rate, "learning rate")->check(number_in(1e-9, 1e3));
    cmd.add_option("--batch", c.batch, "samples per worker per step")->check(whole_in(1, 1000000));
    cmd.add_option("--max-steps", c.max_steps, "give up after this many steps")->check(whole_in(1, 10000000));
    cmd.add_option("--seed", c.seed, "data, initialisation, minibatches")->check(whole_in(0, limits::kMaxSeed));
    cmd.add_option("--init-candidates", c.init_candidates, "parallel random initialisation: seeded starts probed")
        ->check(whole_in(1, 1 << 16));
    cmd.add_option("--probe-steps", c.probe_steps, "steps each initialisation is probed")->check(whole_in(1, 1000000));
    cmd.add_option("--keep", c.keep, "initialisations kept for a second probe")->check(whole_in(1, 1 << 16));
    cmd.add_option("--resample", c.resample, "second probe: perturbations of the best, noise x the weights' RMS")
        ->check(number_in(0, 1e3));
    cmd.add_option("--faults", a_.faults,
                   "fault scenario: stragglers, fail-stops and their recovery, Byzantine workers");
    cmd.add_option("--csv", a_.csv, "loss against time and steps, per strategy");
    cmd.add_option("--plot", a_.plot, "SVG of loss against simulated time");
    add_calibrations(cmd, a_.calibrations);
    cmd.add_option("--engine", a_.engine, "engine timing the steps (see `dejavu list`)")
        ->check(CLI::IsMember(sim::engines().names()));
  }

  int run() override {
    OutputSet out;
    out.add("--csv", a_.csv);
    out.add("--plot", a_.plot);
    const std::vector<ConvergeRow> rows = run_converge(a_);
    std::vector<strategies::ConvergenceResult> results;
    for (const auto& r : rows) results.push_back(r.result);
    if (!a_.csv.empty()) out.write(a_.csv, [&](std::ostream& o) { report::write_curves_csv(o, results); });
    if (!a_.plot.empty())
      out.write(a_.plot, [&](std::ostream& o) { report::write_curves_svg(o, results, a_.config.target_loss); });
    out.commit();
    write_converge_table(std::cout, rows, a_.config.target_loss);
    return 0;
  }

 private:
  ConvergeArgs a_;
};

}  // namespace

std::unique_ptr<Command> make_converge_command() { return std::make_unique<ConvergeCommand>(); }

}  // namespace dejavu::tools
