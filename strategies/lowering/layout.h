// The job's geometry, worked out once before any task is emitted: which GPU plays which
// (stage, replica, tensor and context rank), which replicas fold into one simulated device
// (replica classes), the simulated devices with their model states, the streams, and the
// communication groups every emitter addresses (tensor-parallel rings, context and expert
// groups, data-parallel rings). Megatron's rank order: tp innermost, then cp, dp, pp.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "platforms/cluster.h"
#include "sim/task_graph.h"
#include "strategies/lowering.h"
#include "strategies/lowering/token_slices.h"
#include "strategies/plan.h"
#include "strategies/schedules/schedule.h"
#include "strategies/stage_work.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::lowering {

struct Streams {
  sim::StreamId compute, tp, pp, dp, ep, cp;
};

class JobLayout {
 public:
  JobLayout(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
            const LowerOptions& options);
  // Adds the streams, the simulated devices (with their model states) and the per-stage
  // communication groups to `job`, in the order the engines see them.
  void add_devices(LoweredJob& job);

  const workloads::ModelGraph& model;
  const platforms::Cluster& cluster;
  const Plan& plan;
  const LowerOptions& options;
  std::unique_ptr<PipelineSchedule> schedule;
  int p, d, m, v, cp;  // m work items per stage (the most of any replica)
  // GPU stage s's tensor-parallel degree (Plan::stage_tp, else tp) and GPUs per replica (t x cp).
  int t_of(int s) const { return plan.tp_of(s); }
  int K_of(int s) const { return plan.tp_of(s) * cp; }
  int pipes, Vp, V;  // pipelines run at once, virtual stages per pipeline, in all
  int dpc, dpe;      // GPUs sharing each dense / expert gradient
  int dps;           // GPUs each dense ZeRO shard is split over (plan dp_shard x cp; dpc without)
  double micro_batch, element_bytes, gradient_bytes;  // per element: tensors, gradients (Plan::grad_dtype)
  bool fused, cp_ring;
  std::vector<StageWork> work;                // per virtual stage (pipeline copies included)
  std::vector<std::vector<int>> classes;      // replica classes: the replicas each stands for
  std::vector<double> params, expert_params;  // per GPU stage
  // TeraPipe: work item j is slice j % k of microbatch j / k, priced as the slice sees the
  // model (m = microbatches x k); without slicing, every item sees the whole model.
  TokenSlices slices;
  int slice_of(int j) const { return slices.count() > 0 ? j % slices.count() : 0; }
  const workloads::ModelGraph& slice_model(int q) const { return slices.count() > 0 ? slices.models[q] : model; }
  const std::vector<StageWork>& slice_work(int q) const { return slices.count() > 0 ? slices.work[q] : work; }
  const workloads::ModelGraph& model_at(int j) const { return slice_model(slice_of(j)); }
  const std::vector<StageWork>& work_at(int j) const { return slice_work(slice_of(j)); }
  int pricings() const { return std::max(1, slices.count()); }  // distinct item prices per stage

  int gpu(int s, int r, int k) const { return gpu_index(plan, s, r, k); }
  int host(int s, int r, int k) const { return cluster.gpus[gpu(s, r, k)].host; }
  int gpu_stage(int vs) const { return schedule->gpu_of(vs, p); }
  bool has_next(int vs) const { return (vs + 1) % Vp != 0; }  // within its pipeline
  bool has_prev(int vs) const { return vs % Vp != 0; }
  int classes_count() const { return static_cast<int>(classes.size()); }
  // Work items per stage of replica class c's replicas (plan.replica_microbatches: uneven).
  int m_of(int c) const { return plan.microbatches_of(classes[c][0]) * std::max(1, slices.count()); }

  // The data-parallel rings of GPU stage s (one per tensor rank and shard group, over the
  // group's replicas and context ranks: every replica without plan dp_shard), and the
  // experts' (over the replicas holding the same experts).
  sim::CommSet dp_rings(int s) const;
  // Copies between each GPU of GPU stage s in `replicas` (every tensor and context rank) and
  // its server's host side: GPU -> CPU memory, or back.
  sim::CommSet host_copies(int s, const std::vector<int>& replicas, bool to_host) const;
  sim::CommSet expert_rings(int s) const;
  // HSDP (plan dp_shard): the rings across the shard groups (the same member of every group).
  sim::CommSet across_shard_rings(int s) const;

  // Filled by add_devices: [stage][class] simulated device, its own participant set, its
  // tensor-parallel rings and (ring attention) its send to the next context rank; per
  // stage, every class's devices and the expert and context groups.
  Streams streams;
  std::vector<std::vector<sim::DeviceId>> dev;
  std::vector<std::vector<sim::ParticipantsId>> self;
  std::vector<std::vector<sim::CommSetId>> tp_set, cp_next;
  std::vector<sim::ParticipantsId> stage_participants;
  std::vector<sim::CommSetId> ep_set, cp_set;

 private:
  std::vector<std::vector<int>> fold_replicas() const;
  void add_device(LoweredJob& job, int s, int c);
  sim::CommSet ep_groups(int s) const;
  sim::CommSet cp_groups(int s) const;
};

}  // namespace dejavu::strategies::lowering
