#include "sim/device_time.h"

#include <algorithm>
#include <utility>

namespace dejavu::sim {

namespace {
using Intervals = std::vector<std::pair<double, double>>;

Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

double length(const Intervals& v) {
  double s = 0;
  for (const auto& [a, b] : v) s += b - a;
  return s;
}

// Length of `a` not covered by `b`; both merged and sorted.
double uncovered(const Intervals& a, const Intervals& b) {
  double total = 0;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    double cursor = s;
    while (j < b.size() && b[j].second <= cursor) ++j;
    size_t k = j;
    while (k < b.size() && b[k].first < e) {
      if (b[k].first > cursor) total += b[k].first - cursor;
      cursor = std::max(cursor, b[k].second);
      ++k;
    }
    if (cursor < e) total += e - cursor;
  }
  return total;
}
}  // namespace

std::vector<DeviceTime> device_times(const TaskGraph& g, const Result& r,
                                     const std::function<bool(const Task&)>& only) {
  const size_t nd = g.devices().size(), ns = g.stream_names().size();
  std::vector<Intervals> compute(nd);
  std::vector<double> slowed(nd, 0.0);
  std::vector<std::vector<Intervals>> comm(nd, std::vector<Intervals>(ns));  // [device][stream]
  for (size_t i = 0; i < g.size(); ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    if (only && !only(t)) continue;
    const std::pair<double, double> iv{r.start_s[i], r.end_s[i]};
    if (t.kind == TaskKind::Compute) {
      compute[t.device].push_back(iv);
      const double beyond = iv.second - iv.first - t.duration_s;  // rounding aside
      if (iv.first >= 0 && beyond > 1e-9 * t.duration_s) slowed[t.device] += beyond;
    } else if (t.kind == TaskKind::Transfer) {
      comm[t.device][t.stream].push_back(iv);
    } else {
      for (int d : g.participants(t.participants)) comm[d][t.stream].push_back(iv);
    }
  }
  std::vector<DeviceTime> out(nd);
  for (size_t d = 0; d < nd; ++d) {
    const Intervals c = merged(std::move(compute[d]));
    Intervals all;
    for (size_t s = 0; s < ns; ++s) {
      if (comm[d][s].empty()) continue;
      all.insert(all.end(), comm[d][s].begin(), comm[d][s].end());
      const Intervals m = merged(std::move(comm[d][s]));
      const double busy = length(m);
      out[d].streams.push_back(StreamTime{static_cast<int>(s), busy, busy - uncovered(m, c)});
    }
    const Intervals m = merged(std::move(all));
    out[d].compute_s = length(c);
    out[d].compute_slowed_s = slowed[d];
    out[d].communication_s = length(m);
    out[d].exposed_communication_s = uncovered(m, c);
    out[d].idle_s = std::max(0.0, r.makespan_s - out[d].compute_s - out[d].exposed_communication_s);
  }
  return out;
}

}  // namespace dejavu::sim
