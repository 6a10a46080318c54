// Lowering: Plan + ModelGraph + Cluster -> sim::TaskGraph.
//
// GPUs take Megatron's rank order (tensor-parallel ranks innermost, then data-parallel,
// then pipeline stages), so tensor-parallel groups sit inside a server. Each stage's ops
// are cut into compute segments at the tensor-parallel all-reduces; each work item of the
// pipeline schedule (a microbatch's forward or backward on a stage) becomes its segments,
// their all-reduces and the send to the neighbouring stage, placed on the stage's streams
// in the schedule's order. After the last backward each stage all-reduces its gradients
// over the data-parallel group and steps the optimizer.
//
// Symmetry: data-parallel replicas whose GPUs and routes price the same are simulated once
// (one device per stage stands for every GPU of those replicas' tensor-parallel groups);
// a heterogeneous cluster keeps one representative per distinct replica.
#pragma once

#include <vector>

#include "platforms/cluster.h"
#include "sim/task_graph.h"
#include "strategies/lowering/offload.h"
#include "strategies/plan.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

// The optimizer step's memory traffic per parameter, Megatron-style mixed-precision Adam
// with fp32 gradients (main_grad): reads and writes the fp32 master weight, momentum and
// variance (24), reads the fp32 gradient (4) and writes the 16-bit weight (2); reads the
// gradients once more for their norm (gradient clipping, 4) and zeroes them for the next
// step (4): 38 bytes. fp16 training adds the loss scaler's pass, which unscales the
// gradients and checks them for inf and NaN (read and write, 8): 46. fp8/fp4 GEMMs add the
// weights' casts once a step: read the 16-bit weight (2), write its narrow copy and that
// copy's transpose (2 x 1 for fp8): 42 for fp8. With the state in bf16 (`state_bytes` 2,
// Plan::optimizer_dtype) the master weight, momentum and variance move 12 bytes, not 24: 26.
// With fp8 primary weights (`fp8_params`, Plan::fp8_param_gather) the step writes the fp8
// weight and its transpose (2) in place of the 16-bit weight (2) and its casts: 38 for fp8.
double optimizer_bytes_per_param(sim::DType dtype, double state_bytes = 4, bool fp8_params = false);
// The same for a plan's optimizer dtype and fp8 weights.
double optimizer_bytes_per_param(sim::DType dtype, const Plan& plan);

struct GpuRole {
  int stage = 0, dp_rank = 0, tp_rank = 0;
  sim::DeviceId device;  // the simulated device standing for this GPU
  int cp_rank = 0;
};

// Where an offloaded optimizer (plan.offload_optimizer), offloaded parameters
// (plan.offload_parameters) and activations (plan.offload_activations) live, for the fullest stage: what one GPU moves
// and one server holds, against the server's CPU memory and NVMe.
struct OffloadUse {
  std::string tier;  // the optimizer's: cpu | nvme; empty: kept on the GPU
  OffloadCost cost;
  std::string parameters;            // cpu | nvme; empty: kept on the GPU
  double parameter_held_bytes = 0;   // per server, in CPU memory or on NVMe
  double parameter_pcie_bytes = 0;   // per GPU and step: every ZeRO-3 gather's shard
  std::string activations;           // cpu; empty: kept on the GPU
  int activation_layers = 0;         // layer by layer, the first this many; 0: whole items
  double activation_pcie_bytes = 0;  // per GPU and step: every item's, down and back
  double activation_held_bytes = 0;  // per server, at most at once in CPU memory
  double host_capacity_bytes = 0, nvme_capacity_bytes = 0;
  bool any() const { return !tier.empty() || !parameters.empty() || !activations.empty(); }
  double host_bytes() const {
    return cost.host_held_bytes + (parameters == "cpu" ? parameter_held_bytes : 0) + activation_held_bytes;
  }
  double nvme_bytes() const { return cost.nvme_held_bytes + (parameters == "nvme" ? parameter_held_bytes : 0); }
  bool fits() const { return host_bytes() <= host_capacity_bytes && nvme_bytes() <= nvme_capacity_bytes; }
};

struct LoweredJob {
  sim::TaskGraph graph;
  std::vector<GpuRole> roles;     // per GPU, in cluster order
  std::vector<int> device_stage;  // per simulated device
  double model_flops = 0;         // Megatron's count, no recomputation
  double hardware_flops = 0;      // including recomputation
  double params_per_gpu_max = 0;  // parameters held by the fullest GPU
  OffloadUse offload;
  // TeraPipe: each sequence's token slices (lengths), and whether its dynamic program chose them.
  std::vector<int> token_slices;
  bool token_slices_chosen = false;
};

struct LowerOptions {
  bool fold_symmetric = true;  // false: one device per data-parallel replica and stage
  // One compute task per work item (a microbatch's pass over a stage) instead of one per
  // segment and collective: the segments and their tensor-parallel collectives run back to
  // back on one GPU, so their sum (collectives in closed form with `collective_algorithm`)
  // and the item's peak memory are what the analytic engine would find anyway, with a
  // tenth of the tasks. The search's evaluator uses it. Plans with expert or context
  // parallelism or gradient buckets (whose collectives span devices or overlap the
  // backward) are lowered unfused.
  bool fuse_items = false;
  std::string collective_algorithm = "ring";
  // GPUs that must stand for themselves (a fault names them): their replicas do not fold
  // with others, and each leads its device's host list, where engines run its compute.
  std::vector<int> distinct_gpus;
};

// Validates the plan first; throws ConfigError / ModelError.
LoweredJob lower(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                 const LowerOptions& options = {});

// One work item run as a single task (LowerOptions::fuse_items): its duration, and its
// memory relative to its start: the most it holds at once and what it leaves allocated.
struct ItemCost {
  double duration_s = 0;
  double level = 0, peak = 0;
  void add_compute(double d, double alloc, double free) {
    duration_s += d;
    level += alloc;
    peak = peak > level ? peak : level;
    level -= free;
  }
  void append(const ItemCost& next) {  // `next` runs right after
    duration_s += next.duration_s;
    peak = peak > level + next.peak ? peak : level + next.peak;
    level += next.level;
  }
};

// What one microbatch costs on the GPUs of pipeline stage `stage` of `plan`, block by block
// in forward order (the ops before the layers, each layer, the ops after), priced exactly
// as lower() prices them: the slowest GPU of the tensor-parallel group, plus the
// tensor-parallel collectives in closed form. For the search, which moves layers between
// stages and scores plans without lowering them. Ignores plan.pp's split.
struct BlockItems {
  bool is_layer = false;
  bool weight_pass = false;  // the split backward's weight part has work (ops with weights)
  double params_per_gpu = 0;
  ItemCost fwd;
  ItemCost bwd;         // recomputation, then the whole backward
  ItemCost bwd_input;   // recomputation, then the input-gradient part (split schedules)
  ItemCost bwd_weight;  // the weight-gradient part
};
// Priced on the GPUs of (stage, replica): a mixed cluster's replicas may differ.
std::vector<BlockItems> block_items(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                    const Plan& plan, int stage, const std::string& collective_algorithm = "ring",
                                    bool split_backward = false, int replica = 0);

// The same, summed per block for stage partitioners.
struct BlockCost {
  bool is_layer = false;
  double time_s = 0;  // forward + backward (with recomputation)
  double params_per_gpu = 0;
  double stored_bytes = 0;     // activations one microbatch keeps until its backward
  double transient_bytes = 0;  // the most its backward holds at once beyond that
};
std::vector<BlockCost> block_costs(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                   const Plan& plan, int stage, const std::string& collective_algorithm = "ring",
                                   int replica = 0);

// Model states per parameter on one GPU (mixed-precision Adam): weights in the model's
// dtype, gradients in `gradient_bytes` (Plan::gradient_element_bytes; 0: the model's dtype),
// optimizer state (fp32 master copy, momentum, variance); ZeRO stage `zero` shards optimizer
// state (1), gradients (2) and weights (3) over `shards` GPUs.
struct ModelStateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};
// `state_bytes`: an element of the optimizer's state (Plan::optimizer_state_bytes; 4 for fp32).
// `fp8_params` (Plan::fp8_param_gather): an fp8 model keeps its weights in fp8 and their
// transpose, without the 16-bit copy.
ModelStateBytes model_state_per_param(sim::DType dtype, int zero, double shards, double gradient_bytes = 0,
                                      double state_bytes = 4, bool fp8_params = false);
// The same for a plan: its ZeRO stage, gradient and optimizer dtypes and fp8 weights.
ModelStateBytes model_state_per_param(sim::DType dtype, const Plan& plan, double shards);

// A segment's tensor-parallel synchronisation: an all-reduce, or with sequence parallelism
// a reduce-scatter and an all-gather.
std::vector<sim::CollectiveOp> tp_sync_ops(const Plan& plan);

// Which GPU (cluster index) holds (stage, dp_rank, tp_rank).
// `inner` counts the ranks inside a replica's stage: cp_rank * tp + tp_rank (Megatron's
// order: tp, then cp, then dp, then pp). With stage_tp, the GPUs before stage s are the
// earlier stages' (their tp x cp x dp each) and a replica's stage takes its own tp x cp.
inline int gpu_index(const Plan& p, int stage, int dp_rank, int inner) {
  if (p.stage_tp.empty()) return (stage * p.dp + dp_rank) * p.tp * p.cp + inner;
  int before = 0;
  for (int s = 0; s < stage; ++s) before += p.stage_tp[static_cast<size_t>(s)];
  return (before * p.dp + dp_rank * p.stage_tp[static_cast<size_t>(stage)]) * p.cp + inner;
}

// The data-parallel replica GPU `gpu` (a cluster index; past the plan's GPUs, counted
// again from its first) belongs to.
inline int replica_of_gpu(const Plan& p, int gpu) {
  gpu = static_cast<int>(gpu % p.gpus());
  for (int s = 0; s < p.pp; ++s) {
    const int size = p.tp_of(s) * p.cp * p.dp;
    if (gpu < size) return gpu / (p.tp_of(s) * p.cp);
    gpu -= size;
  }
  return -1;
}

}  // namespace dejavu::strategies
