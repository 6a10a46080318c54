#include "strategies/lowering/prices.h"

#include <algorithm>

namespace dejavu::strategies::lowering {

sim::Kernel kernel_of(const workloads::Op& op, const workloads::ModelGraph& m, const Plan& plan, Pass pass) {
  const bool in_layer = op.layer >= 0 && op.layer < m.layers;
  const bool split = op.tp == workloads::TpMode::Split || (plan.sequence_parallel && in_layer);
  // Each context rank works on its 1/cp of every sequence; weights are read whole.
  const double t = split ? plan.tp : 1, b = plan.micro_batch_size / static_cast<double>(plan.cp);
  sim::Kernel k;
  k.op_class = op.op_class;
  k.dtype = m.dtype;
  const double weights = op.weight_bytes / (op.expert ? plan.ep : 1);  // a GPU's share of the experts
  if (pass == Pass::Forward || pass == Pass::Replay) {
    k.flops = op.fwd_flops * b / t;
    k.bytes = (op.fwd_bytes * b + weights) / t;
    return k;
  }
  // A whole backward reads the weights for the input gradient and writes the weight
  // gradient; split, each half of a GEMM's backward does one of the two.
  const bool half = pass != Pass::Backward && has_weight_gradient(op);
  k.flops = op.bwd_flops * b / t / (half ? 2 : 1);
  k.bytes = (op.bwd_bytes * b / (half ? 2 : 1) + weights * (half ? 1 : 2)) / t;
  return k;
}

GroupPricer::GroupPricer(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                         int stage, int replica, const std::string& collective_algorithm)
    : model_(model),
      plan_(plan),
      net_(cluster.network),
      algorithm_(sim::collective_algorithms().make(collective_algorithm)),
      ops_(tp_sync_ops(plan)) {
  std::map<std::string, platforms::PerfModel> by_type;
  for (int k = 0; k < plan.tp * plan.cp; ++k) {
    const auto& slot = cluster.gpus.at(gpu_index(plan, stage, replica, k));
    perf_.push_back(by_type.try_emplace(slot.spec->name, platforms::perf_model(cluster, *slot.spec)).first->second);
    if (k < plan.tp) ring_.push_back(slot.host);
  }
}

double GroupPricer::segment_s(const Segment& seg) const {
  double worst = 0;
  for (const auto& pm : perf_) {
    double sum = 0;
    for (int op : seg.ops) sum += pm.time_s(kernel_of(model_.op(op), model_, plan_, seg.pass));
    worst = std::max(worst, sum);
  }
  return worst;
}

double GroupPricer::sync_s(const Segment& seg) {
  if (plan_.tp <= 1 || seg.sync_bytes_per_sample <= 0) return 0;
  const double bytes = seg.sync_bytes_per_sample * plan_.micro_batch_size / plan_.cp;
  auto [it, fresh] = sync_cache_.try_emplace(bytes, 0.0);
  if (fresh)
    for (sim::CollectiveOp op : ops_)
      it->second += sim::algorithm_for(*algorithm_, net_, ring_, op).time_s(net_, ring_, op, bytes);
  return it->second;
}

// A segment in a fused item: its compute and memory, then its synchronisation.
void GroupPricer::add(ItemCost& item, const Segment& seg) {
  const double b = plan_.micro_batch_size;
  item.add_compute(segment_s(seg), seg.alloc_per_sample * b, seg.free_per_sample * b);
  item.duration_s += sync_s(seg);
}

BlockItems GroupPricer::block(const Block& blk) {
  BlockItems c;
  c.is_layer = blk.is_layer;
  c.weight_pass = !blk.bwd_weight.empty();
  c.params_per_gpu = blk.params_per_gpu;
  for (const Segment& seg : blk.fwd) add(c.fwd, seg);
  for (const Segment& seg : blk.recompute) {  // the replay runs first in either backward
    add(c.bwd, seg);
    add(c.bwd_input, seg);
  }
  for (const Segment& seg : blk.bwd) add(c.bwd, seg);
  for (const Segment& seg : blk.bwd_input) add(c.bwd_input, seg);
  for (const Segment& seg : blk.bwd_weight) add(c.bwd_weight, seg);
  return c;
}

}  // namespace dejavu::strategies::lowering
