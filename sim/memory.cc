#include "sim/memory.h"

#include <algorithm>
#include <tuple>

namespace dejavu::sim {

std::vector<MemoryProfile> memory_profiles(const TaskGraph& g, const Result& r, bool timeline) {
  const size_t nd = g.devices().size();
  // (time, 0 for a free / 1 for an allocation, signed bytes): at equal times frees come
  // first, as a caching allocator reuses what was just released.
  std::vector<std::vector<std::tuple<double, int, double>>> events(nd);
  for (size_t i = 0; i < g.size(); ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    if (t.alloc_bytes == 0 && t.free_bytes == 0) continue;
    for (int d : g.devices_of(t)) {
      if (t.alloc_bytes != 0) events[d].emplace_back(r.start_s[i], 1, t.alloc_bytes);
      if (t.free_bytes != 0) events[d].emplace_back(r.end_s[i], 0, -t.free_bytes);
    }
  }
  std::vector<MemoryProfile> out(nd);
  for (size_t d = 0; d < nd; ++d) {
    MemoryProfile& p = out[d];
    for (const MemoryPart& part : g.devices()[d].resident) p.resident_bytes += part.bytes;
    double now = p.resident_bytes;
    p.peak_bytes = now;
    if (timeline) p.timeline.emplace_back(0.0, now);
    std::sort(events[d].begin(), events[d].end());
    for (const auto& [time, kind, bytes] : events[d]) {
      now += bytes;
      if (now > p.peak_bytes) {
        p.peak_bytes = now;
        p.peak_time_s = time;
      }
      if (timeline) {
        if (!p.timeline.empty() && p.timeline.back().first == time)
          p.timeline.back().second = now;
        else
          p.timeline.emplace_back(time, now);
      }
    }
  }
  return out;
}

}  // namespace dejavu::sim
