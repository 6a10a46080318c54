#include "strategies/lowering/layout.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace dejavu::strategies::lowering {

namespace {
std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}
}  // namespace

JobLayout::JobLayout(const workloads::ModelGraph& model_, const platforms::Cluster& cluster_, const Plan& plan_,
                     const LowerOptions& options_)
    : model(model_), cluster(cluster_), plan(plan_), options(options_), schedule(schedules().make(plan_.schedule)) {
  p = plan.pp, d = plan.dp, m = plan.microbatches(), v = plan.virtual_stages, cp = plan.cp;
  // A bidirectional schedule runs `pipes` copies of the model's virtual stages; pipeline c
  // is virtual stages c·Vp .. c·Vp + Vp - 1, each a copy of the same work.
  pipes = schedule->pipelines(), Vp = plan.total_stages(), V = Vp * pipes;
  dpc = d * cp;
  dps = plan.shard_replicas() * cp;
  // Experts (with ep > 1) are held by d / ep replicas only: ZeRO shards their states that way.
  dpe = plan.ep > 1 ? d / plan.ep * cp : dpc;
  micro_batch = plan.micro_batch_size;
  element_bytes = plan.weight_element_bytes(model.dtype);
  gradient_bytes = plan.gradient_element_bytes(model.dtype);
  fused = options.fuse_items && plan.ep == 1 && cp == 1 && plan.gradient_bucket_bytes(1) <= 0 &&
          !plan.overlap_param_gather && !plan.tp_comm_overlap && !plan.defer_embedding_wgrad_compute &&
          plan.offload_activation_layers == 0;  // layer offload copies between the blocks
  cp_ring = cp > 1 && plan.cp_comm == "ring";
  work = build_stage_work(model, plan, schedule->splits_backward());
  for (int c = 1; c < pipes; ++c)
    for (int vs = 0; vs < Vp; ++vs) work.push_back(work[vs]);
  if (schedule->slices_tokens()) {
    slices = token_slices(model, cluster, plan, options.collective_algorithm);
    m *= slices.count();
  }
  classes = fold_replicas();
  params.assign(p, 0.0);
  expert_params.assign(p, 0.0);
  for (int vs = 0; vs < V; ++vs) {
    params[gpu_stage(vs)] += work[vs].params_per_gpu;
    expert_params[gpu_stage(vs)] += work[vs].expert_params_per_gpu;
  }
}

// Replicas that price the same (GPU types, tensor-parallel ring, pipeline hops) and run as
// many microbatches fold into one class; faulty GPUs (options.distinct_gpus) keep their
// replicas apart.
std::vector<std::vector<int>> JobLayout::fold_replicas() const {
  std::map<std::string, int> class_of_signature;
  std::vector<std::vector<int>> out;
  const auto& distinct = options.distinct_gpus;
  for (int r = 0; r < d; ++r) {
    std::string sig = options.fold_symmetric ? "" : std::to_string(r);
    if (!plan.replica_microbatches.empty()) sig += "m" + std::to_string(plan.microbatches_of(r)) + ":";
    for (int s = 0; s < p; ++s) {
      const int K = K_of(s), t = t_of(s);
      for (int k = 0; k < K; ++k) {
        if (std::find(distinct.begin(), distinct.end(), gpu(s, r, k)) != distinct.end())
          sig += "!" + std::to_string(gpu(s, r, k));
        sig += cluster.gpus[gpu(s, r, k)].spec->name + ",";
        const auto ring = cluster.network.path_cost(host(s, r, k), host(s, r, k / t * t + (k % t + 1) % t));
        sig += exact(ring.latency_s) + "/" + exact(ring.bottleneck_Bps) + ";";
      }
      sig += "|";
    }
    for (int vs = 0; vs + 1 < V; ++vs) {
      if (!has_next(vs)) continue;
      const int a = host(gpu_stage(vs), r, 0), z = host(gpu_stage(vs + 1), r, 0);
      for (const auto& c : {cluster.network.path_cost(a, z), cluster.network.path_cost(z, a)})
        sig += exact(c.latency_s) + "/" + exact(c.bottleneck_Bps) + ";";
    }
    auto [it, fresh] = class_of_signature.emplace(sig, static_cast<int>(out.size()));
    if (fresh) out.emplace_back();
    out[it->second].push_back(r);
  }
  return out;
}

sim::CommSet JobLayout::host_copies(int s, const std::vector<int>& replicas, bool to_host) const {
  sim::CommSet set;
  for (int r : replicas)
    for (int k = 0; k < K_of(s); ++k) {
      const platforms::GpuSlot& slot = cluster.gpus[gpu(s, r, k)];
      set.groups.push_back(to_host ? std::vector<int>{slot.host, slot.cpu} : std::vector<int>{slot.cpu, slot.host});
    }
  return set;
}

sim::CommSet JobLayout::dp_rings(int s) const {
  sim::CommSet set;
  const int t = t_of(s), n = plan.shard_replicas();
  for (int r0 = 0; r0 < d; r0 += n)
    for (int k = 0; k < t; ++k) {
      std::vector<int> ring;
      for (int r = r0; r < r0 + n; ++r)
        for (int c = 0; c < cp; ++c) ring.push_back(host(s, r, c * t + k));
      set.groups.push_back(ring);
    }
  return set;
}

sim::CommSet JobLayout::across_shard_rings(int s) const {
  sim::CommSet set;
  const int t = t_of(s), n = plan.shard_replicas();
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < cp; ++c)
      for (int k = 0; k < t; ++k) {
        std::vector<int> ring;
        for (int r = i; r < d; r += n) ring.push_back(host(s, r, c * t + k));
        set.groups.push_back(ring);
      }
  return set;
}

sim::CommSet JobLayout::expert_rings(int s) const {
  sim::CommSet set;
  const int t = t_of(s);
  for (int i = 0; i < plan.ep; ++i)
    for (int k = 0; k < t; ++k) {
      std::vector<int> ring;
      for (int r = i; r < d; r += plan.ep)
        for (int x = 0; x < cp; ++x) ring.push_back(host(s, r, x * t + k));
      set.groups.push_back(ring);
    }
  return set;
}

// Expert-parallel groups: ep consecutive replicas, one all-to-all per tensor-parallel rank.
sim::CommSet JobLayout::ep_groups(int s) const {
  sim::CommSet set;
  for (int r0 = 0; r0 < d; r0 += plan.ep)
    for (int k = 0; k < K_of(s); ++k) {
      std::vector<int> group;
      for (int i = 0; i < plan.ep; ++i) group.push_back(host(s, r0 + i, k));
      set.groups.push_back(group);
    }
  return set;
}

// Context groups: per replica and tensor rank, over the cp context ranks.
sim::CommSet JobLayout::cp_groups(int s) const {
  sim::CommSet groups;
  const int t = t_of(s);
  for (int r = 0; r < d; ++r)
    for (int k = 0; k < t; ++k) {
      std::vector<int> group;
      for (int x = 0; x < cp; ++x) group.push_back(host(s, r, x * t + k));
      groups.groups.push_back(group);
    }
  return groups;
}

void JobLayout::add_devices(LoweredJob& job) {
  sim::TaskGraph& g = job.graph;
  streams.compute = g.stream("compute");
  streams.tp = g.stream("tp-comm");
  streams.pp = g.stream("pp-comm");
  streams.dp = g.stream("dp-comm");
  if (plan.ep > 1) streams.ep = g.stream("ep-comm");
  if (cp > 1) streams.cp = g.stream("cp-comm");
  const int nc = classes_count();
  dev.assign(p, std::vector<sim::DeviceId>(nc));
  self.assign(p, std::vector<sim::ParticipantsId>(nc));
  tp_set.assign(p, std::vector<sim::CommSetId>(nc));
  cp_next = tp_set;
  stage_participants.assign(p, sim::ParticipantsId());
  ep_set.assign(p, sim::CommSetId());
  cp_set.assign(p, sim::CommSetId());
  job.roles.resize(cluster.gpu_count());
  for (double x : params) job.params_per_gpu_max = std::max(job.params_per_gpu_max, x);
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < nc; ++c) add_device(job, s, c);
}

// One simulated device: the GPUs of a replica class on stage s, its model states (ZeRO
// shards optimizer state, gradients and weights; experts over the replicas holding them),
// runtime memory and stashed weight versions, and its communication groups.
void JobLayout::add_device(LoweredJob& job, int s, int c) {
  sim::TaskGraph& g = job.graph;
  std::vector<int> hosts;
  sim::CommSet rings;
  double capacity = 0, comm_share = 0;
  const platforms::GpuSlot* runtime = nullptr;  // the GPU that holds most before the model
  const int K = K_of(s), t = t_of(s);
  for (int r : classes[c]) {
    for (int k = 0; k < K; ++k) {
      hosts.push_back(host(s, r, k));
      const platforms::GpuSlot& slot = cluster.gpus[gpu(s, r, k)];
      capacity = capacity == 0 ? slot.spec->memory_bytes : std::min(capacity, slot.spec->memory_bytes);
      comm_share = std::max(comm_share, plan.comm_share(*slot.spec));
      if (!runtime || slot.runtime_bytes() > runtime->runtime_bytes()) runtime = &slot;
    }
    for (int x = 0; x < cp; ++x) {  // one tensor-parallel ring per context rank
      std::vector<int> ring;
      for (int k = 0; k < t; ++k) ring.push_back(host(s, r, x * t + k));
      rings.groups.push_back(ring);
    }
  }
  std::stable_partition(hosts.begin(), hosts.end(), [&](int h) {
    for (int x : options.distinct_gpus)
      if (cluster.gpus[x].host == h) return true;
    return false;
  });
  dev[s][c] = g.add_device("stage" + std::to_string(s) + ".dp" + std::to_string(classes[c][0]), hosts);
  sim::Device& device = g.device(dev[s][c]);
  device.capacity_bytes = capacity;
  device.comm_share = comm_share;
  const ModelStateBytes state = model_state_per_param(model.dtype, plan, dps);
  const ModelStateBytes expert_state = model_state_per_param(model.dtype, plan, dpe);
  const double dense = params[s] - (plan.ep > 1 ? expert_params[s] : 0), experts = params[s] - dense;
  device.resident = {{"gradients", dense * state.gradients + experts * expert_state.gradients}};
  if (plan.offload_parameters.empty())  // offloaded, the shards live on the host (lowering/zero3.h)
    device.resident.insert(device.resident.begin(),
                           {"weights", dense * state.weights + experts * expert_state.weights});
  if (plan.offload_optimizer.empty())  // offloaded, it lives on the host (lowering/offload.h)
    device.resident.push_back({"optimizer", dense * state.optimizer + experts * expert_state.optimizer});
  for (const sim::MemoryPart& part : runtime->runtime)
    if (part.bytes > 0) device.resident.push_back(part);
  // Asynchronous pipelines keep older weight versions for the backwards in flight.
  if (const int versions = schedule->weight_versions(s, p); versions > 1)
    device.resident.push_back({"stashed weights", (versions - 1) * params[s] * state.weights});
  self[s][c] = g.add_participants(std::vector<sim::DeviceId>{dev[s][c]});
  tp_set[s][c] = g.add_comm_set(std::move(rings));
  if (cp_ring) {
    sim::CommSet next;
    for (int r : classes[c])
      for (int x = 0; x < cp; ++x)
        for (int k = 0; k < t; ++k) next.groups.push_back({host(s, r, x * t + k), host(s, r, (x + 1) % cp * t + k)});
    cp_next[s][c] = g.add_comm_set(std::move(next));
  }
  if ((plan.ep > 1 || cp > 1) && c == classes_count() - 1) {
    stage_participants[s] = g.add_participants(dev[s]);
    if (plan.ep > 1) ep_set[s] = g.add_comm_set(ep_groups(s));
    if (cp > 1) cp_set[s] = g.add_comm_set(cp_groups(s));
  }
  job.device_stage.push_back(s);
  for (int r : classes[c])
    for (int k = 0; k < K; ++k) job.roles[gpu(s, r, k)] = GpuRole{s, r, k % t, dev[s][c], k / t};  // K, t: stage s's
}

}  // namespace dejavu::strategies::lowering
