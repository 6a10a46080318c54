// `dejavu search`: the best plans of the search space by one searcher or all of them.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <iostream>
#include <utility>
#include <vector>

#include "platforms/gpu_catalog.h"
#include "sim/limits.h"
#include "sim/units.h"
#include "strategies/recompute_modes.h"
#include "strategies/search/space.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/plan_search.h"

namespace dejavu::tools {

namespace {

std::string cost_text(const strategies::search::Candidate& c, long steps) {
  if (c.gpu_hours <= 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, ", %s per %ld iterations on %lld GPUs", cost_cell(c).c_str(), steps, c.plan.gpus());
  return buf;
}

// --price TYPE=DOLLARS: a GPU type of the catalog and a finite price above 0.
void parse_price(const std::string& text, std::map<std::string, double>& prices) {
  const size_t eq = text.find('=');
  const std::string type = text.substr(0, eq);
  auto fail = [&](const std::string& why) {
    throw ConfigError(SourceLoc{"--price", 0, 0}, "", "\"" + text + "\": " + why);
  };
  if (eq == std::string::npos) fail("expected GPU_TYPE=DOLLARS_PER_GPU_HOUR, e.g. A100-SXM-80GB=1.8");
  if (!platforms::has_gpu(type)) fail("unknown GPU \"" + type + "\"; valid: " + platforms::gpu_names());
  char* end = nullptr;
  const std::string number = text.substr(eq + 1);
  const double price = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(price) || price <= 0 || price > 1e6)
    fail("expected a price above 0 and at most 1e6 dollars per GPU-hour after '='");
  if (!prices.emplace(type, price).second) fail("a second price for " + type);
}

class SearchCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", a_.platform, "cluster YAML")->required();
    cmd.add_option("--workload", a_.workload, "model YAML")->required();
    cmd.add_option("--algo", a_.algo, "searcher (grid, dp, mcmc, diff, bo, rl) or all");
    cmd.add_option("--global-batch", a_.global_batch,
                   "samples per iteration (default: the workload's global_batch_size)")
        ->check(whole_in(1, limits::kMaxBatch));
    cmd.add_option("--grad-dtype", a_.grad_dtype,
                   "gradients accumulated and reduced in this dtype in every plan, as the framework keeps them "
                   "(fp32: Megatron-LM's bf16 default, FSDP's reduce_dtype; default: the model's)")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
    cmd.add_option("--recompute", a_.recompute,
                   "the recomputation modes plans try, as the framework offers them, comma-separated (default "
                   "none,selective,full: Megatron's; torchtitan's: none,selective-op,full; MaxText's: "
                   "none,save-dot-except-mlpwi,save-qkv-proj,full)")
        ->delimiter(',')
        ->check(CLI::IsMember(strategies::recompute_mode_names()));
    cmd.add_option("--budget", a_.budget, "wall-clock cap per searcher, e.g. 30s");
    cmd.add_option("--seed", a_.seed, "seed for mcmc and diff")->check(whole_in(0, limits::kMaxSeed));
    cmd.add_option("--top", a_.top, "how many plans to list")->check(whole_in(1, 1000));
    cmd.add_option("--iterations", a_.iterations, "mcmc proposals / diff gradient steps")
        ->check(whole_in(1, 100000000));
    cmd.add_option("--verify", a_.verify, "re-simulate the top plans on this engine (simgrid)");
    cmd.add_option("--rerank", a_.rerank,
                   "rank the top plans with links shared, re-pricing at most this many (default 64; 0: rank "
                   "without sharing)")
        ->check(whole_in(0, 100000));
    cmd.add_option("--objective", a_.objective,
                   "rank by the iteration (time), by GPU-hours with plans on parts of the cluster too (cost), or by "
                   "the time to a target loss, update-rule variants included (time-to-accuracy)")
        ->check(CLI::IsMember({"time", "cost", "time-to-accuracy"}));
    auto only = [&](const char* objective, CLI::Option* option) { objective_only_.push_back({objective, option}); };
    only("cost", cmd.add_option("--steps", a_.steps, "cost: the iterations the GPU-hours count (default 1000)")
                     ->check(whole_in(1, 1000000000000LL)));
    only("cost", cmd.add_option("--price", prices_,
                                "cost: dollars per GPU-hour of a GPU type, TYPE=DOLLARS (repeat for every type of "
                                "the platform); plans ranked by dollars"));
    only("time-to-accuracy",
         cmd.add_option("--target-loss", a_.target_loss, "time-to-accuracy: the convergence model's target loss")
             ->check(number_in(1e-6, 100)));
    only("time-to-accuracy",
         cmd.add_option("--data", a_.data, "time-to-accuracy: the convergence model's data (as converge --data)"));
    only("time-to-accuracy",
         cmd.add_option("--lr", a_.learning_rate, "time-to-accuracy: the convergence model's learning rate")
             ->check(number_in(1e-9, 1e3)));
    cmd.add_option("--json", a_.json, "write the results as JSON");
    cmd.add_option("-o,--output", a_.output, "write the best plan as a plan YAML");
    cmd.add_option("--report", a_.report, "write the top plans of every searcher as an HTML page");
    cmd.add_flag("--quiet", quiet_, "print no table");
    cmd.add_flag("!--no-progress", a_.progress, "no progress bar");
    add_calibrations(cmd, a_.calibrations);
  }

  int run() override {
    for (const auto& [objective, option] : objective_only_)
      if (option->count() > 0 && a_.objective != objective)
        throw ConfigError(SourceLoc{option->get_name(), 0, 0}, "",
                          "only --objective " + objective + " reads it; give --objective " + objective + " or drop " +
                              option->get_name());
    for (const std::string& p : prices_) parse_price(p, a_.prices);
    OutputSet out;
    out.add("--output", a_.output);
    out.add("--json", a_.json);
    out.add("--report", a_.report);
    const SearchRun run = run_search(a_);
    const auto* best = run.best();
    if (!a_.output.empty() && best)
      out.write(a_.output, [&](std::ostream& o) {
        strategies::search::write_plan_yaml(o, best->plan,
                                            "found by dejavu search (" + a_.algo + ") for " + run.workload + " on " +
                                                run.platform + ": " + units::format_time(best->score.iteration_time_s) +
                                                " per iteration" + cost_text(*best, run.steps));
      });
    if (!a_.json.empty()) out.write(a_.json, [&](std::ostream& o) { write_search_json(o, run); });
    if (!a_.report.empty()) out.write(a_.report, [&](std::ostream& o) { write_search_html(o, run); });
    if (!best)
      throw ModelError("no plan of the search space fits on " + run.platform +
                       ": each runs out of memory, or the global batch " + std::to_string(run.global_batch) +
                       " does not split over the data-parallel replicas into at most " +
                       std::to_string(limits::kMaxMicrobatches) + " microbatches each");
    out.commit();
    if (!quiet_) write_search_table(std::cout, run);
    return 0;
  }

 private:
  SearchArgs a_;
  std::vector<std::string> prices_;  // --price as given
  bool quiet_ = false;
  // Options one objective reads, refused with another (a silently ignored option misleads).
  std::vector<std::pair<std::string, CLI::Option*>> objective_only_;
};

}  // namespace

std::unique_ptr<Command> make_search_command() { return std::make_unique<SearchCommand>(); }

}  // namespace dejavu::tools
