// Intra-operator sharding (Alpa's intra-op pass, GSPMD): each operator of a layer picks how
// its tensors lie over a 1-D mesh of n GPUs, and tensors are re-laid between operators by
// the collectives that takes. A tensor is [tokens, features]:
//
//   R   replicated: every GPU holds all of it
//   S0  split on tokens (a micro-batch's samples or sequence positions)
//   S1  split on features (a GEMM's columns, attention heads)
//   P   partial sums: every GPU holds a full-sized addend (a GEMM split on its reduction)
//
// An operator's strategy reads one layout and writes one; its cost is its forward and
// backward kernels on one GPU plus the collectives inside it (a weight gradient's
// all-reduce when the tokens are split, its bytes' share of a bucketed all-reduce). An edge's cost is the forward
// re-layout of the tensor and the backward re-layout of its gradient:
//
//   from \ to   R                S0 / S1
//   R           0                0 (each GPU keeps its slice)
//   S0 / S1     all-gather       0 same split; all-to-all the other
//   P           all-reduce       reduce-scatter
//
// The gradient travels from the consumer's input layout (P when the consumer's input
// gradient comes out as partial sums, as a column-split GEMM's does) to the producer's
// output layout (R when the producer wrote P: its backward needs the whole gradient).
// Megatron's tensor parallelism is one assignment (column, heads, row: two all-reduces
// forward, two backward), Megatron's sequence parallelism another (all-gathers and
// reduce-scatters on S0 instead).
#pragma once

#include <string>
#include <vector>

#include "sim/collective.h"
#include "sim/network.h"

namespace dejavu::strategies::intra_op {

enum class Layout { Replicated, SplitTokens, SplitFeatures, Partial };
const char* to_string(Layout l);  // R, S0, S1, P

struct Strategy {
  std::string name;  // replicated, tokens, features, columns, rows, heads, samples
  Layout input = Layout::Replicated;
  bool partial_input_gradient = false;  // its input's gradient comes out as partial sums
  Layout output = Layout::Replicated;
  double compute_s = 0;     // forward and backward kernels on one GPU
  double comm_s = 0;        // collectives inside the operator
  double memory_bytes = 0;  // per GPU: model states and the activations kept for backward
  double cost_s() const { return compute_s + comm_s; }
};

struct Node {
  std::string name;
  std::vector<Strategy> strategies;
  double output_bytes = 0;  // the tensor it writes, whole
  // Strategy indices of the reference plans (-1: none): Megatron's tensor parallelism,
  // with sequence parallelism, and every operator split on tokens (data parallelism).
  int megatron = -1, megatron_sp = -1, data = -1;
};

struct Edge {
  int from = -1, to = -1;
  std::vector<std::vector<double>> cost_s;  // [from's strategy][to's strategy]
};

struct ShardingGraph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

using Choice = std::vector<int>;  // a strategy index per node

// Re-layout prices over one group of GPUs (network hosts).
class Resharding {
 public:
  Resharding(const sim::Network& net, std::vector<int> group, const sim::CollectiveAlgorithm& algorithm);
  double collective_s(sim::CollectiveOp op, double bytes) const;  // bytes as nccl-tests' size
  // Weight gradients are reduced in buckets across the layer (PyTorch DDP, Megatron's
  // gradient buffer): an operator's share is its bytes' time, not a collective's latency.
  double bucketed_s(sim::CollectiveOp op, double bytes) const;
  double move_s(Layout from, Layout to, double bytes) const;  // one direction, a whole tensor
  // Forward re-layout of the producer's output plus backward re-layout of its gradient.
  double edge_s(const Strategy& producer, const Strategy& consumer, double bytes) const;
  int size() const { return static_cast<int>(group_.size()); }

 private:
  const sim::Network& net_;
  std::vector<int> group_;
  const sim::CollectiveAlgorithm& algorithm_;
};

// Fills every edge's cost matrix from its nodes' strategies and the producer's tensor.
void price_edges(ShardingGraph& g, const Resharding& r);

double cost_s(const ShardingGraph& g, const Choice& c);
double memory_bytes(const ShardingGraph& g, const Choice& c);

struct Solution {
  bool feasible = false;  // false: no assignment fits the memory budget
  Choice choice;
  double cost_s = 0, memory_bytes = 0;
};

// Every assignment tried (the ILP's check); throws ModelError beyond `max_assignments`.
// A budget of infinity leaves memory free.
Solution brute_force(const ShardingGraph& g, double memory_budget_bytes, double max_assignments = 1e7);

}  // namespace dejavu::strategies::intra_op
