// Megatron-Core's pipeline_model_parallel_layout: a string naming what each (virtual)
// pipeline stage holds, read as Megatron-Core reads it
// (megatron/core/transformer/pipeline_parallel_layer_layout.py, parse_str_to_list):
//
//   "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"
//
// E is the embedding, t a decoder (transformer) layer, L the loss (the LM head and its
// loss); `|` ends a stage; `(...)*n` repeats a group and `x*n` one character; commas are
// cosmetic. Stages are listed in pipeline order, virtual stage v of GPU stage s at position
// v * pp + s, as `stages` lists them. dejavu places the embedding on the first stage and the
// loss on the last, as Megatron-Core requires, so a layout is its stages' layer counts.
#pragma once

#include <string>
#include <vector>

#include "sim/limits.h"

namespace dejavu::strategies {

struct PipelineLayout {
  std::vector<int> layers;  // decoder layers per stage, pipeline order
  std::string error;        // non-empty: what is wrong and what would be valid
};

// A short string cannot unroll past kMaxLayers layers' worth of text (with a stage each).
PipelineLayout parse_pipeline_layout(const std::string& text);

}  // namespace dejavu::strategies
