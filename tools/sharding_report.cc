#include "tools/sharding_report.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/units.h"

namespace dejavu::tools {

namespace {

using strategies::intra_op::Choice;
using strategies::intra_op::ShardingGraph;

struct Reference {
  const char* name;
  bool available = false;
  Choice choice;
};

// Megatron's tensor parallelism, with sequence parallelism, and data parallelism, where
// every operator can take its part.
std::vector<Reference> references(const ShardingGraph& g) {
  std::vector<Reference> out{{"Megatron tensor parallelism", false, {}},
                             {"Megatron with sequence parallelism", false, {}},
                             {"data parallelism (every operator on tokens)", false, {}}};
  for (int r = 0; r < 3; ++r) {
    out[r].available = true;
    for (const auto& n : g.nodes) {
      const int i = r == 0 ? n.megatron : r == 1 ? n.megatron_sp : n.data;
      out[r].available = out[r].available && i >= 0;
      out[r].choice.push_back(i);
    }
  }
  return out;
}

bool same_cost(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

std::string sharding_verdict(const ShardingRun& run) {
  if (!run.ilp.feasible) return "no assignment fits the memory budget";
  const auto refs = references(run.graph);
  double megatron = INFINITY;
  for (int r = 0; r < 2; ++r)
    if (refs[r].available && strategies::intra_op::memory_bytes(run.graph, refs[r].choice) <= run.memory_budget_bytes)
      megatron = std::min(megatron, strategies::intra_op::cost_s(run.graph, refs[r].choice));
  std::string found = "a split of its own";
  for (int r = 0; r < 3; ++r)
    if (refs[r].available && refs[r].choice == run.ilp.choice) {
      if (r < 2) return std::string("found: ") + refs[r].name;
      found = refs[r].name;
    }
  if (!std::isfinite(megatron)) return "found: " + found + " (Megatron's split does not fit or cannot run)";
  if (same_cost(run.ilp.cost_s, megatron)) return "found: " + found + ", as fast as Megatron's best here";
  return fmt::format("found: {}, {:.1f}% faster than Megatron's best here", found,
                     100 * (1 - run.ilp.cost_s / megatron));
}

void write_sharding_table(std::ostream& o, const ShardingRun& run) {
  const ShardingGraph& g = run.graph;
  o << fmt::format("intra-op sharding of one {} layer: micro-batch {} ({:.0f} tokens) over {} ({})\n", run.model,
                   run.micro_batch, run.tokens, run.gpus, run.platform);
  o << fmt::format("ILP (GLPK): {} variables, {} constraints\n\n", run.stats.variables, run.stats.constraints);
  if (!run.ilp.feasible) {
    o << sharding_verdict(run) << "\n";
    return;
  }
  o << fmt::format("{:<22} {:<11} {:<9} {:>11} {:>11} {:>11}\n", "operator", "strategy", "layouts", "compute",
                   "collective", "memory");
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const auto& s = g.nodes[v].strategies[run.ilp.choice[v]];
    o << fmt::format("{:<22} {:<11} {:<9} {:>11} {:>11} {:>11}\n", g.nodes[v].name, s.name,
                     std::string(to_string(s.input)) + "->" + to_string(s.output), units::format_time(s.compute_s),
                     units::format_time(s.comm_s), units::format_bytes(s.memory_bytes));
  }
  o << "\nre-layouts (forward and backward):\n";
  for (const auto& e : g.edges) {
    const double t = e.cost_s[run.ilp.choice[e.from]][run.ilp.choice[e.to]];
    if (t <= 0) continue;
    o << fmt::format("  {} -> {}: {}\n", g.nodes[e.from].name, g.nodes[e.to].name, units::format_time(t));
  }
  o << fmt::format("\nper layer: {} on each GPU, {} held\n", units::format_time(run.ilp.cost_s),
                   units::format_bytes(run.ilp.memory_bytes));
  for (const Reference& r : references(g))
    if (r.available)
      o << fmt::format("  {:<44} {:>11} {:>11}\n", r.name,
                       units::format_time(strategies::intra_op::cost_s(g, r.choice)),
                       units::format_bytes(strategies::intra_op::memory_bytes(g, r.choice)));
  if (run.brute_force)
    o << fmt::format("brute force over {:.0f} assignments: {} ({})\n", run.assignments,
                     units::format_time(run.brute_force->cost_s),
                     same_cost(run.brute_force->cost_s, run.ilp.cost_s) ? "the ILP's optimum" : "DIFFERS from the ILP");
  o << sharding_verdict(run) << "\n";
}

void write_sharding_json(std::ostream& o, const ShardingRun& run) {
  nlohmann::ordered_json j;
  j["model"] = run.model;
  j["platform"] = run.platform;
  j["gpus"] = run.gpus;
  j["micro_batch"] = run.micro_batch;
  j["feasible"] = run.ilp.feasible;
  j["verdict"] = sharding_verdict(run);
  if (run.ilp.feasible) {
    j["layer_time_s"] = run.ilp.cost_s;
    j["memory_bytes"] = run.ilp.memory_bytes;
    for (size_t v = 0; v < run.graph.nodes.size(); ++v) {
      const auto& s = run.graph.nodes[v].strategies[run.ilp.choice[v]];
      j["operators"].push_back({{"name", run.graph.nodes[v].name},
                                {"strategy", s.name},
                                {"input", to_string(s.input)},
                                {"output", to_string(s.output)},
                                {"compute_s", s.compute_s},
                                {"collective_s", s.comm_s},
                                {"memory_bytes", s.memory_bytes}});
    }
  }
  for (const Reference& r : references(run.graph))
    if (r.available)
      j["references"].push_back({{"name", r.name},
                                 {"layer_time_s", strategies::intra_op::cost_s(run.graph, r.choice)},
                                 {"memory_bytes", strategies::intra_op::memory_bytes(run.graph, r.choice)}});
  if (run.brute_force) j["brute_force_layer_time_s"] = run.brute_force->cost_s;
  o << j.dump(2) << "\n";
}

}  // namespace dejavu::tools
