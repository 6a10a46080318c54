// Task labels, interned once per segment and kind of task rather than once per task (the
// 175B plan emits a quarter of a million tasks from a few hundred segments).
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "sim/task_graph.h"
#include "strategies/stage_work.h"

namespace dejavu::strategies::lowering {

enum class TaskKind { Compute, ExchangeBefore, ExchangeAfter, TensorSync, ContextGather, ContextScatter, RingSend };

class SegmentLabels {
 public:
  explicit SegmentLabels(sim::TaskGraph& g) : g_(g) {}
  // "fwd L3.qkv..L3.proj", "tp all_reduce after ...", "ep all_to_all before ...", ...
  sim::LabelId of(const Segment& seg, TaskKind kind, sim::CollectiveOp op = sim::CollectiveOp::AllReduce);

 private:
  sim::TaskGraph& g_;
  std::map<std::tuple<const Segment*, TaskKind, sim::CollectiveOp>, sim::LabelId> ids_;
};

}  // namespace dejavu::strategies::lowering
