// Chrome trace event format (opens in Perfetto and chrome://tracing): one process per
// simulated device, one thread per stream, one complete event ("ph":"X") per task.
#pragma once

#include <ostream>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

void write_chrome_trace(std::ostream& out, const TaskGraph& graph, const Result& result);

}  // namespace dejavu::sim
