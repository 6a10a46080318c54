// Our own event loop over the TaskGraph: a list scheduler with dependency counters and
// in-order streams per device. Transfers and collectives take closed-form alpha-beta times
// on their route's bottleneck; with `contention` (engine "analytic") those in flight at once
// share the links they load beyond a link's bandwidth, max-min fair (link_sharing.h), and
// without it (engine "analytic-no-contention") each runs as if alone. It is the inner loop
// of every search.
#pragma once

#include "sim/engine.h"

namespace dejavu::sim {

class AnalyticEngine : public Engine {
 public:
  explicit AnalyticEngine(bool contention = true) : contention_(contention) {}
  Result run(const TaskGraph& graph, const Network& net, const EngineOptions& options) const override;

 private:
  bool contention_;
};

}  // namespace dejavu::sim
