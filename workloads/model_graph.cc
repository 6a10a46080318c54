#include "workloads/model_graph.h"

#include <algorithm>
#include <iterator>

#include <functional>
#include <queue>

#include "sim/error.h"
#include "workloads/op_edges.h"

namespace dejavu::workloads {

OpEdges& ModelGraph::own_edges() {
  if (!edges_)
    edges_ = std::make_shared<OpEdges>();
  else if (edges_.use_count() > 1)
    edges_ = std::make_shared<OpEdges>(*edges_);
  return *edges_;
}

int ModelGraph::add_op(Op op) {
  ops_.push_back(std::move(op));
  return static_cast<int>(boost::add_vertex(own_edges().graph));
}

void ModelGraph::add_edge(int from, int to) {
  const int n = static_cast<int>(size());
  if (from < 0 || to < 0 || from >= n || to >= n)
    throw ModelError("model " + name + ": an edge names an op that does not exist");
  boost::add_edge(from, to, own_edges().graph);
}

const OpEdges& ModelGraph::edges() const {
  static const OpEdges none;
  return edges_ ? *edges_ : none;
}

size_t ModelGraph::edge_count() const { return edges_ ? boost::num_edges(edges_->graph) : 0; }

void ModelGraph::visit(int v, bool consumers, Visitor fn, void* f) const {
  if (!edges_) return;
  const auto& g = edges_->graph;
  const auto u = static_cast<OpEdges::Graph::vertex_descriptor>(v);
  if (consumers)
    for (auto e : boost::make_iterator_range(boost::out_edges(u, g))) fn(f, static_cast<int>(boost::target(e, g)));
  else
    for (auto e : boost::make_iterator_range(boost::in_edges(u, g))) fn(f, static_cast<int>(boost::source(e, g)));
}

// Kahn's algorithm taking the ready op added first: independent branches come out in the
// order the generator wrote them (a framework issues them so), a chain as it was built.
std::vector<int> ModelGraph::topological_order() const {
  std::vector<size_t> waiting(size());
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t v = 0; v < size(); ++v) {
    for_each_input(static_cast<int>(v), [&](int) { ++waiting[v]; });
    if (waiting[v] == 0) ready.push(static_cast<int>(v));
  }
  std::vector<int> order;
  order.reserve(size());
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for_each_consumer(v, [&](int u) {
      if (--waiting[u] == 0) ready.push(u);
    });
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
  for (const Op& op : ops_) total += op.params;
  return total;
}

double ModelGraph::model_flops(double global_batch) const {
  double fwd = 0;
  for (const Op& op : ops_)
    if (op.counts_as_model_flops) fwd += op.model_flops();
  return 3.0 * fwd * global_batch;
}

}  // namespace dejavu::workloads
