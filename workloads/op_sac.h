// Selective checkpointing policies of PyTorch and JAX frameworks as they act on a model's ops.
//
// torchtitan's op-level selective activation checkpointing (`selective_ac_option = "op"`, the
// default of its Llama configs; torchtitan/models/llama3/parallelize_llama.py at e7c0cae and
// 9dec370) as it acts on a model's ops. Inside each checkpointed block (a layer) the policy
// saves the output of every attention kernel (aten._scaled_dot_product_flash_attention and
// _efficient_attention) and of every other matmul (aten.mm: the 1st, 3rd, 5th... of the
// block, counted in the order the forward runs them); everything else is recomputed in the
// backward from the block's input (PREFER_RECOMPUTE), grouped matmuls of experts too.
// On a Llama layer (wq wk wv wo w1 w3 w2) it keeps q, v, the attention's output and
// log-sum-exp, w1's output and w2's, and replays the norms, wk, RoPE, wo, w3 and SwiGLU.
#pragma once

#include <string>
#include <vector>

#include "workloads/model_graph.h"

namespace dejavu::workloads {

// Sets every layer op's sac_saved_bytes and sac_replay_share. A GEMM's linears are its
// linear_cols (or one of weight_cols); a fused attention op keeps its output (tokens x
// heads x head size in the storage dtype) and its log-sum-exp (fp32 per head and token).
// Then marks MaxText's save_dot_except_mlpwi (mark_dot_sac).
void mark_op_sac(ModelGraph& g);

// MaxText's remat policies under jax.checkpoint (MaxText/layers/models.py, December 2024:
// jax.checkpoint_policies.save_only_these_names): a layer keeps its input and the outputs of
// the projections the policy names that its backward reads, and replays everything else it
// needs, the attention kernel (its output, `context`, is not saved) included.
//   save-dot-except-mlpwi  save_dot_except_mlpwi (query_proj, key_proj, value_proj, qkv_proj,
//                          out_proj, mlpwo) and save_dot_except_mlp (without mlpwo), which
//                          act alike: the MLP's output projection's output is read by no
//                          backward, so neither kept nor replayed
//   save-qkv-proj          save_qkv_proj: only the q, k and v projections' outputs kept
// A kept output counts as kept input of the next op that keeps any (dot_saved_bytes); the
// kept GEMMs and the layer's last are not run again (dot_replayed).
struct DotPolicy {
  const char* mode;  // the plan's `recompute` value
  bool keeps_attention_out;
};
const std::vector<DotPolicy>& dot_policies();   // kDotPolicies of them, in Op's arrays' order
int dot_policy_index(const std::string& mode);  // -1: not a MaxText policy
void mark_dot_sac(ModelGraph& g);

}  // namespace dejavu::workloads
