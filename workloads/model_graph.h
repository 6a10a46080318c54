// A model as a graph of operators (Boost.Graph), plus the few facts about it that plans
// are checked against.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/error.h"
#include "sim/kernel.h"
#include "workloads/op.h"

namespace dejavu::workloads {

class ModelGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op>;

  int add_op(Op op);
  void add_edge(int from, int to);  // `to` consumes the output of `from`

  size_t size() const { return boost::num_vertices(graph_); }
  const Op& op(int v) const { return graph_[static_cast<Graph::vertex_descriptor>(v)]; }
  Op& mutable_op(int v) { return graph_[static_cast<Graph::vertex_descriptor>(v)]; }
  const Graph& graph() const { return graph_; }

  // Ops in an order where every op follows its inputs, independent branches in the order
  // they were added; throws ModelError on a cycle.
  std::vector<int> topological_order() const;
  std::vector<int> inputs(int v) const;     // the ops whose outputs `v` reads
  std::vector<int> consumers(int v) const;  // the ops that read the output of `v`
  template <class F>
  void for_each_input(int v, F&& f) const {
    for (auto e : boost::make_iterator_range(boost::in_edges(static_cast<Graph::vertex_descriptor>(v), graph_)))
      f(static_cast<int>(boost::source(e, graph_)));
  }
  template <class F>
  void for_each_consumer(int v, F&& f) const {
    for (auto e : boost::make_iterator_range(boost::out_edges(static_cast<Graph::vertex_descriptor>(v), graph_)))
      f(static_cast<int>(boost::target(e, graph_)));
  }
  // The path from a source to a sink with the largest total weight (ops in order).
  std::vector<int> critical_path(const std::function<double(const Op&)>& weight) const;

  double parameter_count() const;
  // Megatron's model FLOPs for one iteration over `global_batch` samples: forward plus
  // backward (3x forward) of the ops counted as model FLOPs, no recomputation.
  double model_flops(double global_batch) const;

  std::string name;
  int layers = 0;                        // repeated layers, split across pipeline stages
  int heads = 0;                         // tensor parallelism must divide this (0: no limit)
  int experts = 0;                       // expert parallelism must divide this (0: dense)
  double boundary_bytes_per_sample = 0;  // activation crossing a layer boundary
  sim::DType dtype = sim::DType::BF16;
  SourceLoc dtype_where;         // where the workload gave its dtype (its file alone when defaulted)
  double tokens_per_sample = 1;  // sequence length for language models (tokens/s)
  int global_batch_size = 0;     // the training job's batch, if the YAML fixes it (0: not)
  std::string cross_entropy;     // a language model's loss kind (`cross_entropy:`); empty: none
  // Embedding tables (DLRM): how each table group is sharded, in the workload's order (empty:
  // no tables); a plan may shard them otherwise (strategies/plan_model.h), which regenerates
  // the graph from `source_yaml`, the workload's own text.
  std::vector<std::string> embedding_sharding;
  std::string source_yaml, source_file;

 private:
  Graph graph_;
};

}  // namespace dejavu::workloads
