#include "strategies/training/elastic.h"

#include <algorithm>
#include <limits>

#include "strategies/search/evaluator.h"
#include "strategies/search/space.h"

namespace dejavu::strategies {

platforms::Cluster without_last_servers(const platforms::Cluster& full, int lost) {
  platforms::Cluster smaller = full;
  for (int k = lost; k > 0; --k) {
    auto g = std::find_if(smaller.groups.rbegin(), smaller.groups.rend(), [](const auto& x) { return x.count > 0; });
    if (g == smaller.groups.rend()) break;
    --g->count;
  }
  smaller.groups.erase(
      std::remove_if(smaller.groups.begin(), smaller.groups.end(), [](const auto& x) { return x.count == 0; }),
      smaller.groups.end());
  smaller.network = sim::Network{};
  smaller.gpus.clear();
  if (!smaller.groups.empty()) platforms::build_network(smaller);
  return smaller;
}

ElasticPlanner::ElasticPlanner(const workloads::ModelGraph& model, const platforms::Cluster& full, Plan plan)
    : model_(model), full_(full), plan_(std::move(plan)) {}

std::pair<double, int> ElasticPlanner::after_losing(int lost) {
  for (int servers = full_.server_count() - lost; servers >= 1; --servers)
    if (const auto best = best_on(servers); best.first > 0) return best;
  return {-1.0, 0};
}

std::pair<double, int> ElasticPlanner::best_on(int servers) {
  auto [it, fresh] = by_servers_.try_emplace(servers, -1.0, 0);
  if (!fresh) return it->second;
  const platforms::Cluster smaller = without_last_servers(full_, full_.server_count() - servers);
  const search::Problem problem{&model_, &smaller, plan_.global_batch_size};
  search::Space space = search::default_space(problem);
  space.tp = {plan_.tp};
  space.pp = {plan_.pp};
  space.schedules = {plan_.schedule};
  space.chunks = {plan_.virtual_stages};
  space.sequence_parallel = {plan_.sequence_parallel};
  search::SimulationEvaluator evaluator(problem);
  double best = -1;
  for (const Plan& p : search::enumerate(problem, space)) {  // empty when the batch does not divide
    const double cost = evaluator.evaluate(p).cost();
    if (cost < std::numeric_limits<double>::infinity() && (best < 0 || cost < best)) best = cost;
  }
  if (best > 0) it->second = {best, smaller.gpu_count()};
  return it->second;
}

}  // namespace dejavu::strategies
