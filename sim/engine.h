// The Engine interface: a TaskGraph on a Network in, a Result out. Engines are named in a
// registry (`dejavu list` prints them); nothing outside an engine branches on which one
// it is talking to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/faults.h"
#include "sim/network.h"
#include "sim/registry.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

struct EngineOptions {
  std::string collective_algorithm = "ring";
  // For engines that see the network (simgrid); the analytic engine is always closed form.
  std::string fidelity = "flow";        // closed | flow | step
  std::string network_model = "exact";  // exact (CM02, links mean their YAML) | lv08 | smpi
  std::string sharing = "max-min";      // max-min | fair-bottleneck
  // For engines that play flows (simgrid): the groups of a task whose flows meet nothing but
  // their own group's, on alike links, are played as the first group alone (same times;
  // sim/flow_symmetry.h). false plays every group's flows.
  bool symmetric_groups_once = true;
  // Step fidelity: of a run of alike steps (a ring's 2(n-1)), a collective that meets
  // nothing else plays this many and, if they settle into a period, the rest as time
  // (sim/step_periods.h; same end). 0 plays every step.
  int keep_alike_steps = 32;
  bool isolate = true;   // run in a forked child (SimGrid runs once per process)
  double timeout_s = 0;  // for an isolated run; 0 waits for ever
  Faults faults;         // stragglers, degraded links, fail-stops (none by default)
};

struct Result {
  std::string engine;
  double makespan_s = 0;
  std::vector<double> start_s;  // per task
  std::vector<double> end_s;    // per task
  // Bytes carried per link direction over the run: index 2*link (a->b) and 2*link+1 (b->a).
  // Counts every physical transfer a symmetric task stands for.
  std::vector<double> link_bytes;
  // Per link direction, when the engine tracks them (the analytic engine sharing links, and
  // SimGrid; empty otherwise): how long at least one flow was in flight on it, and the most
  // flows in flight on it at once. Analytic: a collective's group counts one per link it
  // loads, a task that stands for several groups as its groups. SimGrid: its own flows (a
  // ring step's channels count one each; the step latency between a ring's steps is not in
  // flight; closed-form collectives, timers there, none).
  std::vector<double> link_busy_s;
  std::vector<double> link_peak_flows;
  // Per link direction, the most bytes/s the tasks in flight at once would put on it each at
  // its own speed alone (the analytic engine, links shared; empty otherwise): a link whose
  // bandwidth is at least this, plus another run's, never slows either.
  std::vector<double> link_peak_demand_Bps;
  // Events the engine processed: tasks for the analytic engine; SimGrid activities
  // (computations, flows) and timers for the SimGrid engine.
  uint64_t activities = 0;
  // A fail-stop (or a link down) ended the iteration early: when, why, and how much of it
  // was done. Tasks that did not finish keep end_s < 0 or an end after stopped_at_s.
  double stopped_at_s = -1;
  std::string stop_cause;
  bool stopped() const { return stopped_at_s >= 0; }
  // Tasks an engine played once for their symmetric groups, or in part for their alike
  // steps, that met other traffic on the way or did not settle into a period
  // (sim/flow_symmetry.h, sim/step_periods.h): the SimGrid engine replays them in full and
  // returns a result where this is empty.
  std::vector<TaskId> replay_in_full;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Throws ModelError if the graph cannot complete (a dependency cycle, or stream orders
  // that contradict the dependencies).
  virtual Result run(const TaskGraph& graph, const Network& net, const EngineOptions& options) const = 0;
};

Registry<Engine>& engines();

// Fills this folder's registries (engines, collective algorithms). Safe to call twice.
void register_builtins();

}  // namespace dejavu::sim
