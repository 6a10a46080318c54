#include "workloads/model_graph.h"

#include <algorithm>
#include <iterator>

#include <functional>
#include <queue>

#include "sim/error.h"

namespace dejavu::workloads {

int ModelGraph::add_op(Op op) { return static_cast<int>(boost::add_vertex(std::move(op), graph_)); }

void ModelGraph::add_edge(int from, int to) {
  const int n = static_cast<int>(size());
  if (from < 0 || to < 0 || from >= n || to >= n)
    throw ModelError("model " + name + ": an edge names an op that does not exist");
  boost::add_edge(from, to, graph_);
}

// Kahn's algorithm taking the ready op added first: independent branches come out in the
// order the generator wrote them (a framework issues them so), a chain as it was built.
std::vector<int> ModelGraph::topological_order() const {
  std::vector<size_t> waiting(size());
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_))) {
    waiting[v] = boost::in_degree(v, graph_);
    if (waiting[v] == 0) ready.push(static_cast<int>(v));
  }
  std::vector<int> order;
  order.reserve(size());
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (auto e : boost::make_iterator_range(boost::out_edges(static_cast<Graph::vertex_descriptor>(v), graph_)))
      if (--waiting[boost::target(e, graph_)] == 0) ready.push(static_cast<int>(boost::target(e, graph_)));
  }
  if (order.size() != size()) throw ModelError("model " + name + ": the operator graph has a cycle");
  return order;
}

std::vector<int> ModelGraph::inputs(int v) const {
  std::vector<int> out;
  for_each_input(v, [&](int u) { out.push_back(u); });
  return out;
}

std::vector<int> ModelGraph::consumers(int v) const {
  std::vector<int> out;
  for_each_consumer(v, [&](int u) { out.push_back(u); });
  return out;
}

// The heaviest path by `weight`, walking the order once: each op's best predecessor.
std::vector<int> ModelGraph::critical_path(const std::function<double(const Op&)>& weight) const {
  const std::vector<int> order = topological_order();
  std::vector<double> best(size(), 0);
  std::vector<int> from(size(), -1);
  int end = -1;
  for (int v : order) {
    for_each_input(v, [&](int u) {
      if (from[v] < 0 || best[u] > best[from[v]]) from[v] = u;
    });
    best[v] = (from[v] >= 0 ? best[from[v]] : 0) + weight(op(v));
    if (end < 0 || best[v] > best[end]) end = v;
  }
  std::vector<int> path;
  for (int v = end; v >= 0; v = from[v]) path.push_back(v);
  return std::vector<int>(path.rbegin(), path.rend());
}

double ModelGraph::parameter_count() const {
  double total = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_))) total += graph_[v].params;
  return total;
}

double ModelGraph::model_flops(double global_batch) const {
  double fwd = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph_)))
    if (graph_[v].counts_as_model_flops) fwd += graph_[v].model_flops();
  return 3.0 * fwd * global_batch;
}

}  // namespace dejavu::workloads
