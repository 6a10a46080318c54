// The engine that sees contention: the same TaskGraph and Network played on SimGrid's
// flow-level network model (S4U, no actors: each activity starts from the completion
// callback of its last dependency, the fastest shape measured on SimGrid 3.32).
//
// Every link is a full-duplex (split-duplex) SimGrid link with exactly its YAML bandwidth
// and latency under the default "exact" model (CM02, no cross-traffic, no TCP-gamma cap);
// switches are routing points without capacity, so a switch is non-blocking and an
// oversubscribed fabric is expressed by its uplinks. Routes are the Network's own, given
// to SimGrid explicitly for every host pair the run uses.
//
// A task that stands for several symmetric groups starts the flows of all of them, so
// they contend with each other; the task ends when its last flow does.
#pragma once

#include "sim/engine.h"

namespace dejavu::sim {

class SimGridEngine : public Engine {
 public:
  Result run(const TaskGraph& graph, const Network& net, const EngineOptions& options) const override;
  // The simulation itself, in this process. SimGrid allows one per process: a second call
  // throws (use run(), which forks, for more).
  static Result run_here(const TaskGraph& graph, const Network& net, const EngineOptions& options);
};

}  // namespace dejavu::sim
