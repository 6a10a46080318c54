// One operator of a model, with everything the lowering needs, per sample (one sequence):
// a micro-batch of b samples costs b times the per-sample FLOPs and activation bytes.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sim/kernel.h"
#include "sim/task_graph.h"

namespace dejavu::workloads {

// How an op behaves under Megatron tensor parallelism over t GPUs.
// A layer's linears by their part: the attention's input (q, k, v) and output projections,
// the MLP's input projection (gate and up, or fc1).
enum class LinearRole { Other, AttentionIn, AttentionOut, MlpIn };
inline constexpr int kDotPolicies = 2;  // MaxText remat policies (workloads/op_sac.h)

enum class TpMode {
  Split,       // FLOPs, weights and activations divided by t
  Replicated,  // every rank does the whole op (LayerNorm without sequence parallelism)
};

struct Op {
  std::string name;  // "L3.qkv"
  sim::OpClass op_class = sim::OpClass::Gemm;
  int layer = 0;         // -1 before the repeated layers, `layers` after them
  double fwd_flops = 0;  // per sample
  double bwd_flops = 0;  // per sample
  double fwd_bytes = 0;  // memory traffic per sample
  double bwd_bytes = 0;
  double weight_bytes = 0;                  // weights read once per pass, whatever the batch
  double weight_rows = 0, weight_cols = 0;  // a GEMM's weight matrix shape (gradient compression)
  double params = 0;                        // parameter count
  // Activations kept for the backward, per sample, as Korthikanti et al. 2022 count them.
  double activation_bytes = 0;
  bool activation_split = true;          // divided by t under tensor parallelism without SP
  double selective_recompute_bytes = 0;  // the part selective recomputation drops
  bool layer_input = false;              // the layer's input: all full recomputation keeps
  // A GEMM fusing several linears of the frameworks' model code (Llama's q, k and v
  // projections; its gate and up projections): their output widths, in the order the
  // forward runs them. Empty: one linear, weight_cols wide.
  std::vector<double> linear_cols;
  // torchtitan's op-level selective checkpointing (plan `recompute: selective-op`) as it acts
  // on this op (workloads/op_sac.h): the bytes of its output the forward keeps for the
  // backward, per sample, and the share of its forward the backward's replay runs again.
  double sac_saved_bytes = 0;
  double sac_replay_share = 1;
  // What a layer's linear is (MaxText's checkpoint names: qkv_proj, out_proj, mlpwi).
  LinearRole role = LinearRole::Other;
  // Per MaxText remat policy (workloads/op_sac.h's dot_policies(), plan `recompute:
  // save-dot-except-mlpwi | save-qkv-proj`): the bytes of this op's input the forward keeps,
  // per sample (the kept outputs of the GEMMs before it), and whether its replay runs (false:
  // a GEMM whose output was kept, or the layer's last, whose output no backward reads).
  std::array<double, kDotPolicies> dot_saved_bytes{};
  std::array<bool, kDotPolicies> dot_replayed{true, true};
  TpMode tp = TpMode::Split;
  // Megatron's f/g operators: an all-reduce of `tp_sync_bytes` per sample over the
  // tensor-parallel group after the forward (g, after row-parallel ops) or after the
  // backward (f, before column-parallel ops).
  bool tp_sync_fwd = false;
  bool tp_sync_bwd = false;
  double tp_sync_bytes = 0;
  bool counts_as_model_flops = false;  // Megatron counts only matmul FLOPs
  // A GEMM that runs in the storage dtype when the model's GEMMs are fp8/fp4: the language
  // model head (Megatron-Core's output layer is its own ColumnParallelLinear, outside
  // Transformer Engine's fp8 autocast; torchtitan's float8 and MX converters skip `output`
  // by default).
  bool high_precision = false;
  // Forward FLOPs per sample by Megatron's model-FLOPs convention when they differ from the
  // work done (causal FlashAttention skips half the scores Megatron counts); < 0: fwd_flops.
  double model_fwd_flops = -1;
  // Attention whose queries see only earlier keys (decoders): what TeraPipe's token slices need.
  bool causal = false;
  double head_dim = 0;  // attention: the size of one head (hidden / heads)
  double model_flops() const { return model_fwd_flops >= 0 ? model_fwd_flops : fwd_flops; }
  // Mixture of experts: an expert's weights are sharded over the expert-parallel group, and
  // tokens travel by all-to-all (bytes per sample): after the router's forward (dispatch)
  // and the experts' last forward (combine); in the backward, before the experts' last op
  // (combine's gradient) and after their first (dispatch's gradient).
  // Context parallelism: the keys and values (bytes per sample) every rank of the group
  // gathers before this op's forward and whose gradients it reduce-scatters after its backward.
  double cp_kv_bytes = 0;
  bool expert = false;
  // The exchanges are all-to-alls unless the op says otherwise (DLRM's row-wise tables
  // reduce-scatter partial sums forward and all-gather their gradients backward); bytes
  // then count per member of the group (they grow with it).
  sim::CollectiveOp ep_fwd_op = sim::CollectiveOp::AllToAll;
  sim::CollectiveOp ep_bwd_op = sim::CollectiveOp::AllToAll;
  bool ep_bytes_per_member = false;
  double ep_a2a_fwd_bytes = 0;
  double ep_a2a_bwd_bytes = 0;
  double ep_a2a_bwd_before_bytes = 0;
};

}  // namespace dejavu::workloads
