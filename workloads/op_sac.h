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

#include "workloads/model_graph.h"

namespace dejavu::workloads {

// Sets every layer op's sac_saved_bytes and sac_replay_share. A GEMM's linears are its
// linear_cols (or one of weight_cols); a fused attention op keeps its output (tokens x
// heads x head size in the storage dtype) and its log-sum-exp (fp32 per head and token).
// Then marks MaxText's save_dot_except_mlpwi (mark_dot_sac).
void mark_op_sac(ModelGraph& g);

// MaxText's remat_policy save_dot_except_mlpwi (MaxText/layers/models.py, December 2024:
// jax.checkpoint_policies.save_only_these_names of query_proj, key_proj, value_proj, qkv_proj,
// out_proj and mlpwo) under jax.checkpoint: a layer keeps its input and those projections'
// outputs its backward reads, and replays everything else it needs, the attention kernel
// (its output, `context`, is not saved) and the MLP's input projections (mlpwi) included.
// The MLP's output projection's output is read by no backward, so neither kept nor replayed;
// save_dot_except_mlp (no mlpwo) acts the same. A kept GEMM's output (every layer GEMM but
// the MLP's input projections and the layer's last) counts as kept input of the next op that
// keeps any (dot_saved_bytes); the kept GEMMs and the last are not run again (dot_replayed).
void mark_dot_sac(ModelGraph& g);

}  // namespace dejavu::workloads
