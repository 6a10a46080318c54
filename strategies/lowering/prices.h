// What one segment's compute costs on its tensor-parallel group (the slowest GPU).
struct SegmentTime {
  double total_s = 0, first_gemm_s = 0, last_gemm_s = 0;
  int gemms = 0;
};

// What the work of one stage costs on one tensor-parallel group, priced once: every
// segment's time (the slowest GPU of the group sets it) and, for the fused lowering and
// the search alike, each block's work items as single tasks (ItemCost: duration with the
// tensor-parallel collectives in closed form, and memory). The one source of these
// prices: lower() and block_items() both read them here.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/collective.h"
#include "strategies/lowering.h"
#include "strategies/stage_work.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::lowering {

// A kernel of `op` for one GPU of the plan in the given pass (its share of the batch,
// of a split op, of the experts).
sim::Kernel kernel_of(const workloads::Op& op, const workloads::ModelGraph& m, const Plan& plan, Pass pass);

class GroupPricer {
 public:
  // The tensor-parallel group of (GPU stage `stage`, replica `replica`).
  GroupPricer(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan, int stage,
              int replica, const std::string& collective_algorithm);
  double segment_s(const Segment& seg) const;  // compute only
  // The segment's compute, and of it its first and last GEMMs (0 without one): what
  // tp_comm_overlap pipelines the all-gather before and the reduce-scatter after with.
  SegmentTime times(const Segment& seg) const;
  double sync_s(const Segment& seg);   // its tensor-parallel synchronisation (0 without)
  BlockItems block(const Block& blk);  // each kind of work item over this block

 private:
  void add(ItemCost& item, const Segment& seg);
  const workloads::ModelGraph& model_;
  Plan own_;          // the stage's plan when stage_tp gives it a tensor parallelism of its own
  const Plan& plan_;  // the plan as this stage sees it (own_, or the plan)
  const sim::Network& net_;
  std::vector<platforms::PerfModel> perf_;  // per GPU of the group (context ranks included)
  std::vector<int> ring_;                   // the tensor-parallel ring of context rank 0
  std::unique_ptr<sim::CollectiveAlgorithm> algorithm_;
  std::vector<sim::CollectiveOp> ops_;
  std::map<std::pair<double, double>, double> sync_cache_;  // (sync, gather) bytes per sample -> s
};

}  // namespace dejavu::strategies::lowering
