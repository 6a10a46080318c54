// `dejavu shard`: the intra-operator sharding of one layer of a model over a mesh of GPUs,
// solved exactly as an integer linear program (strategies/intra_op, docs/SHARDING.md).
#include <cmath>
#include <iostream>
#include <limits>

#include "platforms/cluster.h"
#include "sim/collective.h"
#include "sim/units.h"
#include "strategies/intra_op/layer_graph.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "tools/platform_input.h"
#include "tools/sharding_report.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace {

class ShardCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("--platform", platform_, "cluster YAML")->required();
    cmd.add_option("--workload", workload_, "model YAML (a transformer-shaped, dense model)")->required();
    cmd.add_option("--gpus", gpus_, "the mesh: the platform's first N GPUs (default: one server's)")
        ->check(whole_in(1, 4096));
    cmd.add_option("--micro-batch", micro_batch_, "samples per micro-batch")->check(whole_in(1, 65536));
    cmd.add_option("--memory-budget", budget_, "per GPU and layer, e.g. \"2 GiB\" (default: none)");
    cmd.add_option("--collective-algorithm", algorithm_, "how re-layouts run (default auto)");
    cmd.add_option("--fp8-recipe", recipe_,
                   "fp8 models: delayed | tensorwise | mxfp8 (default: Transformer Engine's for the GPU)");
    cmd.add_flag("--check", check_, "also try every assignment and compare with the ILP");
    cmd.add_option("--json", json_, "write the assignment as JSON");
    add_calibrations(cmd, calibrations_);
  }

  int run() override {
    OutputSet out;
    out.add("--json", json_);
    if (!sim::collective_algorithms().has(algorithm_))
      throw ConfigError(
          SourceLoc{"--collective-algorithm", 0, 0}, "",
          "unknown collective algorithm \"" + algorithm_ + "\"; valid: " + sim::collective_algorithms().names_joined());
    const platforms::Cluster cluster = load_platform(platform_, calibrations_);
    const workloads::ModelGraph model = workloads::load_workload_file(workload_);
    const ShardingRun run = solve(cluster, model);
    if (!run.ilp.feasible)
      throw ModelError("no sharding of a " + model.name + " layer fits in " + budget_ + " per GPU");
    if (!json_.empty()) out.write(json_, [&](std::ostream& o) { write_sharding_json(o, run); });
    out.commit();
    write_sharding_table(std::cout, run);
    return 0;
  }

 private:
  // The --fp8-recipe asked for: an fp8 model's, and MXFP8 only where the mesh's first `n` GPUs
  // have MX formats.
  sim::Fp8Recipe fp8_recipe(const platforms::Cluster& cluster, const workloads::ModelGraph& model, int n) const {
    sim::Fp8Recipe r = sim::Fp8Recipe::Default;
    if (recipe_.empty()) return r;
    const SourceLoc at{"--fp8-recipe", 0, 0};
    if (!sim::parse_fp8_recipe(recipe_, &r))
      throw ConfigError(at, "", "unknown recipe \"" + recipe_ + "\"; valid: " + sim::fp8_recipe_names());
    if (model.dtype != sim::DType::FP8)
      throw ConfigError(at, "",
                        "scales the casts of fp8 GEMMs; model " + model.name + " is " + sim::to_string(model.dtype));
    for (int i = 0; i < n; ++i)
      if (!sim::runs_on(r, cluster.gpus.at(i).spec->mx_formats))
        throw ConfigError(at, "",
                          recipe_ + " needs MX formats (Blackwell's tensor cores); GPU " +
                              cluster.gpus.at(i).spec->name +
                              " has none; valid on it: " + sim::fp8_recipe_names_on(false));
    return r;
  }

  ShardingRun solve(const platforms::Cluster& cluster, const workloads::ModelGraph& model) const {
    const int n = gpus_ > 0 ? gpus_ : cluster.groups.at(0).gpus_per_server;
    if (n > cluster.gpu_count())
      throw ConfigError(
          SourceLoc{"--gpus", 0, 0}, "",
          std::to_string(n) + " GPUs asked for; " + platform_ + " has " + std::to_string(cluster.gpu_count()));
    strategies::intra_op::LayerMesh mesh{&model, &cluster, {}, micro_batch_, algorithm_, fp8_recipe(cluster, model, n)};
    for (int i = 0; i < n; ++i) mesh.gpus.push_back(i);
    ShardingRun run;
    run.model = model.name;
    run.platform = cluster.name;
    run.gpus = std::to_string(n) + " x " + cluster.gpus[0].spec->name;
    run.micro_batch = micro_batch_;
    run.tokens = model.tokens_per_sample * micro_batch_;
    run.memory_budget_bytes = budget_.empty()
                                  ? std::numeric_limits<double>::infinity()
                                  : quantity_option("--memory-budget", budget_, units::Dimension::Bytes, 1, 1e15);
    run.graph = strategies::intra_op::layer_graph(mesh);
    run.ilp = strategies::intra_op::solve_ilp(run.graph, run.memory_budget_bytes, &run.stats);
    if (check_) {
      run.assignments = 1;
      for (const auto& node : run.graph.nodes) run.assignments *= static_cast<double>(node.strategies.size());
      run.brute_force = strategies::intra_op::brute_force(run.graph, run.memory_budget_bytes);
    }
    return run;
  }

  std::string platform_, workload_, budget_, json_, algorithm_ = "auto", recipe_;
  std::vector<std::string> calibrations_;
  int gpus_ = 0, micro_batch_ = 1;
  bool check_ = false;
};

}  // namespace

std::unique_ptr<Command> make_shard_command() { return std::make_unique<ShardCommand>(); }

}  // namespace dejavu::tools
