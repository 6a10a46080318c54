#include "sim/link_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace dejavu::sim {

LinkDemand link_demand(const Network& net, const LinkLoad& bytes, double duration_s) {
  LinkDemand out;
  if (duration_s <= 0) return out;
  for (const auto& [l, b] : bytes.sorted())
    if (b > 0) out.emplace_back(l, std::min(b / duration_s, net.link(l / 2).bandwidth_Bps));
  return out;
}

namespace {

// Per link direction the tasks cross: the capacity left by fixed tasks, and the summed demand
// and number of the tasks still rising.
struct LinkState {
  double left = 0, rising = 0;
  int count = 0;
};

// The level every rising task reaches together: `cap`, or where the first link fills.
double next_level(const std::unordered_map<int, LinkState>& links, double cap) {
  double level = cap;
  for (const auto& [l, s] : links)
    if (s.count > 0 && s.rising > 0) level = std::min(level, std::max(s.left, 0.0) / s.rising);
  return level;
}

bool fills_at(const LinkState& s, double level) {
  return s.count > 0 && s.rising > 0 && std::max(s.left, 0.0) / s.rising <= level * (1 + 1e-12);
}

// Progressive filling: every task's level rises together, task i loading link l with
// level·u_il, until a link fills or the level reaches `cap`; the tasks crossing a full link
// (all of them at `cap`) keep that level and the others rise on. Max-min fair levels.
std::vector<double> fill(const Network& net, const std::vector<const LinkDemand*>& tasks, double cap,
                         const std::vector<double>& scale) {
  const size_t n = tasks.size();
  std::vector<double> level_of(n, cap);
  std::vector<char> fixed(n, 0);
  std::unordered_map<int, LinkState> links;
  for (const LinkDemand* d : tasks)
    for (const auto& [l, u] : *d) {
      LinkState& s = links[l];
      s.left = net.link(l / 2).bandwidth_Bps * (scale.empty() ? 1.0 : scale[l]);
      s.rising += u;
      ++s.count;
    }
  for (size_t rising = n; rising > 0;) {
    const double level = next_level(links, cap);
    std::vector<size_t> stop;  // rising tasks that cross a link full at this level
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      bool full = level >= cap;
      for (const auto& [l, u] : *tasks[i]) full = full || fills_at(links[l], level);
      if (full) stop.push_back(i);
    }
    if (stop.empty()) break;  // no link binds: cannot happen below the cap
    for (size_t i : stop) {
      fixed[i] = 1;
      level_of[i] = level;
      --rising;
      for (const auto& [l, u] : *tasks[i]) {
        LinkState& s = links[l];
        s.left -= level * u;
        s.rising -= u;
        --s.count;
      }
    }
  }
  return level_of;
}

}  // namespace

std::vector<double> fair_rates(const Network& net, const std::vector<const LinkDemand*>& tasks,
                               const std::vector<double>& scale) {
  std::vector<double> rates = fill(net, tasks, 1.0, scale);
  for (double& r : rates) r = std::max(r, 1e-9);
  return rates;
}

double fluid_drain_s(const Network& net, const std::vector<Flow>& flows) {
  // Each flow loads its links with one unit per unit of level: the level is its bytes/s.
  std::vector<LinkDemand> unit(flows.size());
  for (size_t i = 0; i < flows.size(); ++i)
    for (int l : flows[i].links) unit[i].emplace_back(l, 1.0);
  std::vector<double> left;
  for (const Flow& f : flows) left.push_back(f.links.empty() ? 0.0 : f.bytes);
  const double inf = std::numeric_limits<double>::infinity();
  for (double now = 0;;) {
    std::vector<const LinkDemand*> running;
    std::vector<size_t> index;
    for (size_t i = 0; i < flows.size(); ++i)
      if (left[i] > 0) {
        running.push_back(&unit[i]);
        index.push_back(i);
      }
    const std::vector<double> bw = fill(net, running, inf, {});
    double step = inf;
    for (size_t k = 0; k < index.size(); ++k)
      if (bw[k] > 0) step = std::min(step, left[index[k]] / bw[k]);
    if (!std::isfinite(step)) return now;
    now += step;
    for (size_t k = 0; k < index.size(); ++k) {
      double& l = left[index[k]];
      l = l - bw[k] * step <= 1e-9 * flows[index[k]].bytes ? 0 : l - bw[k] * step;
    }
  }
}

}  // namespace dejavu::sim
