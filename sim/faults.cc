#include "sim/faults.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace dejavu::sim {

double Faults::factor_at(const std::vector<Window>& windows, double t) {
  double f = 1;
  for (const Window& w : windows)
    if (t >= w.from_s && t < w.to_s) f *= w.factor;
  return f;
}

namespace {

// Work started at t0 progressing at the lowest factor of `windows` from moment to moment
// (piecewise constant between window edges): when it is done, or, with `stop_at_zero`,
// when a factor of 0 stops it first (finish_s then says when, `stopped` is set).
struct Progress {
  double finish_s = 0;
  bool stopped = false;
};
Progress integrate(const std::vector<const std::vector<Window>*>& windows, double t0, double work_s,
                   bool stop_at_zero) {
  if (windows.empty() || work_s <= 0) return {t0 + std::max(work_s, 0.0), false};
  std::set<double> cuts;
  for (const auto* list : windows)
    for (const Window& w : *list) {
      if (w.from_s > t0) cuts.insert(w.from_s);
      if (std::isfinite(w.to_s) && w.to_s > t0) cuts.insert(w.to_s);
    }
  auto rate = [&](double t) {
    double r = 1;
    for (const auto* list : windows) r = std::min(r, Faults::factor_at(*list, t));
    return r;
  };
  double t = t0, left = work_s;
  for (double cut : cuts) {
    const double r = rate(t);
    if (r <= 0 && stop_at_zero) return {t, true};
    if (r > 0 && (cut - t) * r >= left) return {t + left / r, false};
    left -= (cut - t) * r;
    t = cut;
  }
  const double r = rate(t);
  if (r <= 0) return {stop_at_zero ? t : std::numeric_limits<double>::infinity(), stop_at_zero};
  return {t + left / r, false};
}

}  // namespace

double Faults::finish_s(const std::vector<int>& hosts, double t0, double work_s) const {
  std::vector<const std::vector<Window>*> mine;
  for (int h : hosts)
    if (auto it = host_speed.find(h); it != host_speed.end()) mine.push_back(&it->second);
  return integrate(mine, t0, work_s, false).finish_s;
}

Faults::Transfer Faults::transfer_s(const std::vector<int>& links, double t0, double work_s) const {
  std::vector<const std::vector<Window>*> mine;
  for (int l : links)
    if (auto it = link_bandwidth.find(l); it != link_bandwidth.end()) mine.push_back(&it->second);
  const Progress p = integrate(mine, t0, work_s, true);
  return {p.finish_s, p.stopped};
}

std::vector<double> Faults::edges() const {
  std::set<double> out;
  for (const auto* m : {&host_speed, &link_bandwidth})
    for (const auto& [id, windows] : *m)
      for (const Window& w : windows) {
        out.insert(w.from_s);
        if (std::isfinite(w.to_s)) out.insert(w.to_s);
      }
  return {out.begin(), out.end()};
}

}  // namespace dejavu::sim
