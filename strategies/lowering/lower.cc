// lower(): the job's layout, then the passes: each replica class's work items stage by
// stage and their dependencies across stages, then the gradient pass; and what the search
// reads without lowering (block_items, block_costs).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "sim/limits.h"
#include "strategies/lowering.h"
#include "strategies/lowering/gradients.h"
#include "strategies/lowering/labels.h"
#include "strategies/lowering/layout.h"
#include "strategies/lowering/prices.h"
#include "strategies/lowering/work_items.h"
#include "strategies/lowering/zero3.h"

namespace dejavu::strategies {

namespace {

// Refuses, before building anything, a plan whose task graph would not fit a laptop's
// memory (limits::kMaxTasks): an upper bound on the tasks per replica class, each work
// item's segments with their collectives, times the microbatches.
void check_task_count(const lowering::JobLayout& L) {
  const Plan& plan = L.plan;
  const double per_segment = 1 + 2 + (plan.ep > 1 ? 2 : 0) + (plan.cp > 1 ? 2 * plan.cp : 0);
  double per_microbatch = 0;
  for (const StageWork& w : L.work)
    for (const Block& b : w.blocks) {
      const double segments =
          b.fwd.size() + b.bwd.size() + b.recompute.size() + b.bwd_input.size() + b.bwd_weight.size();
      per_microbatch += (L.fused ? 0 : segments * per_segment) + (plan.zero >= 3 ? 4 : 0);
    }
  if (L.fused) per_microbatch += 3.0 * L.work.size();
  const double tasks = per_microbatch * L.m * L.classes_count();
  if (tasks > limits::kMaxTasks) {
    auto it = plan.where.find("global_batch_size");
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the plan lowers to about %.3g tasks; dejavu simulates at most %.3g (fewer "
                  "microbatches per replica, fewer layers per stage, or a larger micro_batch_size)",
                  tasks, limits::kMaxTasks);
    throw ConfigError(it != plan.where.end() ? it->second : SourceLoc{plan.file, 0, 0}, "global_batch_size", buf);
  }
}

// Megatron's FLOP count, and with recomputation the hardware's: one copy of the model,
// however many pipelines run it.
void count_flops(LoweredJob& job, const lowering::JobLayout& L) {
  const double samples = L.plan.global_batch_size;
  job.model_flops = L.model.model_flops(samples);
  job.hardware_flops = job.model_flops;
  for (int vs = 0; vs < L.Vp; ++vs)
    for (const Block& blk : L.work[vs].blocks)
      for (const Segment& seg : blk.recompute)
        for (int op : seg.ops)
          if (L.model.op(op).counts_as_model_flops)
            job.hardware_flops += L.model.op(op).model_flops() * replayed_share(L.model.op(op), seg) * samples;
}

}  // namespace

namespace {
// Per sample, what offloaded activations move one way: the item's stored activations, or
// those of its first `layers` layers.
double offloaded_per_sample(const StageWork& w, int layers) {
  if (layers == 0) return w.stored_activation_per_sample;
  double bytes = 0;
  for (const Block& blk : w.blocks)
    if (blk.is_layer && layers-- > 0) bytes += blk.stored_per_sample();
  return bytes;
}

// Per GPU of stage s in replica class c: the most offloaded activation bytes in CPU memory at
// once, in the order the stage runs its items: an item's from its forward's end until its
// backward starts (its copy down starts after the one and its copy back ends before the other,
// so the bound is never below what the run holds).
double held_on_host(const lowering::JobLayout& L, int s, int c) {
  double held = 0, most = 0;
  for (const WorkItem& item : L.schedule->order(s, L.p, L.m_of(c), L.v)) {
    if (item.backward && item.part == BackwardPart::Weight) continue;
    const int vs = L.schedule->virtual_stage(item.chunk, s, L.p);
    const double bytes =
        offloaded_per_sample(L.work_at(item.microbatch)[vs], L.plan.offload_activation_layers) * L.micro_batch;
    held += item.backward ? -bytes : bytes;
    most = std::max(most, held);
  }
  return most;
}

// What the fullest server holds: the sum of its GPUs' most.
double activation_host_bytes(const lowering::JobLayout& L) {
  std::vector<double> server(static_cast<size_t>(L.cluster.server_count()), 0.0);
  for (int s = 0; s < L.p; ++s)
    for (int c = 0; c < L.classes_count(); ++c) {
      const double held = held_on_host(L, s, c);
      for (int r : L.classes[c])
        for (int k = 0; k < L.K_of(s); ++k) server.at(L.cluster.gpus[L.gpu(s, r, k)].server) += held;
    }
  return server.empty() ? 0 : *std::max_element(server.begin(), server.end());
}

// The offloaded optimizer and parameters of the stage whose GPUs hold the most of them.
OffloadUse offload_use(const lowering::JobLayout& L) {
  OffloadUse use;
  use.tier = L.plan.offload_optimizer;
  use.parameters = L.plan.offload_parameters;
  double most = -1;
  for (int s = 0; s < L.p; ++s) {
    const double stepped = L.plan.zero >= 1 ? L.params[s] / L.dps : L.params[s];
    const platforms::ServerGroup& server = L.cluster.group_of(L.gpu(s, 0, 0));
    const OffloadCost cost =
        use.tier.empty() ? OffloadCost{} : offload_cost(use.tier, server, stepped, L.element_bytes, L.gradient_bytes);
    const double params = use.parameters.empty() ? 0 : server.gpus_per_server * stepped * L.element_bytes;
    if (cost.host_held_bytes + cost.nvme_held_bytes + params <= most) continue;
    most = cost.host_held_bytes + cost.nvme_held_bytes + params;
    use.cost = cost;
    use.parameter_held_bytes = params;
    // A gather per block before each forward and each backward of every work item.
    use.parameter_pcie_bytes = use.parameters.empty() ? 0 : 2.0 * L.m * stepped * L.element_bytes;
    use.host_capacity_bytes = server.host.memory_bytes;
    use.nvme_capacity_bytes = server.host.nvme_bytes;
  }
  use.activations = L.plan.offload_activations;
  use.activation_layers = L.plan.offload_activation_layers;
  for (int s = 0; s < L.p && !use.activations.empty(); ++s) {
    double moved = 0;  // every item of the stage's chunks, down and back
    for (int j = 0; j < L.m; ++j)
      for (int vs = s; vs < L.V; vs += L.p)
        if (L.gpu_stage(vs) == s)
          moved += 2 * offloaded_per_sample(L.work_at(j)[vs], use.activation_layers) * L.micro_batch;
    use.activation_pcie_bytes = std::max(use.activation_pcie_bytes, moved);
  }
  if (!use.activations.empty()) use.activation_held_bytes = activation_host_bytes(L);
  return use;
}
}  // namespace

LoweredJob lower(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                 const LowerOptions& options) {
  validate(plan, model, cluster);
  lowering::JobLayout L(model, cluster, plan, options);
  check_task_count(L);
  LoweredJob job;
  sim::TaskGraph& g = job.graph;
  L.add_devices(job);
  g.label("send activations to next stage");
  g.label("send gradients to previous stage");
  std::vector<lowering::Zero3Stage> zero3;
  if (lowering::Zero3Stage::applies(L))
    for (int s = 0; s < L.p; ++s) zero3.emplace_back(g, L, s);
  lowering::SegmentLabels labels(g);
  lowering::ItemTasks items(L);
  for (int c = 0; c < L.classes_count(); ++c) {
    lowering::ClassItems emit(g, L, labels, zero3, items, c);
    for (int s = 0; s < L.p; ++s) emit.emit_stage(s);
    emit.link_stages();
  }
  lowering::GradientPass(g, L, items, zero3).emit();
  g.finalize();
  count_flops(job, L);
  if (!plan.offload_optimizer.empty() || !plan.offload_parameters.empty() || !plan.offload_activations.empty())
    job.offload = offload_use(L);
  job.token_slices = L.slices.lengths;
  job.token_slices_chosen = L.slices.chosen;
  return job;
}

std::vector<BlockItems> block_items(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                    const Plan& plan, int stage, const std::string& collective_algorithm,
                                    bool split_backward, int replica) {
  Plan whole = plan.stage_tp.empty() ? plan : plan.at_stage(stage);  // the stage's own tensor degree
  whole.pp = 1;
  whole.virtual_stages = 1;
  whole.stages.clear();
  whole.recompute = plan.recompute_of(stage);  // the stage's own mode, on every layer
  whole.stage_recompute.clear();
  lowering::GroupPricer pricer(model, cluster, plan, stage, replica, collective_algorithm);
  std::vector<BlockItems> out;
  const std::vector<StageWork> work = build_stage_work(model, whole, split_backward);
  for (const Block& blk : work.at(0).blocks) out.push_back(pricer.block(blk));
  return out;
}

std::vector<BlockCost> block_costs(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                   const Plan& plan, int stage, const std::string& collective_algorithm, int replica) {
  std::vector<BlockCost> out;
  for (const BlockItems& blk : block_items(model, cluster, plan, stage, collective_algorithm, false, replica)) {
    BlockCost c;
    c.is_layer = blk.is_layer;
    c.params_per_gpu = blk.params_per_gpu;
    c.time_s = blk.fwd.duration_s + blk.bwd.duration_s;
    c.stored_bytes = blk.fwd.level;
    c.transient_bytes = blk.bwd.peak;
    out.push_back(c);
  }
  return out;
}

ModelStateBytes model_state_per_param(sim::DType dtype, int zero, double shards, double gradient_bytes,
                                      double state_bytes, bool fp8_params) {
  const double e = sim::dtype_bytes(sim::storage_of(dtype));
  const double g = gradient_bytes > 0 ? gradient_bytes : e;
  // fp8/fp4 GEMMs: beside the 16-bit weight, its narrow copy and that copy's transpose
  // (Transformer Engine keeps both for the step's forward and backward GEMMs); fp8 primary
  // weights are the narrow copy and its transpose alone.
  const double narrow = sim::narrow_gemm(dtype) ? 2 * sim::dtype_bytes(dtype) : 0;
  const double weights = (fp8_params ? 0 : e) + narrow;
  // A master copy (unless the model is fp32 and its own), momentum and variance.
  const double optimizer = (e < 4 ? 3 : 2) * state_bytes;
  return {weights / (zero >= 3 ? shards : 1), g / (zero >= 2 ? shards : 1), optimizer / (zero >= 1 ? shards : 1)};
}

ModelStateBytes model_state_per_param(sim::DType dtype, const Plan& plan, double shards) {
  return model_state_per_param(dtype, plan.zero, shards, plan.gradient_element_bytes(dtype),
                               plan.optimizer_state_bytes(), plan.fp8_param_gather);
}

std::vector<sim::CollectiveOp> tp_sync_ops(const Plan& plan) {
  if (plan.sequence_parallel) return {sim::CollectiveOp::ReduceScatter, sim::CollectiveOp::AllGather};
  return {sim::CollectiveOp::AllReduce};
}

}  // namespace dejavu::strategies
