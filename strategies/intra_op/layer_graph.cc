#include "strategies/intra_op/layer_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/error.h"
#include "strategies/lowering.h"

namespace dejavu::strategies::intra_op {

namespace {

using sim::OpClass;
using workloads::Op;

enum class Cut { None, Rows, Cols, Depth };  // the GEMM dimension a GPU's share cuts

bool is_attention(OpClass c) { return c == OpClass::Attention || sim::fused_attention(c); }
bool split(Layout l) { return l == Layout::SplitTokens || l == Layout::SplitFeatures; }
bool shaped_gemm(const Op& op) {
  return op.op_class == OpClass::Gemm && op.weight_rows > 0 && op.weight_cols > 0 && op.fwd_flops > 0;
}
bool divides(double x, int n) { return std::fmod(x, n) == 0; }

int index_of(const Node& node, const std::string& name) {
  for (size_t i = 0; i < node.strategies.size(); ++i)
    if (node.strategies[i].name == name) return static_cast<int>(i);
  return -1;
}

// Prices each operator's strategies on the mesh's GPUs.
class OpPricer {
 public:
  OpPricer(const LayerMesh& mesh, const Resharding& r)
      : m_(*mesh.model), b_(mesh.micro_batch), n_(static_cast<int>(mesh.gpus.size())), r_(r), recipe_(mesh.fp8_recipe) {
    std::set<std::string> seen;
    for (int gpu : mesh.gpus) {
      const platforms::GpuSpec& spec = *mesh.cluster->gpus.at(gpu).spec;
      if (seen.insert(spec.name).second) perf_.push_back(platforms::perf_model(*mesh.cluster, spec));
    }
    e_ = sim::dtype_bytes(sim::storage_of(m_.dtype));
    state_ = model_state_per_param(m_.dtype, 0, 1).total();
  }

  Node node(const Op& op) const {
    Node n;
    n.name = op.name;
    if (shaped_gemm(op)) {
      gemm(op, n);
    } else if (is_attention(op.op_class)) {
      add_if(n, other(op, "replicated", Layout::Replicated, Layout::Replicated), true);
      add_if(n, other(op, "samples", Layout::SplitTokens, Layout::SplitTokens), divides(b_, n_));
      add_if(n, other(op, "heads", Layout::SplitFeatures, Layout::SplitFeatures), m_.heads > 0 && m_.heads % n_ == 0);
      n.output_bytes = m_.boundary_bytes_per_sample * b_;
      refer(n, "heads", "heads", "samples");
    } else {
      memory(op, n);
    }
    return n;
  }

 private:
  void add_if(Node& n, Strategy s, bool allowed) const {
    if (allowed) n.strategies.push_back(std::move(s));
  }
  static void refer(Node& n, const char* megatron, const char* sp, const char* data) {
    n.megatron = index_of(n, megatron);
    n.megatron_sp = index_of(n, sp);
    n.data = index_of(n, data);
  }

  void gemm(const Op& op, Node& n) const {
    const double K = op.weight_rows, N = op.weight_cols, T = op.fwd_flops * b_ / (2 * K * N);
    add_if(n, gemm_strategy(op, "replicated", Layout::Replicated, Layout::Replicated, Cut::None), true);
    add_if(n, gemm_strategy(op, "tokens", Layout::SplitTokens, Layout::SplitTokens, Cut::Rows), divides(T, n_));
    add_if(n, gemm_strategy(op, "columns", Layout::Replicated, Layout::SplitFeatures, Cut::Cols), divides(N, n_));
    add_if(n, gemm_strategy(op, "rows", Layout::SplitFeatures, Layout::Partial, Cut::Depth), divides(K, n_));
    n.output_bytes = T * N * e_;
    const char* megatron = op.tp_sync_fwd ? "rows" : op.tp == workloads::TpMode::Replicated ? "replicated" : "columns";
    refer(n, megatron, op.tp == workloads::TpMode::Replicated ? "tokens" : megatron, "tokens");
  }

  void memory(const Op& op, Node& n) const {
    const double T = m_.tokens_per_sample * b_;
    add_if(n, other(op, "replicated", Layout::Replicated, Layout::Replicated), true);
    add_if(n, other(op, "tokens", Layout::SplitTokens, Layout::SplitTokens), divides(T, n_));
    if (op.op_class != OpClass::Norm)  // a norm reduces over the features
      add_if(n, other(op, "features", Layout::SplitFeatures, Layout::SplitFeatures), true);
    n.output_bytes = op.fwd_bytes * b_ / 2;  // it reads one tensor and writes one as large
    const bool whole = op.tp == workloads::TpMode::Replicated;
    refer(n, whole ? "replicated" : "features", whole ? "tokens" : "features", "tokens");
  }

  Strategy gemm_strategy(const Op& op, std::string name, Layout in, Layout out, Cut cut) const {
    sim::GemmShape f{op.fwd_flops * b_ / (2 * op.weight_rows * op.weight_cols), op.weight_cols, op.weight_rows, 1};
    if (cut == Cut::Rows) f.rows /= n_;
    if (cut == Cut::Cols) f.cols /= n_;
    if (cut == Cut::Depth) f.depth /= n_;
    sim::Kernel fwd, bwd;
    fwd.dtype = bwd.dtype = m_.dtype;
    fwd.fp8_recipe = bwd.fp8_recipe = recipe_;
    const sim::GemmShape input{f.rows, f.depth, f.cols, 1}, weight{f.depth, f.cols, f.rows, 1};
    fwd.products = {f, sim::GemmShape{}};
    fwd.product_count = 1;
    bwd.products = {input, weight};
    bwd.product_count = 2;
    for (sim::Kernel* k : {&fwd, &bwd})
      for (int i = 0; i < k->product_count; ++i) {
        k->flops += k->products[i].flops();
        k->bytes += platforms::gemm_bytes(k->products[i], sim::storage_of(m_.dtype));
      }
    if (sim::narrow_gemm(m_.dtype)) {  // the activation input cast forward, the output gradient backward
      const double cast = e_ + sim::dtype_bytes(m_.dtype);
      fwd.cast_bytes = cast * f.rows * f.depth;
      bwd.cast_bytes = cast * f.rows * f.cols;
    }
    Strategy s{std::move(name), in, cut == Cut::Cols, out};
    s.compute_s = kernels_s(fwd, bwd);
    const bool weights_split = cut == Cut::Cols || cut == Cut::Depth;
    s.memory_bytes = op.params * state_ / (weights_split ? n_ : 1) + op.activation_bytes * b_ / (split(in) ? n_ : 1);
    if (cut == Cut::Rows) s.comm_s = r_.bucketed_s(sim::CollectiveOp::AllReduce, op.params * e_);
    return s;
  }

  // A kernel whose work divides evenly when its tensors are split.
  Strategy other(const Op& op, std::string name, Layout in, Layout out) const {
    const double share = split(in) ? n_ : 1;
    sim::Kernel fwd, bwd;
    for (sim::Kernel* k : {&fwd, &bwd}) {
      k->op_class = op.op_class;
      k->dtype = sim::storage_of(m_.dtype);
      k->head_dim = op.head_dim;
      k->causal = op.causal;
    }
    fwd.flops = op.fwd_flops * b_ / share;
    fwd.bytes = op.fwd_bytes * b_ / share + op.weight_bytes;
    bwd.flops = op.bwd_flops * b_ / share;
    bwd.bytes = op.bwd_bytes * b_ / share + 2 * op.weight_bytes;
    Strategy s{std::move(name), in, false, out};
    s.compute_s = kernels_s(fwd, bwd);
    s.memory_bytes = op.params * state_ + op.activation_bytes * b_ / share;
    if (in == Layout::SplitTokens) s.comm_s = r_.bucketed_s(sim::CollectiveOp::AllReduce, op.params * e_);
    return s;
  }

  double kernels_s(const sim::Kernel& fwd, const sim::Kernel& bwd) const {
    double worst = 0;
    for (const platforms::PerfModel& pm : perf_) worst = std::max(worst, pm.time_s(fwd) + pm.time_s(bwd));
    return worst;
  }

  const workloads::ModelGraph& m_;
  double b_;
  int n_;
  const Resharding& r_;
  std::vector<platforms::PerfModel> perf_;
  sim::Fp8Recipe recipe_;
  double e_ = 2, state_ = 0;
};

Node input_node(const workloads::ModelGraph& m, int b) {
  Node n;
  n.name = "input";
  n.strategies = {{"replicated", Layout::Replicated, false, Layout::Replicated},
                  {"tokens", Layout::SplitTokens, false, Layout::SplitTokens},
                  {"features", Layout::SplitFeatures, false, Layout::SplitFeatures}};
  n.output_bytes = m.boundary_bytes_per_sample * b;
  n.megatron = 0;
  n.megatron_sp = 1;
  n.data = 1;
  return n;
}

void check(const LayerMesh& mesh) {
  if (!mesh.model || !mesh.cluster) throw ModelError("intra-op sharding: no model or cluster");
  const workloads::ModelGraph& m = *mesh.model;
  if (m.layers < 1) throw ModelError("intra-op sharding: " + m.name + " has no repeated layers to shard");
  if (m.experts > 0)
    throw ModelError("intra-op sharding covers dense layers; " + m.name + " has experts (use ep in a plan)");
  if (mesh.gpus.empty()) throw ModelError("intra-op sharding: the mesh has no GPUs");
  if (mesh.micro_batch < 1) throw ModelError("intra-op sharding: the micro-batch must be at least 1 sample");
}

}  // namespace

ShardingGraph layer_graph(const LayerMesh& mesh) {
  check(mesh);
  const workloads::ModelGraph& m = *mesh.model;
  const auto algorithm = sim::collective_algorithms().make(mesh.collective_algorithm);
  std::vector<int> hosts;
  for (int gpu : mesh.gpus) hosts.push_back(mesh.cluster->gpus.at(gpu).host);
  const Resharding r(mesh.cluster->network, hosts, *algorithm);
  const OpPricer pricer(mesh, r);
  ShardingGraph g;
  g.nodes.push_back(input_node(m, mesh.micro_batch));
  std::map<int, int> node_of;
  for (int v : m.topological_order())
    if (m.op(v).layer == 0) {
      node_of[v] = static_cast<int>(g.nodes.size());
      g.nodes.push_back(pricer.node(m.op(v)));
    }
  for (const auto& [v, node] : node_of) {
    for (int u : m.inputs(v)) g.edges.push_back({node_of.count(u) ? node_of.at(u) : 0, node, {}});
    const auto consumers = m.consumers(v);
    if (std::any_of(consumers.begin(), consumers.end(), [&](int c) { return !node_of.count(c); }))
      g.edges.push_back({node, 0, {}});  // what the next layer reads
  }
  price_edges(g, r);
  return g;
}

}  // namespace dejavu::strategies::intra_op
