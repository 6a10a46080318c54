// Chrome trace event format (opens in Perfetto and chrome://tracing): one process per
// simulated device, one thread per stream, one complete event ("ph":"X") per task.
#pragma once

#include <ostream>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace dejavu::report {

void write_chrome_trace(std::ostream& out, const sim::TaskGraph& graph, const sim::Result& result);

}  // namespace dejavu::report
