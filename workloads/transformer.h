// GPT-style decoder-only transformer: embedding, `layers` decoder layers (LayerNorm, QKV,
// attention, projection, LayerNorm, MLP), final LayerNorm, LM head and loss.
#pragma once

#include "sim/kernel.h"
#include "workloads/generator.h"

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
};

ModelGraph make_transformer(const TransformerConfig& c);

class TransformerGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

}  // namespace dejavu::workloads
