// GPT-style decoder-only transformer: embedding, `layers` decoder layers (LayerNorm, QKV,
// attention, projection, LayerNorm, MLP), final LayerNorm, LM head and loss.
#pragma once

#include "sim/kernel.h"
#include "workloads/generator.h"
#include "workloads/op_builders.h"

namespace dejavu::workloads {

struct TransformerConfig {
  std::string name = "transformer";
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int seq_len = 0;
  int vocab = 0;
  int ffn_hidden = 0;  // 0: 4 * hidden
  sim::DType dtype = sim::DType::BF16;
  // The same layers as encoders (the layer FLOPs are the same; only the ends differ):
  enum class Ends { Gpt, Bert, Vit } ends = Ends::Gpt;
  int max_position = 0;  // bert: position table rows (0: seq_len)
  int patch = 0;         // vit: seq_len = (image_size / patch)^2 + 1 (the class token)
  int image_size = 0;
  int classes = 0;  // vit: classifier outputs
  // How attention runs (`attention:`): unfused by default, as the Megatron runs of
  // 2021-22 these presets reproduce; GPT layers are causal, BERT's and ViT's are not.
  AttentionKind attention = AttentionKind::Unfused;
  // Dropout on the attention scores and the two residual branches, as Megatron trains GPT
  // (`dropout: false`: none, as MPT and Llama train; the residual adds stay, storing nothing).
  bool dropout = true;
  // How the loss runs (`cross_entropy:`; op_builders.h): Megatron's unfused fp32 passes by default.
  CrossEntropyKind cross_entropy = CrossEntropyKind::Unfused;
  // GPT's LM head shares the embedding's weights (`tie_embeddings: true`, Megatron's default);
  // false: its own vocab x hidden weights (Megatron's --untie-embeddings-and-output-weights).
  bool tie_embeddings = true;
};

ModelGraph make_transformer(const TransformerConfig& c);

class TransformerGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

// BERT-style encoder (Devlin et al. 2019): word, position and token-type embeddings with a
// LayerNorm; a pooler; a masked-LM head (dense + LayerNorm, decoder tied to the embedding).
//   kind: bert, layers, hidden, heads, seq_len, vocab, [ffn_hidden, max_position, dtype]
class BertGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

// Vision Transformer (Dosovitskiy et al. 2021): image patches linearly embedded, a class
// token and learnt positions, the encoder layers, a final LayerNorm and a classifier.
//   kind: vit, image_size, patch, layers, hidden, heads, [ffn_hidden, classes, dtype]
class VitGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

}  // namespace dejavu::workloads
