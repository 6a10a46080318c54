#include "sim/link_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
double next_level(const std::vector<LinkState>& links, double cap) {
  double level = cap;
  for (const LinkState& s : links)
    if (s.count > 0 && s.rising > 0) level = std::min(level, std::max(s.left, 0.0) / s.rising);
  return level;
}

bool fills_at(const LinkState& s, double level) {
  return s.count > 0 && s.rising > 0 && std::max(s.left, 0.0) / s.rising <= level * (1 + 1e-12);
}

// Progressive filling: every task's level rises together, task i loading link l with
// level·u_il, until a link fills or the level reaches `cap`; the tasks crossing a full link
// (all of them at `cap`) keep that level and the others rise on. Max-min fair levels.
// Links are numbered densely first (the loop runs over flat arrays, not a hash map).
std::vector<double> fill(const Network& net, const std::vector<const LinkDemand*>& tasks, double cap,
                         const std::vector<double>& scale) {
  const size_t n = tasks.size();
  std::vector<double> level_of(n, cap);
  // Scratch kept between calls (the engine calls this at every re-share): a link
  // direction's dense number (-1 between calls), the links, each task's uses of them.
  thread_local std::vector<int> local;
  thread_local std::vector<LinkState> links;
  thread_local std::vector<std::pair<int, double>> uses;
  thread_local std::vector<size_t> first;
  thread_local std::vector<char> fixed, full;
  if (local.size() < 2 * static_cast<size_t>(net.link_count())) local.assign(2 * net.link_count(), -1);
  links.clear();
  uses.clear();
  first.assign(1, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [l, u] : *tasks[i]) {
      if (local[l] < 0) {
        local[l] = static_cast<int>(links.size());
        links.push_back({net.link(l / 2).bandwidth_Bps * (scale.empty() ? 1.0 : scale[l]), 0, 0});
      }
      LinkState& s = links[local[l]];
      s.rising += u;
      ++s.count;
      uses.emplace_back(local[l], u);
    }
    first.push_back(uses.size());
  }
  for (const LinkDemand* d : tasks)
    for (const auto& [l, u] : *d) local[l] = -1;
  fixed.assign(n, 0);
  full.assign(links.size(), 0);
  std::vector<size_t> stop;  // rising tasks that cross a link full at this level
  for (size_t rising = n; rising > 0;) {
    const double level = next_level(links, cap);
    for (size_t k = 0; k < links.size(); ++k) full[k] = fills_at(links[k], level);
    stop.clear();
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      bool stops = level >= cap;
      for (size_t k = first[i]; k < first[i + 1] && !stops; ++k) stops = full[uses[k].first];
      if (stops) stop.push_back(i);
    }
    if (stop.empty()) break;  // no link binds: cannot happen below the cap
    for (size_t i : stop) {
      fixed[i] = 1;
      level_of[i] = level;
      --rising;
      for (size_t k = first[i]; k < first[i + 1]; ++k) {
        LinkState& s = links[uses[k].first];
        s.left -= level * uses[k].second;
        s.rising -= uses[k].second;
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
