#include "strategies/intra_op/sharding.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "sim/error.h"

namespace dejavu::strategies::intra_op {

const char* to_string(Layout l) {
  switch (l) {
    case Layout::Replicated:
      return "R";
    case Layout::SplitTokens:
      return "S0";
    case Layout::SplitFeatures:
      return "S1";
    case Layout::Partial:
      return "P";
  }
  return "?";
}

Resharding::Resharding(const sim::Network& net, std::vector<int> group, const sim::CollectiveAlgorithm& algorithm)
    : net_(net), group_(std::move(group)), algorithm_(algorithm) {}

double Resharding::collective_s(sim::CollectiveOp op, double bytes) const {
  if (group_.size() < 2 || bytes <= 0) return 0;
  return sim::algorithm_for(algorithm_, net_, group_, op).time_s(net_, group_, op, bytes);
}

double Resharding::bucketed_s(sim::CollectiveOp op, double bytes) const {
  return std::max(0.0, collective_s(op, bytes) - collective_s(op, 1));
}

double Resharding::move_s(Layout from, Layout to, double bytes) const {
  if (to == Layout::Partial) throw ModelError("intra-op sharding: no operator reads partial sums");
  if (from == Layout::Partial)
    return collective_s(to == Layout::Replicated ? sim::CollectiveOp::AllReduce : sim::CollectiveOp::ReduceScatter,
                        bytes);
  if (from == to || from == Layout::Replicated) return 0;  // the same, or a slice of what is held
  if (to == Layout::Replicated) return collective_s(sim::CollectiveOp::AllGather, bytes);
  return collective_s(sim::CollectiveOp::AllToAll, bytes / size());  // S0 <-> S1: each sends its part
}

double Resharding::edge_s(const Strategy& producer, const Strategy& consumer, double bytes) const {
  const Layout gradient = consumer.partial_input_gradient ? Layout::Partial : consumer.input;
  const Layout wanted = producer.output == Layout::Partial ? Layout::Replicated : producer.output;
  return move_s(producer.output, consumer.input, bytes) + move_s(gradient, wanted, bytes);
}

void price_edges(ShardingGraph& g, const Resharding& r) {
  for (Edge& e : g.edges) {
    const Node &u = g.nodes.at(e.from), &v = g.nodes.at(e.to);
    e.cost_s.assign(u.strategies.size(), std::vector<double>(v.strategies.size(), 0.0));
    for (size_t i = 0; i < u.strategies.size(); ++i)
      for (size_t j = 0; j < v.strategies.size(); ++j)
        e.cost_s[i][j] = r.edge_s(u.strategies[i], v.strategies[j], u.output_bytes);
  }
}

double cost_s(const ShardingGraph& g, const Choice& c) {
  double sum = 0;
  for (size_t v = 0; v < g.nodes.size(); ++v) sum += g.nodes[v].strategies.at(c.at(v)).cost_s();
  for (const Edge& e : g.edges) sum += e.cost_s.at(c.at(e.from)).at(c.at(e.to));
  return sum;
}

double memory_bytes(const ShardingGraph& g, const Choice& c) {
  double sum = 0;
  for (size_t v = 0; v < g.nodes.size(); ++v) sum += g.nodes[v].strategies.at(c.at(v)).memory_bytes;
  return sum;
}

Solution brute_force(const ShardingGraph& g, double memory_budget_bytes, double max_assignments) {
  double count = 1;
  for (const Node& n : g.nodes) count *= static_cast<double>(n.strategies.size());
  if (count > max_assignments)
    throw ModelError("intra-op sharding: " + std::to_string(static_cast<long long>(count)) +
                     " assignments are too many to try one by one");
  Solution best;
  best.cost_s = std::numeric_limits<double>::infinity();
  Choice c(g.nodes.size(), 0);
  while (true) {
    const double mem = memory_bytes(g, c);
    if (mem <= memory_budget_bytes) {
      const double t = cost_s(g, c);
      if (t < best.cost_s) best = {true, c, t, mem};
    }
    size_t v = 0;  // the next assignment, as an odometer
    while (v < c.size() && ++c[v] == static_cast<int>(g.nodes[v].strategies.size())) c[v++] = 0;
    if (v == c.size()) break;
  }
  if (!best.feasible) best.cost_s = 0;
  return best;
}

}  // namespace dejavu::strategies::intra_op
