#include "strategies/lowering/gradients.h"

#include <algorithm>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "strategies/data_parallel.h"

namespace dejavu::strategies {

double optimizer_bytes_per_param(sim::DType dtype, double state_bytes, bool fp8_params) {
  const double casts = sim::narrow_gemm(dtype) && !fp8_params ? 2 + 2 * sim::dtype_bytes(dtype) : 0;
  const double state = 6 * state_bytes;  // master weight, momentum and variance, each read and written
  return (dtype == sim::DType::FP16 ? 22 : 14) + state + casts;
}

double optimizer_bytes_per_param(sim::DType dtype, const Plan& plan) {
  return optimizer_bytes_per_param(dtype, plan.optimizer_state_bytes(), plan.fp8_param_gather);
}

namespace lowering {

GradientPass::GradientPass(sim::TaskGraph& g, const JobLayout& L, const ItemTasks& items,
                           const std::vector<Zero3Stage>& zero3)
    : g_(g), L_(L), items_(items), zero3_(zero3) {}

void GradientPass::emit() {
  opt_label_ = g_.label("optimizer step");
  pair_syncs();
  for (int s = 0; s < L_.p; ++s) emit_stage(s);
}

// A step calibration's host time an iteration (Efficiency::step_overhead_s), after the step.
void GradientPass::host_overhead(int s, int c, sim::TaskId step) {
  const double seconds = perf_model(s, c).step_overhead_s();
  if (seconds <= 0) return;
  const sim::TaskId host =
      g_.add_compute(L_.dev[s][c], L_.streams.compute, seconds, g_.label("host overhead (step calibration)"), -1);
  g_.depend(step, host);
}

// The price list of stage s's GPU class c (its GPU type's, calibrations applied).
platforms::PerfModel GradientPass::perf_model(int s, int c) const {
  return platforms::perf_model(L_.cluster, *L_.cluster.gpus[L_.gpu(s, L_.classes[c][0], 0)].spec);
}

double GradientPass::time_s(int s, int c, const sim::Kernel& k) const { return perf_model(s, c).time_s(k); }

// Bidirectional pipelines: stage k's weights live on GPU k (down) and GPU p - 1 - k (up)
// of every replica; GPU s all-reduces its down stage's gradients with the GPUs holding
// the same stage, and steps once both of its stages' all-reduces are done.
void GradientPass::pair_syncs() {
  pair_sync_.assign(L_.pipes > 1 ? L_.p : 0, -1);
  for (int s = 0; s < static_cast<int>(pair_sync_.size()); ++s) {
    const int mirror = L_.schedule->gpu_of(L_.Vp + s, L_.p);  // where the up pipeline runs stage s
    sim::CommSet set;
    for (int k = 0; k < L_.K_of(s); ++k) {
      std::vector<int> ring;
      for (int r = 0; r < L_.d; ++r) ring.push_back(L_.host(s, r, k));
      for (int r = 0; r < L_.d; ++r) ring.push_back(L_.host(mirror, r, k));
      set.groups.push_back(ring);
    }
    std::vector<sim::DeviceId> devices = L_.dev[s];
    if (mirror != s) devices.insert(devices.end(), L_.dev[mirror].begin(), L_.dev[mirror].end());
    pair_sync_[s] = g_.add_collective(g_.add_participants(devices), L_.streams.dp, sim::CollectiveOp::AllReduce,
                                      g_.add_comm_set(std::move(set)), L_.work[s].params_per_gpu * L_.gradient_bytes,
                                      g_.label("chimera gradient all-reduce (both copies of the stage)"), -1);
    for (int x : {s, mirror})
      for (sim::TaskId id : items_.last_backwards[x]) g_.depend(id, pair_sync_[s]);
  }
}

// A data-parallel collective over the gradients' holders: the dense part over every
// replica (HSDP: its shard group, a reduction then across the groups), the experts' part
// over the replicas holding the same experts.
std::vector<sim::TaskId> GradientPass::dp_collective(int s, sim::CollectiveOp op, const std::string& label,
                                                     double bytes, double expert_bytes, sim::StreamId stream) {
  if (stream < 0) stream = L_.streams.dp;
  std::vector<sim::TaskId> out;
  const double dense = bytes - expert_bytes;
  if (dense > 0 && L_.dps > 1)
    out.push_back(g_.add_collective(g_.add_participants(L_.dev[s]), stream, op, g_.add_comm_set(L_.dp_rings(s)), dense,
                                    g_.label(label), -1));
  if (dense > 0 && op == sim::CollectiveOp::ReduceScatter && L_.plan.hybrid_sharded()) {
    // HSDP: the reduced shard then all-reduced with the same shard of the other groups
    const sim::TaskId across = g_.add_collective(g_.add_participants(L_.dev[s]), stream, sim::CollectiveOp::AllReduce,
                                                 g_.add_comm_set(L_.across_shard_rings(s)), dense / L_.dps,
                                                 g_.label(label + " (across shard groups)"), -1);
    if (L_.dps > 1) g_.depend(out.back(), across);
    out.push_back(across);
  }
  if (expert_bytes > 0 && L_.dpe > 1)
    out.push_back(g_.add_collective(g_.add_participants(L_.dev[s]), stream, op, g_.add_comm_set(L_.expert_rings(s)),
                                    expert_bytes, g_.label("expert " + label), -1));
  return out;
}

// A stage's blocks in gradient buckets (Megatron-Core's param-and-grad buffer): in the
// order the backward completes them, a bucket closed once it holds `gradient_bucket_bytes`.
std::vector<GradientPass::Bucket> GradientPass::bucket_blocks(int s) const {
  const double e = L_.gradient_bytes, size = L_.plan.gradient_bucket_bytes(e);
  std::vector<Bucket> out(1);
  for (int vs = s + L_.p * (L_.v - 1); vs >= s; vs -= L_.p)
    for (size_t bi = L_.work[vs].blocks.size(); bi-- > 0;) {
      Bucket& b = out.back();
      b.bytes += L_.work[vs].blocks[bi].params_per_gpu * e;
      if (L_.plan.ep > 1) b.expert_bytes += L_.work[vs].blocks[bi].expert_params_per_gpu * e;
      b.blocks.emplace_back(vs, bi);
      if (b.bytes >= size) out.emplace_back();
    }
  if (out.back().bytes <= 0) out.pop_back();
  return out;
}

// Each bucket all-reduced (or reduce-scattered under ZeRO) as soon as its blocks'
// gradients are complete, under the remaining backward.
std::vector<sim::TaskId> GradientPass::buckets(int s, std::vector<double>* shares) {
  std::vector<sim::TaskId> synced;
  const bool zero = L_.plan.zero >= 1;
  const auto op = zero ? sim::CollectiveOp::ReduceScatter : sim::CollectiveOp::AllReduce;
  const double e = L_.gradient_bytes;
  for (const Bucket& b : bucket_blocks(s)) {
    const std::vector<sim::TaskId> ids = dp_collective(s, op, "dp gradient bucket", b.bytes, b.expert_bytes);
    if (shares)  // the bucket's part of the stepped shard, with its last collective
      for (size_t i = 0; i < ids.size(); ++i)
        shares->push_back(
            i + 1 < ids.size()
                ? 0
                : ((b.bytes - b.expert_bytes) / (zero ? L_.dps : 1) + b.expert_bytes / (zero ? L_.dpe : 1)) / e);
    for (sim::TaskId id : ids) {
      for (const auto& [vs, bi] : b.blocks)
        for (int c = 0; c < L_.classes_count(); ++c)
          if (items_.grads_ready[c][vs][bi] >= 0) g_.depend(items_.grads_ready[c][vs][bi], id);
      synced.push_back(id);
    }
  }
  for (sim::TaskId id : items_.last_backwards[s])  // and nothing steps before every backward
    if (!synced.empty()) g_.depend(id, synced.back());
  return synced;
}

// The sync topology's exchange of the (possibly compressed) gradients; `compressed` is
// the buffer the compression holds until the optimizer step.
std::vector<sim::TaskId> GradientPass::sync_topology(int s, double& compressed) {
  const Plan& plan = L_.plan;
  const double e = L_.gradient_bytes, grad_bytes = L_.params[s] * e;
  const double expert_grad_bytes = (plan.ep > 1 ? L_.expert_params[s] : 0) * e;
  std::vector<std::pair<double, double>> matrices;
  for (int vs = s; vs < L_.V; vs += L_.p)
    matrices.insert(matrices.end(), L_.work[vs].matrices.begin(), L_.work[vs].matrices.end());
  const Compression z = compress(plan.data_parallel, grad_bytes, plan.gradient_dtype(L_.model.dtype), matrices);
  std::vector<sim::TaskId> ready = items_.last_backwards[s];
  if (plan.data_parallel.compression != "none") {
    ready.clear();
    for (int c = 0; c < L_.classes_count(); ++c) {
      const sim::TaskId id =
          g_.add_compute(L_.dev[s][c], L_.streams.compute, time_s(s, c, z.kernel),
                         g_.label("compress gradients (" + plan.data_parallel.compression + ")"), -1);
      g_.add_memory(id, z.wire_bytes, 0);
      for (sim::TaskId b : items_.last_backwards[s]) g_.depend(b, id);
      ready.push_back(id);
    }
    compressed = z.wire_bytes;
  }
  std::vector<std::vector<int>> hosts;  // every (replica, context rank) is a gradient holder
  for (int r = 0; r < L_.d; ++r)
    for (int x = 0; x < L_.cp; ++x) {
      hosts.emplace_back();
      for (int k = 0; k < L_.t_of(s); ++k) hosts.back().push_back(L_.host(s, r, x * L_.t_of(s) + k));
    }
  // The experts' gradients are shared only by the replicas holding the same experts: they
  // get their own exchange, of the same compression as the rest.
  const double expert_wire = grad_bytes > 0 ? z.wire_bytes * expert_grad_bytes / grad_bytes : 0;
  SyncContext ctx{g_, L_.streams.dp, L_.dev[s], hosts, z.wire_bytes - expert_wire, z.sparse, plan.data_parallel};
  std::vector<sim::TaskId> synced = sync_topologies().make(plan.data_parallel.sync)->emit(ctx, ready);
  // Gathered (top-k) gradients arrive from every other holder: a receive buffer each.
  // An all-gather's size is its output, every holder's part: the others' are (n-1)/n.
  if (z.sparse && plan.data_parallel.sync == "all-reduce")
    for (sim::TaskId id : synced) {
      const double in = g_.task(id).bytes * (L_.dpc - 1) / L_.dpc;
      g_.add_memory(id, in, in);
    }
  if (expert_wire > 0 && L_.dpe > 1) {
    // Top-k values travel gathered, not reduced, as in the dense exchange.
    const auto op = z.sparse ? sim::CollectiveOp::AllGather : sim::CollectiveOp::AllReduce;
    const sim::TaskId id =
        g_.add_collective(g_.add_participants(L_.dev[s]), L_.streams.dp, op, g_.add_comm_set(L_.expert_rings(s)),
                          expert_wire, g_.label("expert gradient all-reduce"), -1);
    for (sim::TaskId r : ready) g_.depend(r, id);
    synced.push_back(id);
  }
  return synced;
}

void GradientPass::emit_stage(int s) {
  const Plan& plan = L_.plan;
  const double e = L_.gradient_bytes, grad_bytes = L_.params[s] * e;
  const double expert_grad_bytes = (plan.ep > 1 ? L_.expert_params[s] : 0) * e;
  std::vector<sim::TaskId> synced = items_.last_backwards[s];
  std::vector<double> shares;  // with buckets and an offloaded optimizer: each one's part
  double compressed = 0;
  if (L_.pipes > 1) {
    synced = {pair_sync_[s], pair_sync_[L_.schedule->gpu_of(L_.Vp + s, L_.p)]};
  } else if (L_.dpc > 1 && plan.gradient_bucket_bytes(e) > 0) {
    synced = buckets(s, plan.offload_optimizer.empty() ? nullptr : &shares);
  } else if (!zero3_.empty()) {
    // Reduce-scattered block by block during the backward; the stream runs them in order.
    for (sim::TaskId id : zero3_[s].last_reduction()) synced.push_back(id);
  } else if ((L_.dpc > 1 || L_.dpe > 1) && plan.zero >= 1) {
    synced =
        dp_collective(s, sim::CollectiveOp::ReduceScatter, "dp gradient reduce-scatter", grad_bytes, expert_grad_bytes);
    for (sim::TaskId rs : synced)
      for (sim::TaskId id : items_.last_backwards[s]) g_.depend(id, rs);
  } else if (L_.dpc > 1) {
    synced = sync_topology(s, compressed);
  }
  // The optimizer steps the shard ZeRO leaves it: dense over dp·cp (HSDP: dp_shard·cp),
  // experts over dp/ep·cp.
  const double stepped =
      plan.zero >= 1 ? (grad_bytes - expert_grad_bytes) / e / L_.dps + expert_grad_bytes / e / L_.dpe : L_.params[s];
  std::vector<sim::TaskId> steps;
  for (int c = 0; c < L_.classes_count(); ++c) {
    if (!plan.offload_optimizer.empty()) {
      steps.push_back(offloaded_step(s, c, stepped, synced, shares));
      host_overhead(s, c, steps.back());
      continue;
    }
    const sim::Kernel k{sim::OpClass::Optimizer, 0, stepped * optimizer_bytes_per_param(L_.model.dtype, L_.plan),
                        L_.model.dtype};
    const sim::TaskId step = g_.add_compute(L_.dev[s][c], L_.streams.compute, time_s(s, c, k), opt_label_, -1);
    if (compressed > 0) g_.add_memory(step, 0, compressed);
    for (sim::TaskId id : synced) g_.depend(id, step);
    host_overhead(s, c, step);
    steps.push_back(step);
  }
  if (plan.overlap_param_gather)
    param_gathers(s);
  else if (plan.zero == 1 || plan.zero == 2)
    for (sim::TaskId gather :
         dp_collective(s, sim::CollectiveOp::AllGather, "dp weight all-gather", grad_bytes * L_.element_bytes / e,
                       expert_grad_bytes * L_.element_bytes / e))
      for (sim::TaskId step : steps) g_.depend(step, gather);
}

// An offloaded optimizer (lowering/offload.h): each GPU of class c's stage s sends its shard's
// gradients to its server's CPU over PCIe, the CPU steps (and streams NVMe), and the updated
// weights come back; the copies are transfers on the network, sharing the GPU's PCIe link
// with its NIC. With gradient buckets (`shares`, one per reduction in `synced`), each
// bucket's part goes as soon as it is reduced, under the rest of the backward, as
// ZeRO-Offload copies them; else all of it after the last. Returns the last task.
sim::TaskId GradientPass::offloaded_step(int s, int c, double stepped, const std::vector<sim::TaskId>& synced,
                                         const std::vector<double>& shares) {
  const sim::StreamId stream = g_.stream("offload");
  const sim::DeviceId dev = L_.dev[s][c];
  const OffloadCost cost = offload_cost(L_.plan.offload_optimizer, L_.cluster.group_of(L_.gpu(s, 0, 0)), stepped,
                                        L_.element_bytes, L_.gradient_bytes);
  const sim::CommSetId to_cpu = g_.add_comm_set(L_.host_copies(s, L_.classes[c], true));
  const sim::LabelId label = g_.label("gradients to CPU memory");
  std::vector<sim::TaskId> copies;  // on the stream before the step, in order
  auto copy = [&](double params, const std::vector<sim::TaskId>& after) {
    copies.push_back(g_.add_transfer(dev, stream, to_cpu, params * L_.gradient_bytes, label, -1));
    for (sim::TaskId a : after) g_.depend(a, copies.back());
  };
  if (shares.size() == synced.size() && !synced.empty()) {
    for (size_t i = 0; i < synced.size(); ++i)
      if (shares[i] > 0) copy(shares[i], {synced[i]});
  } else {
    copy(stepped, synced);
  }
  const sim::TaskId adam = g_.add_compute(dev, stream, cost.host_seconds, opt_label_, -1);
  for (sim::TaskId id : copies) g_.depend(id, adam);
  for (sim::TaskId id : synced) g_.depend(id, adam);
  const sim::TaskId back = g_.add_transfer(dev, stream, g_.add_comm_set(L_.host_copies(s, L_.classes[c], false)),
                                           stepped * L_.element_bytes, g_.label("weights from CPU memory"), -1);
  g_.depend(adam, back);
  return back;
}

// overlap_param_gather: the weights the optimizer updated are all-gathered under the next
// step's forward, bucket by bucket (the gradient buckets) in forward order; a bucket's
// gather is dispatched when the forward reaches the bucket before it (Megatron-Core's
// pre-hook), and its first block waits for it. One iteration stands for the steady state:
// its first forward does this, on a stream of their own (they belong to the step before,
// ahead of this one's reductions).
void GradientPass::param_gathers(int s) {
  const sim::StreamId stream = g_.stream("param-gather");
  std::vector<sim::TaskId> reached;  // the forward has reached the bucket before once these end
  std::vector<Bucket> order = bucket_blocks(s);
  std::reverse(order.begin(), order.end());
  const double weights_per_gradient = L_.element_bytes / L_.gradient_bytes;  // bucket bytes are the gradients'
  for (const Bucket& b : order) {
    const auto [vs, bi] = b.blocks.back();  // the bucket's first block in forward order
    std::vector<sim::TaskId> starts, entries;
    for (int c = 0; c < L_.classes_count(); ++c) {
      if (items_.first_forward[c][vs][bi] >= 0) starts.push_back(items_.first_forward[c][vs][bi]);
      if (items_.forward_entry[c][vs][bi] >= 0) entries.push_back(items_.forward_entry[c][vs][bi]);
    }
    for (sim::TaskId gather :
         dp_collective(s, sim::CollectiveOp::AllGather, "dp weight all-gather (under the forward)",
                       b.bytes * weights_per_gradient, b.expert_bytes * weights_per_gradient, stream)) {
      for (sim::TaskId id : reached) g_.depend(id, gather);
      for (sim::TaskId id : starts) g_.depend(gather, id);
    }
    reached = entries;
  }
}

}  // namespace lowering
}  // namespace dejavu::strategies
