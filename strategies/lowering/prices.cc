#include "strategies/lowering/prices.h"

#include <algorithm>

namespace dejavu::strategies::lowering {

namespace {
// The forward product of a GEMM op on one GPU, when its shape is known: rows are the tokens
// (or pixels) of the micro-batch's share, split by the tensor-parallel degree as Megatron
// splits it (a row-parallel layer, the one synchronised after its forward, its reduction;
// a column-parallel one its outputs; a replicated one under sequence parallelism its
// rows); a GPU's local experts run as one grouped GEMM, a product per expert.
bool forward_product(const workloads::Op& op, const workloads::ModelGraph& m, const Plan& plan, double b, double t,
                     sim::GemmShape* out) {
  if (op.op_class != sim::OpClass::Gemm || op.weight_rows <= 0 || op.weight_cols <= 0 || op.fwd_flops <= 0)
    return false;
  sim::GemmShape p;
  p.depth = op.weight_rows;
  p.cols = op.weight_cols;
  p.rows = op.fwd_flops * b / (2 * p.depth * p.cols);
  if (op.tp == workloads::TpMode::Replicated)
    p.rows /= t;
  else if (op.tp_sync_fwd)
    p.depth /= t;
  else
    p.cols /= t;
  if (op.expert && m.experts > 0) {
    p.batch = std::max(1.0, static_cast<double>(m.experts) / plan.ep);
    p.rows /= p.batch;
  }
  *out = p;
  return true;
}

// The backward's products: the input gradient (rows x depth, reducing over cols) and the
// weight gradient (depth x cols, reducing over rows).
void backward_products(const sim::GemmShape& f, Pass pass, bool half, sim::Kernel& k) {
  const sim::GemmShape input{f.rows, f.depth, f.cols, f.batch}, weight{f.depth, f.cols, f.rows, f.batch};
  if (!half) {
    k.products[k.product_count++] = input;
    k.products[k.product_count++] = weight;
  } else {
    k.products[k.product_count++] = pass == Pass::BackwardWeight ? weight : input;
  }
}
}  // namespace

sim::Kernel kernel_of(const workloads::Op& op, const workloads::ModelGraph& m, const Plan& plan, Pass pass) {
  if (pass == Pass::ReplayShare && op.sac_replay_share < 1) {
    // a GEMM whose policy saved some of its linears replays the others: their columns,
    // FLOPs and bytes; its input cast again once
    sim::Kernel k = kernel_of(op, m, plan, Pass::Replay);
    k.flops *= op.sac_replay_share;
    k.bytes *= op.sac_replay_share;
    for (int i = 0; i < k.product_count; ++i) k.products[i].cols *= op.sac_replay_share;
    return k;
  }
  const bool in_layer = op.layer >= 0 && op.layer < m.layers;
  const bool split = op.tp == workloads::TpMode::Split || (plan.sequence_parallel && in_layer);
  // Each context rank works on its 1/cp of every sequence; weights are read whole.
  const double t = split ? plan.tp : 1, b = plan.micro_batch_size / static_cast<double>(plan.cp);
  sim::Kernel k;
  k.op_class = op.op_class;
  k.head_dim = op.head_dim;
  k.causal = op.causal;
  const bool narrow = sim::narrow_gemm(m.dtype) && !op.high_precision;
  k.dtype = op.op_class == sim::OpClass::Gemm && narrow ? m.dtype : sim::storage_of(m.dtype);
  const double weights = op.weight_bytes / (op.expert ? plan.ep : 1);  // a GPU's share of the experts
  sim::GemmShape product;
  const bool shaped = forward_product(op, m, plan, b, t, &product);
  // fp8/fp4: each GEMM's activation input cast forward, its output gradient backward (the
  // weights' casts are the optimizer step's, once a step). Under sequence parallelism a
  // column-parallel GEMM's input and a row-parallel one's output gradient are cast on the
  // rank's sequence shard, before the all-gather that carries them quantized (stage_work.cc).
  // Routed experts take their tokens from the expert exchange, not that gather: cast whole.
  const double cast =
      shaped && narrow ? product.batch * (sim::dtype_bytes(sim::storage_of(m.dtype)) + sim::dtype_bytes(m.dtype)) : 0;
  const bool gathered = plan.sequence_parallel && in_layer && op.tp == workloads::TpMode::Split && !op.expert;
  const double shard = gathered ? t : 1;
  if (k.dtype == sim::DType::FP8) k.fp8_recipe = plan.fp8_recipe;
  if (pass == Pass::Forward || pass == Pass::Replay || pass == Pass::ReplayShare || pass == Pass::ReplayKept) {
    k.flops = op.fwd_flops * b / t;
    k.bytes = (op.fwd_bytes * b + weights) / t;
    if (shaped) k.products[k.product_count++] = product;
    k.cast_bytes = cast * product.rows * product.depth / (op.tp_sync_fwd ? 1 : shard);
    return k;
  }
  // A whole backward reads the weights for the input gradient and writes the weight
  // gradient; split, each half of a GEMM's backward does one of the two.
  const bool half = pass != Pass::Backward && has_weight_gradient(op);
  k.flops = op.bwd_flops * b / t / (half ? 2 : 1);
  k.bytes = (op.bwd_bytes * b / (half ? 2 : 1) + weights * (half ? 1 : 2)) / t;
  if (shaped) backward_products(product, pass, half, k);
  if (pass != Pass::BackwardWeight) k.cast_bytes = cast * product.rows * product.cols / (op.tp_sync_fwd ? shard : 1);
  return k;
}

GroupPricer::GroupPricer(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                         int stage, int replica, const std::string& collective_algorithm)
    : model_(model),
      own_(plan.stage_tp.empty() ? Plan{} : plan.at_stage(stage)),
      plan_(plan.stage_tp.empty() ? plan : own_),
      net_(cluster.network),
      algorithm_(sim::collective_algorithms().make(collective_algorithm)),
      ops_(tp_sync_ops(plan)) {
  std::map<std::string, platforms::PerfModel> by_type;
  for (int k = 0; k < plan_.tp * plan_.cp; ++k) {
    const auto& slot = cluster.gpus.at(gpu_index(plan, stage, replica, k));
    perf_.push_back(by_type.try_emplace(slot.spec->name, platforms::perf_model(cluster, *slot.spec)).first->second);
    if (k < plan_.tp) ring_.push_back(slot.host);
  }
}

double GroupPricer::segment_s(const Segment& seg) const {
  double worst = 0;
  for (const auto& pm : perf_) {
    double sum = 0;
    for (int op : seg.ops)
      if (replayed_share(model_.op(op), seg) > 0) sum += pm.time_s(kernel_of(model_.op(op), model_, plan_, seg.pass));
    worst = std::max(worst, sum);
  }
  return worst;
}

SegmentTime GroupPricer::times(const Segment& seg) const {
  SegmentTime worst;
  for (const auto& pm : perf_) {
    SegmentTime t;
    bool first = true;
    for (int op : seg.ops) {
      if (replayed_share(model_.op(op), seg) <= 0) continue;
      const double s = pm.time_s(kernel_of(model_.op(op), model_, plan_, seg.pass));
      t.total_s += s;
      if (model_.op(op).op_class != sim::OpClass::Gemm) continue;
      ++t.gemms;
      if (first) t.first_gemm_s = s;
      first = false;
      t.last_gemm_s = s;
    }
    if (t.total_s > worst.total_s) worst = t;
  }
  return worst;
}

double GroupPricer::sync_s(const Segment& seg) {
  if (plan_.tp <= 1 || seg.sync_bytes_per_sample <= 0) return 0;
  const double scale = plan_.micro_batch_size / plan_.cp;
  auto [it, fresh] = sync_cache_.try_emplace({seg.sync_bytes_per_sample, seg.gather_bytes_per_sample}, 0.0);
  if (fresh)
    for (sim::CollectiveOp op : ops_) {
      const double bytes = seg.sync_bytes_of(op) * scale;
      it->second += sim::algorithm_for(*algorithm_, net_, ring_, op).time_s(net_, ring_, op, bytes);
    }
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
