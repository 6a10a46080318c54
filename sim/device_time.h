// Where each device's time went over a run: computing, communicating (and how much of the
// communication nothing else hid), idle.
#pragma once

#include <functional>
#include <vector>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

// One communication stream's share (tensor-, pipeline-, data-parallel, ...): how long some
// task of it ran, and how much of that compute hid (ran at the same time).
struct StreamTime {
  int stream = -1;
  double busy_s = 0, hidden_s = 0;
};

struct DeviceTime {
  double compute_s = 0;                // some compute task running
  double communication_s = 0;          // some transfer or collective running
  double exposed_communication_s = 0;  // communicating while not computing
  double idle_s = 0;                   // neither, within [0, makespan]
  // What compute tasks ran beyond their own durations: SMs held by communication kernels
  // beside them (sim/sm_sharing.h), a straggler's slow windows.
  double compute_slowed_s = 0;
  std::vector<StreamTime> streams;  // per communication stream used, by stream id
};

// `only`, when given, restricts the accounting to the tasks it accepts.
std::vector<DeviceTime> device_times(const TaskGraph& graph, const Result& result,
                                     const std::function<bool(const Task&)>& only = {});

}  // namespace dejavu::sim
