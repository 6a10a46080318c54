// Collective algorithms. Each is a schedule: a list of steps, each a set of
// point-to-point transfers that run together. From the schedule come all three fidelities
// (DESIGN.md), so they agree by construction where nothing contends:
//   closed  sum over steps of (slowest transfer's latency + step latency) + (most loaded
//           link direction's bytes / its bandwidth): alpha-beta on the bottleneck;
//   flow    the schedule's traffic summed per host pair as concurrent flows, plus the
//           latencies of the steps beyond the first;
//   step    every transfer as a flow that waits for the previous step of its sender.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/link_load.h"
#include "sim/network.h"
#include "sim/registry.h"
#include "sim/task_graph.h"

namespace dejavu::sim {

enum class Fidelity { Closed, Flow, Step };
Fidelity parse_fidelity(const std::string& name);  // throws Error listing the valid names

struct Transfer {
  int src = -1, dst = -1;
  double bytes = 0;
};

// Transfers that run together, `repeat` times back to back: a ring's 2(n-1) steps are one
// step repeated, so a schedule (and what is derived from it) stays linear in the group.
struct CommStep {
  std::vector<Transfer> transfers;
  int repeat = 1;
};

struct CommSchedule {
  std::vector<CommStep> steps;
  std::vector<Transfer>& add_step(int repeat = 1) { return steps.emplace_back(CommStep{{}, repeat}).transfers; }
};

// One point-to-point flow of an expansion. It starts once the flows it depends on have
// finished (Expansion::deps[dep_begin .. dep_begin + dep_count), indices into the same
// expansion's flows), plus its sender's step latency.
struct FlowSpec {
  int src = -1, dst = -1;
  double bytes = 0;
  int32_t dep_begin = 0, dep_count = 0;
};

// A run of alike steps (a ring's 2(n-1)) expanded in part: `steps` of them, from flow
// `first_flow`, `per_step` flows each in the same order; `skipped` more were left out.
struct AlikeSteps {
  int32_t first_flow = 0, per_step = 0, steps = 0;
  int64_t skipped = 0;
};

struct Expansion {
  std::vector<FlowSpec> flows;
  std::vector<int32_t> deps;
  double extra_latency_s = 0;   // added after the last flow (flow fidelity's step latencies)
  std::vector<AlikeSteps> cut;  // Step fidelity with `keep_alike`: the runs cut short
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // Whether it can run `op` over `group` (some need a power of two, or equal servers).
  virtual bool supports(const Network& net, const std::vector<int>& group, CollectiveOp op) const = 0;
  // The steps; throws Error if unsupported. `bytes` as in CollectiveOp's comment.
  virtual CommSchedule schedule(const Network& net, const std::vector<int>& group, CollectiveOp op,
                                double bytes) const = 0;

  // Derived from the schedule; algorithms may override with an equal, faster closed form.
  virtual double time_s(const Network& net, const std::vector<int>& group, CollectiveOp op, double bytes) const;
  void add_link_load(const Network& net, const std::vector<int>& group, CollectiveOp op, double bytes,
                     LinkLoad& load) const;
  // Appends the flows of one group's collective at Flow or Step fidelity to `out`. With
  // `keep_alike` > 0, Step keeps at most that many of a run of alike steps (out.cut says
  // which were cut): a flow-level engine that finds them periodic plays the rest as time.
  virtual void expand(const Network& net, const std::vector<int>& group, CollectiveOp op, double bytes,
                      Fidelity fidelity, Expansion& out, int keep_alike = 0) const;
  // The algorithm `auto` resolves to for these arguments (itself for the others).
  virtual const CollectiveAlgorithm& resolve(const Network&, const std::vector<int>&, CollectiveOp, double) const {
    return *this;
  }
  virtual std::string name() const = 0;
  // NCCL's default (ring): an all-reduce over every GPU of a switch that reduces (`nvls`)
  // runs in the switch instead, as NCCL runs it with NVLS enabled (algorithm_for does).
  virtual bool yields_to_switch() const { return false; }
};

// `chosen` where it can run `op` over `group`, else `auto`'s pick (a plan's ring setting
// still lets an all-to-all run); `nvls` where `chosen` yields to a switch that reduces.
const CollectiveAlgorithm& algorithm_for(const CollectiveAlgorithm& chosen, const Network& net,
                                         const std::vector<int>& group, CollectiveOp op);

Registry<CollectiveAlgorithm>& collective_algorithms();
void register_collective_algorithms();  // called by sim::register_builtins()

// Closed-form time of a schedule on the network (see the file comment).
double schedule_time_s(const Network& net, const CommSchedule& s);

// Point-to-point: the sender's step latency, the route's latency, bytes over its bottleneck.
double transfer_time_s(const Network& net, int src, int dst, double bytes);
void add_transfer_load(const Network& net, int src, int dst, double bytes, LinkLoad& load);

// nccl-tests' bus-bandwidth factor: busbw = algbw x factor (2(n-1)/n for all-reduce).
double bus_bandwidth_factor(CollectiveOp op, int n);

}  // namespace dejavu::sim
