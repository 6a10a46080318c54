// One repeated layer of a model as a sharding graph (sharding.h): its operators, each with
// the strategies it can take over a 1-D mesh of GPUs, priced by the performance model of
// those GPUs (the slowest where they differ) and the cluster's network, for one
// micro-batch. An "input" node stands for the layer's input, and the layer's outputs lead
// back to it: the next layer reads what this one writes, so the layout the layer starts
// from is the one it must end in.
//
// Strategies by operator class:
//   GEMM y[T, N] = x[T, K] W[K, N]: replicated; tokens (S0 -> S0, the weight gradient
//     all-reduced); columns (R -> S1, W split on N, input gradient partial: Megatron's
//     column-parallel layer); rows (S1 -> P, W split on K: its row-parallel layer)
//   attention: replicated; samples (S0, whole sequences per GPU); heads (S1)
//   normalisation: replicated; tokens (its weights' gradient all-reduced)
//   element-wise: replicated; tokens; features
// A split needs the split dimension to divide by the mesh size.
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/fp8_recipe.h"
#include "strategies/intra_op/sharding.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::intra_op {

struct LayerMesh {
  const workloads::ModelGraph* model = nullptr;
  const platforms::Cluster* cluster = nullptr;
  std::vector<int> gpus;  // indices into cluster->gpus
  int micro_batch = 1;    // samples
  std::string collective_algorithm = "auto";
  // An fp8 model's scaling recipe (sim/fp8_recipe.h; Default: Transformer Engine's for each GPU).
  sim::Fp8Recipe fp8_recipe = sim::Fp8Recipe::Default;
};

// Throws ModelError for a model without repeated layers, or with experts.
ShardingGraph layer_graph(const LayerMesh& mesh);

}  // namespace dejavu::strategies::intra_op
