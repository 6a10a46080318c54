#include "workloads/dlrm.h"

#include <algorithm>
#include <numeric>

#include "sim/limits.h"
#include "workloads/op_builders.h"
#include "workloads/op_sac.h"

namespace dejavu::workloads {

using sim::OpClass;

namespace {
std::vector<int> widths(const ConfigNode& list) {
  std::vector<int> out;
  for (const ConfigNode& w : list.items()) {
    out.push_back(static_cast<int>(w.as_int(1, limits::kMaxWidth)));
  }
  if (out.empty()) list.fail("expected at least one layer");
  return out;
}
// One sharding's embedding tables, summed: how many, the fewest rows, lookups per sample,
// parameters.
struct Tables {
  double tables = 0, rows_min = 0, lookups = 0, params = 0;
};

// The table groups, summed per sharding (each group's own `sharding`, else `fallback`), in
// the order the shardings first appear; `modes` gets each group's.
std::vector<std::pair<std::string, Tables>> tables_of(const ConfigNode& list, const std::string& fallback, int& dim,
                                                      std::vector<std::string>& modes) {
  std::vector<std::pair<std::string, Tables>> out;
  for (const ConfigNode& t : list.items()) {
    t.expect_map({"count", "rows", "dim", "pooling", "sharding"});
    const int count = positive_key(t, "count", 1, false, limits::kMaxCount),
              rows = positive_key(t, "rows", 0, true, 1 << 30);
    const int d = positive_key(t, "dim", 0, true, limits::kMaxWidth),
              pooling = positive_key(t, "pooling", 1, false, 1 << 20);
    if (dim != 0 && d != dim)
      t.child("dim").fail("every table needs the same dim for the interaction, got " + std::to_string(d));
    dim = d;
    modes.push_back(t.has("sharding") ? t.child("sharding").as_choice(embedding_shardings()) : fallback);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.first == modes.back(); });
    if (it == out.end()) it = out.insert(out.end(), {modes.back(), Tables{}});
    Tables& s = it->second;
    s.tables += count;
    s.rows_min = s.rows_min == 0 ? rows : std::min<double>(s.rows_min, rows);
    s.lookups += static_cast<double>(count) * pooling;
    s.params += static_cast<double>(count) * rows * d;
  }
  if (out.empty()) list.fail("expected at least one table group");
  return out;
}

// The lookups of one sharding's tables, pooled, and the exchange that brings each sample's
// pooled vectors (tables x dim) to the GPU that owns the sample; `experts` the count expert
// parallelism must divide (whole tables, columns or rows).
Op embedding_op(const std::string& name, const std::string& sharding, const Tables& t, int dim, double e,
                int& experts) {
  Op emb = memory_op(name, OpClass::Embedding, -1, t.lookups * dim, e, TpMode::Replicated);
  emb.params = t.params;
  emb.fwd_bytes = (t.lookups + t.tables) * dim * e;
  emb.bwd_bytes = (t.lookups + t.tables) * dim * e;
  emb.activation_bytes = t.tables * dim * e;
  experts = sharding == "table-wise"    ? static_cast<int>(t.tables)
            : sharding == "column-wise" ? dim
            : sharding == "row-wise"    ? static_cast<int>(std::min(t.rows_min, 1e9))
                                        : 0;
  if (sharding == "data-parallel") return emb;
  emb.expert = true;
  const double exchanged = t.tables * dim * e;
  emb.ep_a2a_fwd_bytes = exchanged;
  emb.ep_a2a_bwd_before_bytes = exchanged;
  if (sharding == "row-wise") {
    emb.ep_fwd_op = sim::CollectiveOp::ReduceScatter;
    emb.ep_bwd_op = sim::CollectiveOp::AllGather;
    emb.ep_bytes_per_member = true;  // partial sums for every sample of the group
  }
  return emb;
}
}  // namespace

const std::vector<std::string>& embedding_shardings() {
  static const std::vector<std::string> names = {"table-wise", "row-wise", "column-wise", "data-parallel"};
  return names;
}

ModelGraph with_embedding_sharding(const ModelGraph& model, const std::vector<std::string>& modes) {
  YAML::Node root = YAML::Load(model.source_yaml);
  YAML::Node tables = root["tables"];
  for (size_t i = 0; i < tables.size(); ++i) {
    if (modes.size() == 1)
      tables[i].remove("sharding");
    else
      tables[i]["sharding"] = modes.at(i);
  }
  if (modes.size() == 1) root["sharding"] = modes.front();
  return load_workload(ConfigNode(root, model.source_file, ""));
}

ModelGraph DlrmGenerator::generate(const ConfigNode& n) const {
  n.expect_map(
      {"kind", "name", "dense_features", "tables", "bottom_mlp", "top_mlp", "sharding", "dtype", "global_batch_size"});
  ModelGraph g;
  g.name = n.get_string("name", n.file_stem());
  g.dtype = dtype_key(n, sim::DType::FP32);
  g.heads = 1;  // no tensor parallelism
  const double e = sim::dtype_bytes(sim::storage_of(g.dtype));
  const int dense = positive_key(n, "dense_features", 13, false, limits::kMaxWidth);
  const std::vector<int> bottom = widths(n.child("bottom_mlp")), top = widths(n.child("top_mlp"));
  const std::string sharding = n.has("sharding") ? n.child("sharding").as_choice(embedding_shardings()) : "table-wise";
  int dim = 0;
  const auto by_sharding = tables_of(n.child("tables"), sharding, dim, g.embedding_sharding);
  double tables = 0;
  for (const auto& [mode, t] : by_sharding) tables += t.tables;
  if (bottom.back() != dim)
    n.child("bottom_mlp")
        .fail("must end at the embedding dim " + std::to_string(dim) + ", got " + std::to_string(bottom.back()));
  g.layers = static_cast<int>(top.size());
  Chain chain(g);

  // Sparse features: one lookup op per sharding, one after another; expert parallelism
  // must divide every sharded one's tables, columns or rows.
  int pooled = -1;
  for (const auto& [mode, t] : by_sharding) {
    int experts = 0;
    const std::string name = by_sharding.size() == 1 ? "embedding_lookup" : "embedding_lookup." + mode;
    pooled = chain.add(embedding_op(name, mode, t, dim, e, experts));
    if (experts > 0) g.experts = g.experts == 0 ? experts : std::gcd(g.experts, experts);
  }
  chain.resume(-1);  // the bottom MLP: a branch of its own, on the dense features
  int in = dense;
  for (size_t i = 0; i < bottom.size(); ++i) {
    Op fc = gemm("bottom_mlp" + std::to_string(i), -1, 1, in, bottom[i], e, true);
    fc.tp = TpMode::Replicated;
    chain.add(fc);
    in = bottom[i];
  }
  // Pairwise dot products of the tables' vectors and the bottom MLP's output.
  const double vectors = tables + 1, pairs = vectors * (vectors - 1) / 2;
  Op inter = memory_op("interaction", OpClass::Gemm, 0, vectors * dim, e, TpMode::Replicated);
  inter.fwd_flops = 2 * pairs * dim;
  inter.bwd_flops = 2 * inter.fwd_flops;
  inter.counts_as_model_flops = true;
  chain.feed_next(pooled);  // the two branches meet here
  chain.add(inter);
  in = static_cast<int>(dim + pairs);
  for (size_t i = 0; i < top.size(); ++i) {
    Op fc = gemm("top_mlp" + std::to_string(i), static_cast<int>(i), 1, in, top[i], e, true);
    fc.tp = TpMode::Replicated;
    chain.add(fc);
    in = top[i];
  }
  chain.add(memory_op("loss", OpClass::Elementwise, g.layers, 1, e, TpMode::Replicated));
  g.boundary_bytes_per_sample = static_cast<double>(*std::max_element(top.begin(), top.end())) * e;
  mark_op_sac(g);
  return g;
}

}  // namespace dejavu::workloads
