#include "workloads/inspect.h"

#include <cstdio>
#include <map>

#include <boost/graph/graphviz.hpp>

namespace dejavu::workloads {

void write_inspection(std::ostream& out, const ModelGraph& m, double batch) {
  struct ClassTotals {
    int ops = 0;
    double fwd_flops = 0, params = 0;
  };
  std::map<std::string, ClassTotals> by_class;
  double fwd = 0, layer_params = 0, layer_activation = 0;
  for (size_t v = 0; v < m.size(); ++v) {
    const Op& op = m.op(static_cast<int>(v));
    ClassTotals& c = by_class[sim::to_string(op.op_class)];
    ++c.ops;
    c.fwd_flops += op.fwd_flops;
    c.params += op.params;
    if (op.counts_as_model_flops) fwd += op.fwd_flops;
    if (op.layer == 0) {
      layer_params += op.params;
      layer_activation += op.activation_bytes;
    }
  }
  char buf[256];
  const char* attention = by_class.count("flash_attention")    ? ", flash attention"
                          : by_class.count("triton_attention") ? ", triton attention"
                          : by_class.count("cudnn_attention")  ? ", cudnn attention"
                          : by_class.count("attention")        ? ", unfused attention"
                                                               : "";
  out << m.name << ": " << m.size() << " ops, " << m.layers << " layers, " << sim::to_string(sim::storage_of(m.dtype))
      << (sim::narrow_gemm(m.dtype) ? std::string(" (GEMMs in ") + sim::to_string(m.dtype) + ")" : std::string())
      << attention << (m.cross_entropy.empty() ? std::string() : ", " + m.cross_entropy + " cross-entropy") << "\n";
  std::snprintf(buf, sizeof buf, "  parameters            %.4g (%.4g per layer)\n", m.parameter_count(), layer_params);
  out << buf;
  std::snprintf(buf, sizeof buf, "  FLOPs / sample        %.4g forward, %.4g forward + backward (as the kernels run)\n",
                fwd, 3 * fwd);
  out << buf;
  std::snprintf(
      buf, sizeof buf, "  model FLOPs / iteration of %.0f sample%s  %.4g (Megatron's count, MFU's: %s)\n", batch,
      batch == 1 ? "" : "s", m.model_flops(batch),
      m.model_flops(1) > 3 * fwd * (1 + 1e-12) ? "attention over every score, causal or not" : "the kernels' FLOPs");
  out << buf;
  std::snprintf(buf, sizeof buf, "  activations / layer / sample  %.4g bytes (no parallelism, no recomputation)\n",
                layer_activation);
  out << buf;
  // The branches: how much of the forward lies on its heaviest path (all of it for a chain).
  const std::vector<int> path = m.critical_path([](const Op& op) { return op.fwd_flops; });
  double on_path = 0, all = 0;
  for (int v : path) on_path += m.op(v).fwd_flops;
  for (size_t v = 0; v < m.size(); ++v) all += m.op(static_cast<int>(v)).fwd_flops;
  size_t edges = boost::num_edges(m.graph());
  std::snprintf(buf, sizeof buf, "  graph                 %zu edges; critical path %zu ops, %.4g%% of forward FLOPs\n",
                edges, path.size(), all > 0 ? 100 * on_path / all : 100.0);
  out << buf;
  out << "  by op class:   ops   forward FLOPs / sample   parameters\n";
  for (const auto& [name, c] : by_class) {
    std::snprintf(buf, sizeof buf, "    %-12s %5d   %22.4g   %10.4g\n", name.c_str(), c.ops, c.fwd_flops, c.params);
    out << buf;
  }
}

void write_dot(std::ostream& out, const ModelGraph& m) {
  const auto& g = m.graph();
  boost::write_graphviz(out, g, [&](std::ostream& o, ModelGraph::Graph::vertex_descriptor v) {
    const Op& op = g[v];
    o << "[label=\"" << op.name << "\\n" << sim::to_string(op.op_class) << "\"]";
  });
}

}  // namespace dejavu::workloads
