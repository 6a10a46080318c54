#include "strategies/lowering/labels.h"

namespace dejavu::strategies::lowering {

namespace {
std::string text_of(const Segment& seg, TaskKind kind, sim::CollectiveOp op) {
  const std::string name = sim::to_string(op);
  switch (kind) {
    case TaskKind::Compute:
      return seg.name;
    case TaskKind::ExchangeBefore:
      return "ep " + name + " before " + seg.name;
    case TaskKind::ExchangeAfter:
      return "ep " + name + " after " + seg.name;
    case TaskKind::TensorSync:
      return "tp " + name + " after " + seg.name;
    case TaskKind::ContextGather:
    case TaskKind::ContextScatter:
      return "cp " + name + " " + seg.name;
    case TaskKind::RingSend:
      return "cp ring send " + seg.name;
  }
  return seg.name;
}
}  // namespace

sim::LabelId SegmentLabels::of(const Segment& seg, TaskKind kind, sim::CollectiveOp op) {
  auto [it, fresh] = ids_.try_emplace({&seg, kind, op}, -1);
  if (fresh) it->second = g_.label(text_of(seg, kind, op));
  return it->second;
}

}  // namespace dejavu::strategies::lowering
