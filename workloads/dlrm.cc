#include "workloads/dlrm.h"

#include <algorithm>

#include "sim/limits.h"
#include "workloads/op_builders.h"

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
// The embedding tables, summed: how many, the fewest rows, lookups per sample, parameters.
struct Tables {
  double tables = 0, rows_min = 0, lookups = 0, params = 0;
  int dim = 0;
};

Tables tables_of(const ConfigNode& list) {
  Tables s;
  for (const ConfigNode& t : list.items()) {
    t.expect_map({"count", "rows", "dim", "pooling"});
    const int count = positive_key(t, "count", 1, false, limits::kMaxCount),
              rows = positive_key(t, "rows", 0, true, 1 << 30);
    const int d = positive_key(t, "dim", 0, true, limits::kMaxWidth),
              pooling = positive_key(t, "pooling", 1, false, 1 << 20);
    if (s.dim != 0 && d != s.dim)
      t.child("dim").fail("every table needs the same dim for the interaction, got " + std::to_string(d));
    s.dim = d;
    s.tables += count;
    s.rows_min = s.rows_min == 0 ? rows : std::min<double>(s.rows_min, rows);
    s.lookups += static_cast<double>(count) * pooling;
    s.params += static_cast<double>(count) * rows * d;
  }
  return s;
}
}  // namespace

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
  const std::string sharding =
      n.has("sharding") ? n.child("sharding").as_choice({"table-wise", "row-wise", "column-wise", "data-parallel"})
                        : "table-wise";
  const Tables t = tables_of(n.child("tables"));
  const double tables = t.tables, rows_min = t.rows_min, lookups = t.lookups, params = t.params;
  const int dim = t.dim;
  if (bottom.back() != dim)
    n.child("bottom_mlp")
        .fail("must end at the embedding dim " + std::to_string(dim) + ", got " + std::to_string(bottom.back()));
  g.experts = sharding == "table-wise"    ? static_cast<int>(tables)
              : sharding == "column-wise" ? dim
              : sharding == "row-wise"    ? static_cast<int>(std::min(rows_min, 1e9))
                                          : 0;
  g.layers = static_cast<int>(top.size());
  Chain chain(g);

  // Sparse features: lookups pooled per table; the exchange brings each sample's pooled
  // vectors (tables x dim) to the GPU that owns the sample.
  Op emb = memory_op("embedding_lookup", OpClass::Embedding, -1, lookups * dim, e, TpMode::Replicated);
  emb.params = params;
  emb.fwd_bytes = (lookups + tables) * dim * e;
  emb.bwd_bytes = (lookups + tables) * dim * e;
  emb.activation_bytes = tables * dim * e;
  if (sharding != "data-parallel") {
    emb.expert = true;
    const double exchanged = tables * dim * e;
    emb.ep_a2a_fwd_bytes = exchanged;
    emb.ep_a2a_bwd_before_bytes = exchanged;
    if (sharding == "row-wise") {
      emb.ep_fwd_op = sim::CollectiveOp::ReduceScatter;
      emb.ep_bwd_op = sim::CollectiveOp::AllGather;
      emb.ep_bytes_per_member = true;  // partial sums for every sample of the group
    }
  }
  const int pooled = chain.add(emb);
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
  return g;
}

}  // namespace dejavu::workloads
