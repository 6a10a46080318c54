// Which communication tasks a flow-level engine may play in part.
//
// A task standing for several symmetric groups (the data-parallel replicas of a
// tensor-parallel all-gather, folded into one device) moves every group's flows. Its groups
// fall into classes: groups whose flows cross a common link direction belong together (the
// eight tensor ranks of one replica sending to the next pipeline stage share their server's
// uplink), over every task of its comm set. When every class sees the same network (the same
// flows over links of the same bandwidth and latency, met in the same pattern) and nothing
// else crosses their links while they run, all classes finish together: playing the first
// class alone gives the same times with a fraction of the flows in flight. A comm set is
//   - played once when, besides, no flow of any other comm set ever crosses its links (its
//     tasks can never meet anything else);
//   - speculated when other comm sets cross its links: each task is played once and a
//     SymmetryGuard watches its links while it runs; a task that met anything else is
//     replayed in full in a new run (the SimGrid engine reruns until no task breaks);
//   - played in full otherwise: one class, classes that differ, or a fault on its hosts or
//     links.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/collective.h"
#include "sim/faults.h"
#include "sim/network.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

// One task shape's flows, group by group: group g's flows are
// exp.flows[group_begin[g] .. group_begin[g + 1]), its dependencies within its own range.
struct GroupedFlows {
  int comm_set = -1;
  const Expansion* exp = nullptr;
  const std::vector<int32_t>* group_begin = nullptr;
};

enum class Play : uint8_t { Every, Once, Speculate };

struct SetSymmetry {
  Play play = Play::Every;
  // Its groups by class, classes in order of their lowest group, each ascending (Once and
  // Speculate: at least two, all alike).
  std::vector<std::vector<int>> classes;
};

// Per comm set (index).
std::vector<SetSymmetry> symmetric_comm_sets(const Network& net, const Faults& faults,
                                             const std::vector<GroupedFlows>& shapes, int comm_set_count);

// Watches the link directions of speculated tasks. Flows and claims carry a kind: who they
// belong to (the SimGrid engine: 2·set for a task played once, 2·set + 1 for a task of the
// set played in full). A task claims every direction any of its classes crosses, from its
// start to its end; it breaks when a flow or claim of another kind is on one of them.
class SymmetryGuard {
 public:
  explicit SymmetryGuard(size_t directions) : claims_(directions), flows_(directions) {}
  void claim(TaskId task, int kind, const std::vector<int32_t>& dirs);
  void release(TaskId task, const std::vector<int32_t>& dirs);
  void flow_enters(int kind, const int32_t* dirs, size_t n);
  void flow_leaves(int kind, const int32_t* dirs, size_t n);
  const std::set<TaskId>& broken() const { return broken_; }

 private:
  struct Claim {
    TaskId task;
    int kind;
  };
  std::vector<std::vector<Claim>> claims_;               // per direction
  std::vector<std::vector<std::pair<int, int>>> flows_;  // per direction: (kind, flows in flight)
  std::set<TaskId> broken_;
};

}  // namespace dejavu::sim
