// Link sharing for the analytic engine: a fluid model of communication tasks in flight.
//
// Each communication task (a transfer, or a collective over every group its comm set stands
// for, folded replicas included) runs alone at its closed-form duration d and so loads each
// link direction l at u_l = bytes it puts on l / d, never above the link's bandwidth C_l.
// While several run at once each progresses at a rate r in (0, 1] of its alone speed, the
// rates max-min fair over the links (progressive filling, as SimGrid's LMM shares a link
// among flows): raise every rate together until some link is full (sum of r·u_l = C_l),
// fix the rates of the tasks crossing it, and go on with the rest, none above 1. A task that
// shares no full link keeps rate 1, so runs without contention are priced exactly as alone.
// A degraded link (a fault window) offers its bandwidth times the window's factor, so a task
// alone on it slows to the factor, from the moment the window opens.
#pragma once

#include <utility>
#include <vector>

#include "sim/link_load.h"
#include "sim/network.h"

namespace dejavu::sim {

// A task's load alone: (link direction 2·link + reverse, bytes per second) pairs.
using LinkDemand = std::vector<std::pair<int, double>>;

// From the bytes per link direction a task moves in `duration_s` alone: each over the
// duration, capped at the link's bandwidth; ascending by direction.
LinkDemand link_demand(const Network& net, const LinkLoad& bytes, double duration_s);

// Max-min fair rates (each in (0, 1]) for tasks running at once over `net`'s links, each
// link direction l carrying its bandwidth times scale[l] (a degraded link; empty: all 1).
std::vector<double> fair_rates(const Network& net, const std::vector<const LinkDemand*>& tasks,
                               const std::vector<double>& scale = {});

// One flow of a task that moves several at once (a parameter server's pushes, gossip's
// exchanges): the link directions of its route and its bytes.
struct Flow {
  std::vector<int> links;
  double bytes = 0;
};

// When the last of `flows` arrives if they start together and share every link max-min fair
// in bytes per second (each flow's share of a full link equal), rates recomputed as flows
// finish: the fluid model SimGrid solves, latency left out. Flows over no link take no time.
double fluid_drain_s(const Network& net, const std::vector<Flow>& flows);

}  // namespace dejavu::sim
