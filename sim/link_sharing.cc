#include "sim/link_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace dejavu::sim {

LinkDemand link_demand(const Network& net, const std::vector<double>& bytes, double duration_s) {
  LinkDemand out;
  if (duration_s <= 0) return out;
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] > 0) {
      const double cap = net.link(static_cast<int>(i / 2)).bandwidth_Bps;
      out.emplace_back(static_cast<int>(i), std::min(bytes[i] / duration_s, cap));
    }
  return out;
}

namespace {

// Per link direction the tasks cross: the capacity left by fixed tasks, and the summed demand
// and number of the tasks still rising.
struct LinkState {
  double left = 0, rising = 0;
  int count = 0;
};

// The level every rising task reaches together: 1, or where the first link fills.
double next_level(const std::unordered_map<int, LinkState>& links) {
  double level = 1;
  for (const auto& [l, s] : links)
    if (s.count > 0 && s.rising > 0) level = std::min(level, std::max(s.left, 0.0) / s.rising);
  return level;
}

bool fills_at(const LinkState& s, double level) {
  return s.count > 0 && s.rising > 0 && std::max(s.left, 0.0) / s.rising <= level * (1 + 1e-12);
}

}  // namespace

std::vector<double> fair_rates(const Network& net, const std::vector<const LinkDemand*>& tasks) {
  const size_t n = tasks.size();
  std::vector<double> rate(n, 1.0);
  std::vector<char> fixed(n, 0);
  std::unordered_map<int, LinkState> links;
  for (const LinkDemand* d : tasks)
    for (const auto& [l, u] : *d) {
      LinkState& s = links[l];
      s.left = net.link(l / 2).bandwidth_Bps;
      s.rising += u;
      ++s.count;
    }
  for (size_t rising = n; rising > 0;) {
    const double level = next_level(links);
    std::vector<size_t> stop;  // rising tasks that cross a link full at this level (all, at 1)
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      bool full = level >= 1;
      for (const auto& [l, u] : *tasks[i]) full = full || fills_at(links[l], level);
      if (full) stop.push_back(i);
    }
    if (stop.empty()) break;  // no link binds: cannot happen below level 1
    for (size_t i : stop) {
      fixed[i] = 1;
      rate[i] = std::max(level, 1e-9);
      --rising;
      for (const auto& [l, u] : *tasks[i]) {
        LinkState& s = links[l];
        s.left -= rate[i] * u;
        s.rising -= u;
        --s.count;
      }
    }
  }
  return rate;
}

namespace {

// Max-min fair bytes per second of the flows not yet done (progressive filling).
std::vector<double> fair_bandwidths(const Network& net, const std::vector<Flow>& flows,
                                    const std::vector<double>& left) {
  const size_t n = flows.size();
  std::vector<double> bw(n, 0.0);
  std::vector<char> fixed(n, 0);
  std::unordered_map<int, LinkState> links;  // left: capacity; count: unfixed flows
  for (size_t i = 0; i < n; ++i) {
    if (left[i] <= 0 || flows[i].links.empty()) {
      fixed[i] = 1;
      continue;
    }
    for (int l : flows[i].links) {
      LinkState& s = links[l];
      s.left = net.link(l / 2).bandwidth_Bps;
      ++s.count;
    }
  }
  for (bool more = true; more;) {
    double share = std::numeric_limits<double>::infinity();
    for (const auto& [l, s] : links)
      if (s.count > 0) share = std::min(share, std::max(s.left, 0.0) / s.count);
    more = false;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      bool full = false;
      for (int l : flows[i].links) {
        const LinkState& s = links[l];
        full = full || std::max(s.left, 0.0) / s.count <= share * (1 + 1e-12);
      }
      if (!full) {
        more = true;
        continue;
      }
      fixed[i] = 1;
      bw[i] = share;
      for (int l : flows[i].links) {
        links[l].left -= share;
        --links[l].count;
      }
    }
  }
  return bw;
}

}  // namespace

double fluid_drain_s(const Network& net, const std::vector<Flow>& flows) {
  std::vector<double> left;
  for (const Flow& f : flows) left.push_back(f.links.empty() ? 0.0 : f.bytes);
  double now = 0;
  for (;;) {
    const std::vector<double> bw = fair_bandwidths(net, flows, left);
    double step = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < flows.size(); ++i)
      if (left[i] > 0 && bw[i] > 0) step = std::min(step, left[i] / bw[i]);
    if (!std::isfinite(step)) return now;
    now += step;
    for (size_t i = 0; i < flows.size(); ++i)
      if (left[i] > 0) left[i] = left[i] - bw[i] * step <= 1e-9 * flows[i].bytes ? 0 : left[i] - bw[i] * step;
  }
}

}  // namespace dejavu::sim
