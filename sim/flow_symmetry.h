// Which communication tasks a flow-level engine may play as their first group alone.
//
// A task standing for several symmetric groups (the data-parallel replicas of a
// tensor-parallel all-gather, folded into one device) moves every group's flows. When the
// groups' flows can never meet anything but their own group's flows, and every group sees
// the same network (the same flows over links of the same bandwidth and latency, met in
// the same pattern), all groups finish together: playing the first one alone gives the same
// times, with a fraction of the flows in flight. Exactness needs, for a comm set:
//   - no link direction its flows cross is crossed by a flow of another comm set, or by two
//     of its own groups (every task of the set, whatever its op or size, counts);
//   - each group's flows, over every template of the set in order, form the same pattern:
//     sizes, dependencies, senders' step latencies and routes, its links numbered by first
//     use, each with the same bandwidth and latency;
//   - no fault touches its hosts or links.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/faults.h"
#include "sim/network.h"

namespace dejavu::sim {

// One task shape's flows, group by group: group g's flows are
// exp.flows[group_begin[g] .. group_begin[g + 1]), its dependencies within its own range.
struct GroupedFlows {
  int comm_set = -1;
  const Expansion* exp = nullptr;
  const std::vector<int32_t>* group_begin = nullptr;
};

// Per comm set (index), whether its groups may be played as the first one alone.
std::vector<char> symmetric_comm_sets(const Network& net, const Faults& faults, const std::vector<GroupedFlows>& shapes,
                                      int comm_set_count);

}  // namespace dejavu::sim
