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

double Faults::finish_s(const std::vector<int>& hosts, double t0, double work_s) const {
  std::vector<const std::vector<Window>*> mine;
  std::set<double> cuts;
  for (int h : hosts) {
    auto it = host_speed.find(h);
    if (it == host_speed.end()) continue;
    mine.push_back(&it->second);
    for (const Window& w : it->second) {
      if (w.from_s > t0) cuts.insert(w.from_s);
      if (std::isfinite(w.to_s) && w.to_s > t0) cuts.insert(w.to_s);
    }
  }
  if (mine.empty() || work_s <= 0) return t0 + work_s;
  auto speed = [&](double t) {
    double s = 1;
    for (const auto* w : mine) s = std::min(s, factor_at(*w, t));
    return s;
  };
  double t = t0, left = work_s;
  for (double cut : cuts) {
    const double s = speed(t);
    if (s > 0 && (cut - t) * s >= left) return t + left / s;
    left -= (cut - t) * s;
    t = cut;
  }
  const double s = speed(t);
  return s > 0 ? t + left / s : std::numeric_limits<double>::infinity();
}

double Faults::link_factor(const std::vector<int>& links, double t) const {
  double f = 1;
  for (int l : links) {
    auto it = link_bandwidth.find(l);
    if (it != link_bandwidth.end()) f = std::min(f, factor_at(it->second, t));
  }
  return f;
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
