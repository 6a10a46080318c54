// The layer-chain models the lowering tests reason about by hand.
#pragma once

#include <string>

#include "workloads/model_graph.h"

namespace dejavu::strategies {

// p identical layers of one GEMM each, nothing before or after them: equal stages.
inline workloads::ModelGraph equal_layers(int p, double flops) {
  workloads::ModelGraph g;
  g.name = "equal";
  g.layers = p;
  int prev = -1;
  for (int l = 0; l < p; ++l) {
    workloads::Op op;
    op.name = "layer" + std::to_string(l);
    op.layer = l;
    op.fwd_flops = flops;
    op.bwd_flops = 2 * flops;
    op.counts_as_model_flops = true;
    const int v = g.add_op(op);
    if (prev >= 0) g.add_edge(prev, v);
    prev = v;
  }
  return g;
}

// equal_layers with Q bf16 parameters per layer (2Q bytes of weights each GEMM reads).
inline workloads::ModelGraph weighted_layers(int p, double flops, double Q) {
  auto model = equal_layers(p, flops);
  for (size_t v = 0; v < model.size(); ++v) {
    auto& op = const_cast<workloads::Op&>(model.op(static_cast<int>(v)));
    op.params = Q;
    op.weight_bytes = 2 * Q;
  }
  return model;
}

}  // namespace dejavu::strategies
