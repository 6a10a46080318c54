// Each device's memory over a run: its resident parts plus what tasks allocate when they
// start and free when they end. Works on any engine's Result, so both engines report the
// same memory for the same schedule of events.
#pragma once

#include <vector>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

struct MemoryProfile {
  double resident_bytes = 0;
  double peak_bytes = 0;  // resident + the most that tasks held at once
  double peak_time_s = 0;
  std::vector<std::pair<double, double>> timeline;  // (time, bytes) at every change
};

// With `timeline` false only the peaks are kept.
std::vector<MemoryProfile> memory_profiles(const TaskGraph& graph, const Result& result, bool timeline = false);

}  // namespace dejavu::sim
