// A parallelization plan: how a model is split over a cluster.
//
//   tp: 4                  # tensor-parallel degree (Megatron)
//   stage_tp: [4, 2]       # or each pipeline stage's own (a submesh per stage, Alpa, Metis)
//   pp: 2                  # pipeline stages
//   dp: 4                  # data-parallel replicas
//   micro_batch_size: 1
//   global_batch_size: 512
//   schedule: 1f1b         # gpipe | 1f1b | interleaved-1f1b  (`dejavu list` shows all)
//   virtual_stages: 1      # model chunks per GPU (interleaved-1f1b)
//   stages: [10, 12, 12, 14]  # layers per (virtual) stage; default: as even as possible
//   account_for_embedding_in_pipeline_split: true  # Megatron-Core's split: the embedding
//   account_for_loss_in_pipeline_split: true       # (the loss) counts as a layer, the first
//                          # (last) virtual stage takes one fewer; stages split evenly
//   pipeline_layout: "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"  # or Megatron-Core's
//                          # pipeline_model_parallel_layout: each stage's E, t, L (pipeline_layout.h)
//   token_slices: auto     # schedule terapipe: auto (TeraPipe's dynamic program) | k equal
//                          # slices | [lengths] adding up to the sequence
//   recompute: full        # none | selective (attention) | selective-op (torchtitan's op
//                          # policy) | save-dot-except-mlpwi | save-qkv-proj (MaxText's) |
//                          # full, or one per pipeline stage (recompute_modes.h)
//   recompute_layers: 5    # (full) only the first 5 layers of each model chunk recomputed, the
//                          # rest keep everything (Megatron-Core's recompute_method: block)
//   recompute_early_stop: true  # (full) PyTorch's non-reentrant checkpoint: a block's replay
//                          # stops once every tensor its backward saved is rebuilt
//   sequence_parallel: false  # tensor parallelism with reduce-scatter/all-gather (Megatron SP)
//   zero: 0                # 0 (plain data parallelism) | 1 | 2 | 3 (FSDP)
//   zero_prefetch: 1       # ZeRO-3: blocks gathered ahead of the one computing
//   zero_backward_prefetch: pre   # ZeRO-3's backward gathers: pre | post | none (FSDP's
//                                 # backward_prefetch; post is Composer's default)
//   zero_reshard_after_forward: true  # false: gathered weights kept from a block's forward to
//                                 # its backward (FSDP's SHARD_GRAD_OP), no backward gather
//   dp_shard: 8            # (zero >= 1) ZeRO shards over groups of 8 replicas, replicated
//                          # across the dp/8 groups (HSDP: PyTorch's HYBRID_SHARD,
//                          # torchtitan's dp_shard, Megatron's distributed optimizer
//                          # instances); default dp, one group
//   ep: 1                  # expert parallelism (MoE workloads): divides dp and the experts
//   cp: 1                  # context parallelism: the sequence split over cp GPUs
//   data_parallel: {sync: all-reduce, compression: none}   # see strategies/data_parallel.h
//   grad_dtype: fp32       # gradients accumulated and reduced in fp32 (default: the model's
//                          # 16-bit dtype; Megatron-LM's bf16 default, FSDP's reduce_dtype)
//   optimizer_dtype: bf16  # Adam's master weights, momentum and variance in bf16 (default
//                          # fp32; Apex DistributedFusedAdam's dtype, as NeMo's Nemotron-4 340B)
//   replica_microbatches: [6, 10]  # microbatches per data-parallel replica (default: even)
//   comm_sms: auto         # SMs a communication kernel holds while it runs (NCCL's CTAs,
//                          # NCCL_MAX_CTAS): auto is 16 on GPUs with NVLink or xGMI, 2 on
//                          # PCIe-only ones; 0 leaves every SM to compute
//
// Megatron-Core's switches, with its semantics (DistributedDataParallelConfig, arguments.py):
//   distributed_optimizer: true  # optimizer state sharded, gradients reduce-scattered (zero: 1)
//   overlap_grad_reduce: true    # gradients reduced in buckets of max(40M, 1M x dp) parameters
//                                # as the last microbatch's backward completes them
//   overlap_param_gather: true   # (distributed optimizer, overlap_grad_reduce) the updated
//                                # weights all-gathered bucket by bucket under the next forward
//   tp_comm_overlap: true        # (sequence parallelism) each tensor-parallel all-gather and
//                                # reduce-scatter pipelined with the GEMM it feeds or follows
//   defer_embedding_wgrad_compute: true  # (pp > 1) the last stage's output-layer weight
//                                # gradients of the first wgrad_deferral_limit microbatches
//   wgrad_deferral_limit: 22     # (0: all) run in the pipeline flush, inputs and gradients held
//                                # (without the switch the limit defers nothing, as in Megatron)
//   fp8_param_gather: true       # (fp8 models) weights kept in fp8 only, with their transpose
//                                # (Transformer Engine's fp8 primary weights, no 16-bit copy: the
//                                # optimizer's fp32 master is the precise one), gathered in fp8
//   fp8_recipe: tensorwise       # (fp8 models) how the casts scale: delayed | tensorwise | mxfp8
//                                # (sim/fp8_recipe.h; default: Transformer Engine's for the GPU,
//                                # mxfp8 on Blackwell, delayed before it)
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/fp8_recipe.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies {

struct Plan {
  std::string name = "plan";
  int tp = 1, pp = 1, dp = 1;
  // `stage_tp: [4, 2, 2]`: each pipeline stage's own tensor-parallel degree, the shape of its
  // submesh (Alpa's inter-op pass, Metis), dp and cp shared: stage s runs on
  // stage_tp[s] x cp x dp GPUs, the stages' GPUs one after another in rank order (stage 0's
  // first), and `tp` is the largest. Empty: every stage `tp`.
  std::vector<int> stage_tp;
  int tp_of(int stage) const { return stage_tp.empty() ? tp : stage_tp[static_cast<size_t>(stage % pp)]; }
  // The plan as stage `stage` sees it: tp its own, no stage_tp.
  Plan at_stage(int stage) const;
  // The ranks a microbatch's activation is split over where it crosses into GPU stage `to`:
  // the context ranks' tokens and, with sequence parallelism, the tensor ranks' share of
  // those. A rank sends 1/this of it (Megatron-Core's pipeline tensor is [s / (cp tp), b, h]
  // with sequence_parallel, [s / cp, b, h] without: schedules.py).
  int boundary_split(int to) const { return cp * (sequence_parallel ? tp_of(to) : 1); }
  int ep = 1;  // expert parallelism: experts sharded over groups of ep data-parallel replicas
  int cp = 1;  // context parallelism: each sequence split over cp GPUs
  // How context ranks share keys and values: all-gather them before attention (and
  // reduce-scatter their gradients after), or pass them around a ring, one block per step,
  // under the attention of the block before (ring attention, Megatron's p2p).
  std::string cp_comm = "all-gather";
  int micro_batch_size = 1;
  int global_batch_size = 1;
  std::string schedule = "1f1b";
  int virtual_stages = 1;
  std::vector<int> stages;  // layers per virtual stage (or pipeline_layout's); empty: even split
  // Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
  // the embedding (the loss) counts as one more layer, layers + those split evenly over the
  // virtual stages, the first (last) taking one layer fewer: Llama 3.1 405B's 126 layers over
  // 16 x 8 model chunks, the first and last holding only the embedding and the head.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  // TeraPipe's token slices: lengths (tokens) adding up to the sequence, else a count of
  // equal slices, else (both empty / 0) chosen by TeraPipe's dynamic program.
  std::vector<int> token_slices;
  int token_slice_count = 0;
  std::string recompute = "none";
  // `recompute: [full, full, selective, none]`: one mode per pipeline stage (pp entries; a
  // stage's model chunks share it). Under 1F1B the first stages hold the most microbatches
  // in flight, so they may need recomputation where the last ones do not. Empty: every stage
  // `recompute` (which then holds the first stage's mode).
  std::vector<std::string> stage_recompute;
  const std::string& recompute_of(int virtual_stage) const {
    return stage_recompute.empty() ? recompute : stage_recompute[static_cast<size_t>(virtual_stage % pp)];
  }
  // `recompute_layers: N` (Megatron-Core's recompute_method block with recompute_num_layers N):
  // under full recomputation only the first N layers of each model chunk (virtual stage) are
  // recomputed; the others store everything. 0: every layer.
  int recompute_layers = 0;
  // The mode of the rank-th layer (from 0) of virtual stage `virtual_stage`.
  const std::string& recompute_of_layer(int virtual_stage, int rank) const;
  // Full recomputation as PyTorch's non-reentrant checkpoint runs it (torch.utils.checkpoint
  // with use_reentrant=False, its default early stop since PyTorch 2.1; FSDP's checkpoint
  // wrapper, llm-foundry, torchtitan): a block's replay stops once the last tensor its
  // backward saved is rebuilt, so the ops after the last one that saves anything are not
  // replayed, nor that op if it only saves its inputs (a GEMM: Llama's down projection,
  // a dropout-free GPT's second MLP GEMM). Megatron's and DeepSpeed's checkpointing replay
  // the whole block (false).
  bool recompute_early_stop = false;
  bool sequence_parallel = false;
  int zero = 0;
  // ZeRO-3: blocks (layers) whose weights are gathered ahead of the one computing (FSDP's
  // prefetch; at most zero_prefetch + 1 blocks are gathered at once).
  int zero_prefetch = 1;
  // ZeRO-3's gathers in the backward pass, as PyTorch FSDP's `backward_prefetch` (its
  // BackwardPrefetch; every collective of the group on one NCCL stream, in issue order):
  //   pre   the next block's gather issued before this block's gradient computation, so it
  //         runs under it (BACKWARD_PRE: PyTorch's default; `zero_prefetch` blocks ahead);
  //   post  issued after it: it runs under this block's reduce-scatter, not its compute
  //         (BACKWARD_POST: Composer's default, as llm-foundry trains);
  //   none  issued when the next block starts, after this block's reduce-scatter.
  std::string zero_backward_prefetch = "pre";
  // ZeRO-3: blocks gathered ahead of the one computing, in the forward or the backward (0 in
  // the backward without pre: its gather waits for the block before).
  int zero_gather_ahead(bool backward) const { return backward && zero_backward_prefetch != "pre" ? 0 : zero_prefetch; }
  // Whether a backward block's gather waits for the previous block's reduce-scatter (none).
  bool zero_reduces_before_gather(bool backward) const { return backward && zero_backward_prefetch == "none"; }
  // ZeRO-3: whether a block's gathered weights go after its forward (FSDP's FULL_SHARD, and
  // gathered again for its backward) or stay until its backward ends (false: FSDP's
  // SHARD_GRAD_OP, FSDP2's reshard_after_forward=False; no backward gather, the weights of
  // every block between its forward and backward held whole, as at ZeRO-2).
  bool zero_reshard_after_forward = true;
  // Hybrid sharding (HSDP): ZeRO's states sharded over groups of dp_shard consecutive
  // replicas (with their context-parallel ranks) and replicated across the dp / dp_shard
  // groups. Gathers and reduce-scatters run inside a group; each reduced shard is then
  // all-reduced with the same shard of the other groups. 0: one group of every replica.
  int dp_shard = 0;
  int shard_replicas() const { return dp_shard > 0 ? dp_shard : dp; }
  // GPUs each of ZeRO's dense shards is split over (dp_shard, or dp, times cp).
  double zero_shards() const { return static_cast<double>(shard_replicas()) * cp; }
  bool hybrid_sharded() const { return dp_shard > 0 && dp_shard < dp; }
  // How data-parallel replicas agree on gradients (`data_parallel:` in YAML).
  struct DataParallel {
    std::string sync = "all-reduce";   // all-reduce | parameter-server | rolling-parameter-server | gossip
    int servers = 1;                   // parameter-server shards
    int peers = 1;                     // gossip partners per step
    int step = 0;                      // which training step (rolling PS rotates, gossip draws)
    unsigned long long seed = 1;       // gossip's peer draw
    std::string compression = "none";  // none | topk | powersgd | 1bit | terngrad
    double density = 0.01;             // topk: fraction of gradients sent
    int rank = 4;                      // powersgd
    double bucket_bytes = 0;           // > 0: all-reduce gradients in buckets during the backward
    int delay = 0;                     // delayed averaging: an exchange's result is applied `delay` steps later
  } data_parallel;
  // The dtype gradients are accumulated in across microbatches and reduced in across
  // data-parallel ranks: Megatron-LM's --accumulate-allreduce-grads-in-fp32 (forced on for
  // bf16 unless --grad-reduce-in-bf16), PyTorch FSDP's MixedPrecision.reduce_dtype (fp32
  // under Composer's DEFAULT), DDP under autocast (fp32 parameters, fp32 gradients). Held
  // in it (each GPU's gradient buffer, or its shard) and sent in it; "": the model's storage
  // dtype (the ZeRO paper's 2 bytes a parameter).
  std::string grad_dtype;
  // The dtype of the optimizer's state, Adam's master weights, momentum and variance (Apex
  // DistributedFusedAdam's `dtype`, which keeps a distributed copy of the weights in it):
  // "fp32" or "" (12 bytes a parameter beside a 16-bit model), or "bf16" (6).
  std::string optimizer_dtype;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  bool defer_embedding_wgrad_compute = false;
  int wgrad_deferral_limit = 0;                         // microbatches deferred; 0: every one (Megatron-Core's default)
  bool fp8_param_gather = false;                        // fp8 primary weights (Megatron-Core's --fp8-param-gather)
  sim::Fp8Recipe fp8_recipe = sim::Fp8Recipe::Default;  // Megatron-Core's --fp8-recipe
  // Whether microbatch j's output-layer weight gradient runs in the pipeline flush.
  bool defers_wgrad_of(int j) const {
    return defer_embedding_wgrad_compute && (wgrad_deferral_limit == 0 || j < wgrad_deferral_limit);
  }
  // SMs a communication kernel (NCCL's one CTA per channel; NCCL_MAX_CTAS) holds on each GPU
  // it runs on, taken from the compute kernels beside it (sim/sm_sharing.h); kAutoCommSms:
  // what NCCL uses for the GPU's links (comm_sms_on).
  static constexpr int kAutoCommSms = -1;
  int comm_sms = kAutoCommSms;
  // `offload: {optimizer: cpu | nvme}` (ZeRO-Offload, ZeRO-Infinity): the optimizer states and
  // step leave the GPU for its server's host (strategies/lowering/offload.h); "" keeps them.
  std::string offload_optimizer;
  // `offload: {parameters: cpu | nvme}` (ZeRO-Infinity's offload_param, zero: 3): the 16-bit
  // weight shards live on the host and every ZeRO-3 gather first copies the GPU's shard in.
  std::string offload_parameters;
  // `offload: {activations: cpu}`: what each forward keeps for its backward waits in CPU
  // memory in between (strategies/lowering/activation_offload.h).
  std::string offload_activations;
  // `offload: {activations: cpu, layers: N}` (Megatron-Core's cpu_offloading_num_layers, run
  // by Transformer Engine's offload synchronizer): layer by layer, the first N transformer
  // layers' saved activations, instead of whole work items; 0: whole items.
  int offload_activation_layers = 0;
  // `gpu_order: [H100-SXM-80GB, A100-SXM-80GB]`: the cluster's servers taken in this order of
  // GPU types (platforms/gpu_order.h), so ranks, and with them the first pipeline stages, go to
  // the first type listed; empty: as the platform file lists them.
  std::vector<std::string> gpu_order;
  // `gpus: 16`: the plan runs on the cluster's first 16 GPUs in rank order (after gpu_order),
  // leaving the rest idle, as `search --objective cost` proposes; 0: every GPU of the cluster.
  // strategies/plan_cluster.h gives the cluster a plan runs on.
  int use_gpus = 0;
  // `embedding_sharding: column-wise` (or one per table group: [column-wise, data-parallel]):
  // how a DLRM's embedding tables are sharded over the expert-parallel group, overriding the
  // workload's `sharding` (strategies/plan_model.h regenerates the model); empty: the
  // workload's.
  std::vector<std::string> embedding_sharding;
  // Heterogeneous data parallelism (`replica_microbatches: [6, 6, 10, 10]`, HetPipe, AMP):
  // the microbatches each data-parallel replica runs, so replicas of faster GPUs take more
  // of the batch; they add up to global_batch_size / micro_batch_size, and the gradient
  // all-reduce weights each replica's gradient by its share (the same bytes as an even
  // split). Empty: every replica global_batch_size / (micro_batch_size x dp).
  std::vector<int> replica_microbatches;

  std::string file;                        // where it was read from
  std::map<std::string, SourceLoc> where;  // key -> position, for checks against the model

  // In 64 bits: degrees each up to limits::kMaxDegree multiply past an int.
  long long gpus() const { return tp_sum() * cp * dp; }
  long long tp_sum() const {  // the stages' tensor-parallel degrees, added up
    long long sum = 0;
    for (int t : stage_tp) sum += t;
    return stage_tp.empty() ? static_cast<long long>(tp) * pp : sum;
  }
  // Per replica; with replica_microbatches, the most any replica runs.
  int microbatches() const {
    if (!replica_microbatches.empty())
      return *std::max_element(replica_microbatches.begin(), replica_microbatches.end());
    return static_cast<int>(global_batch_size / (static_cast<long long>(micro_batch_size) * dp));
  }
  int microbatches_of(int replica) const {
    return replica_microbatches.empty() ? microbatches() : replica_microbatches.at(replica);
  }
  int total_stages() const { return pp * virtual_stages; }
  // Layers of each virtual stage for a model of `layers`: `stages`, else Megatron's split
  // accounting for the embedding and loss, else as even as possible, first stages first.
  std::vector<int> layers_per_stage(int layers) const;
  // Gradient bucket size, bytes: data_parallel.bucket, else Megatron-Core's default under
  // overlap_grad_reduce (max(40M, 1M x dp) parameters of `element_bytes`), else 0 (none).
  double gradient_bucket_bytes(double element_bytes) const;
  // The gradients' dtype (grad_dtype, else the model's storage dtype) and its bytes.
  sim::DType gradient_dtype(sim::DType model_dtype) const;
  // Bytes of one element of the optimizer's state (optimizer_dtype): 4, or 2 for bf16.
  double optimizer_state_bytes() const { return optimizer_dtype == "bf16" ? 2 : 4; }
  // The share of `gpu`'s SMs one communication kernel holds (comm_sms of its SMs; auto: 16
  // with NVLink or xGMI, as NCCL on a DGX, 2 on PCIe with one NIC: NVIDIA/nccl#689); 0 when
  // the GPU's SM count is not published.
  double comm_share(const platforms::GpuSpec& gpu) const;
  double gradient_element_bytes(sim::DType model_dtype) const;
  // Bytes of a weight as the model keeps and gathers it: fp8's 1 under fp8_param_gather, else
  // the model's storage dtype.
  double weight_element_bytes(sim::DType model_dtype) const;
};

// The first rule of Megatron-Core's overlap switches (its arguments.py asserts) the plan
// breaks: the key and what is wrong; an empty key when it keeps them all. The loader fails
// at that key; plans built in code (the search's refinement) check it too.
struct SwitchBreak {
  std::string key, problem;
};
SwitchBreak megatron_switch_break(const Plan& plan);

Plan load_plan(const ConfigNode& root);
Plan load_plan_file(const std::string& path);

// Checks the plan against the model and the cluster; a ConfigError points at the plan key.
void validate(const Plan& plan, const workloads::ModelGraph& model, const platforms::Cluster& cluster);

}  // namespace dejavu::strategies
