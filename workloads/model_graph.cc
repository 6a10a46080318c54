#include "workloads/model_graph.h"

#include <algorithm>
#include <iterator>

#include <boost/graph/topological_sort.hpp>

#include "sim/error.h"

namespace dejavu::workloads {

int ModelGraph::add_op(Op op) { return static_cast<int>(boost::add_vertex(std::move(op), graph_)); }

void ModelGraph::add_edge(int from, int to) {
  const int n = static_cast<int>(size());
  if (from < 0 || to < 0 || from >= n || to >= n)
    throw ModelError("model " + name + ": an edge names an op that does not exist");
  boost::add_edge(from, to, graph_);
}

std::vector<int> ModelGraph::topological_order() const {
  std::vector<Graph::vertex_descriptor> reversed;
  try {
    boost::topological_sort(graph_, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw ModelError("model " + name + ": the operator graph has a cycle");
  }
  return std::vector<int>(reversed.rbegin(), reversed.rend());
}

double ModelGraph::parameter_count() const {
  double total = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_))) total += graph_[v].params;
  return total;
}

double ModelGraph::model_flops(double global_batch) const {
  double fwd = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_)))
    if (graph_[v].counts_as_model_flops) fwd += graph_[v].fwd_flops;
  return 3.0 * fwd * global_batch;
}

}  // namespace dejavu::workloads
