// Llama-style decoder (Touvron et al. 2023; Llama 3, 2024): RMSNorm, grouped-query
// attention (kv_heads key/value heads shared by groups of query heads), rotary positions
// (no position table), a SwiGLU MLP with its own ffn_hidden, no biases, and an output
// projection untied from the embedding unless tie_embeddings says so.
//
//   kind: llama
//   layers: 32
//   hidden: 4096
//   heads: 32
//   kv_heads: 8
//   ffn_hidden: 14336
//   seq_len: 8192
//   vocab: 128256
//   dtype: bf16
//   tie_embeddings: false
//   experts: 8                # optional: a mixture of experts replaces each MLP (Mixtral)
//   top_k: 2                  # experts per token
//   capacity_factor: 1.0      # token slots per expert over the balanced share
//   shared_experts: 1         # optional: experts every token takes, beside the routed ones
//   attention: flash          # flash (default) | cudnn | triton | unfused
//   cross_entropy: unfused    # unfused (default) | te | flash: how the loss runs
//   mlp: swiglu               # swiglu (default) | squared_relu (Nemotron-4: one up projection)
//
// Tensor parallelism must divide kv_heads (each rank keeps whole key/value heads).
#pragma once

#include "workloads/generator.h"
#include "workloads/op_builders.h"

namespace dejavu::workloads {

struct LlamaConfig {
  std::string name = "llama";
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0, seq_len = 0, vocab = 0;
  bool tie_embeddings = false;
  sim::DType dtype = sim::DType::BF16;
  int experts = 0;  // 0: dense MLP
  int top_k = 2;
  double capacity_factor = 1.0;
  int shared_experts = 0;                          // each ffn_hidden wide, one SwiGLU beside the routed experts
  AttentionKind attention = AttentionKind::Flash;  // Llama is trained with FlashAttention
  CrossEntropyKind cross_entropy = CrossEntropyKind::Unfused;  // `cross_entropy:` (op_builders.h)
  bool gated_mlp = true;                                       // SwiGLU; false: squared ReLU (Nemotron-4)
};

ModelGraph make_llama(const LlamaConfig& c);

class LlamaGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

}  // namespace dejavu::workloads
