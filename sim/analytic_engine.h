// Our own event loop over the TaskGraph: a list scheduler with dependency counters and
// in-order streams per device. Transfers and collectives take closed-form alpha-beta times
// on their route's bottleneck; nothing contends. It is the inner loop of every search.
#pragma once

#include "sim/engine.h"

namespace dejavu::sim {

class AnalyticEngine : public Engine {
 public:
  Result run(const TaskGraph& graph, const Network& net, const EngineOptions& options) const override;
};

}  // namespace dejavu::sim
