#include "workloads/llama.h"

#include "sim/limits.h"
#include "workloads/op_builders.h"
#include "workloads/op_sac.h"

namespace dejavu::workloads {

using sim::OpClass;

namespace {
// Llama's sizes, as doubles for the FLOP and byte counts.
struct Dims {
  explicit Dims(const LlamaConfig& c)
      : s(c.seq_len),
        h(c.hidden),
        a(c.heads),
        f(c.ffn_hidden),
        V(c.vocab),
        kv(static_cast<double>(c.kv_heads) * (h / a)),
        e(sim::dtype_bytes(sim::storage_of(c.dtype))),
        q(saved_gemm_input_bytes(c.dtype)),
        o(saved_attention_output_bytes(c.dtype, c.attention)) {}
  double s, h, a, f, V;
  double kv;  // key (and value) width
  double e;
  double q, o;  // bytes a layer's GEMM keeps per input element; the output projection per O element
};

// An MLP of width f over `tokens` token slots: SwiGLU's gate and up projections (fused),
// silu(gate) * up, the down projection; Megatron's f before it and g after it.
struct Mlp {
  Op gate_up, act, down;
};
// Ungated (Nemotron-4's squared ReLU): one up projection and relu(x)² instead.
Mlp mlp_ops(const std::string& p, int l, double tokens, double f, const Dims& d, bool gated = true) {
  const double h = d.h, e = d.e;
  Mlp m;
  m.gate_up = gemm(p + (gated ? "gate_up" : "up"), l, tokens, h, (gated ? 2 : 1) * f, e, false);
  m.gate_up.activation_bytes = tokens * h * d.q;
  if (gated) m.gate_up.linear_cols = {f, f};  // w1, then w3 (torchtitan's w2(silu(w1(x)) * w3(x)))
  m.gate_up.activation_split = false;
  m.gate_up.role = LinearRole::MlpIn;
  m.gate_up.tp_sync_bwd = true;
  m.gate_up.tp_sync_bytes = tokens * h * e;
  m.act = memory_op(p + (gated ? "swiglu" : "squared_relu"), OpClass::Elementwise, l, tokens * (gated ? 2 : 1) * f, e,
                    TpMode::Split);
  m.down = gemm(p + "down", l, tokens, f, h, e, false);
  m.down.activation_bytes = tokens * f * d.q;
  m.down.tp_sync_fwd = true;
  m.down.tp_sync_bytes = tokens * h * e;
  return m;
}

// The MLP after `norm`; with experts, each token's slots (top_k x capacity) go through
// experts that live on other GPUs of the expert-parallel group (one grouped GEMM per GPU
// for its local experts, as Megatron's GroupedMLP runs them), and shared experts, which
// every token takes, run beside them as a branch of their own (DeepSeekMoE), issued
// while the tokens travel.
void add_mlp(Chain& chain, const LlamaConfig& c, int l, const std::string& p, const Dims& d) {
  const double s = d.s, h = d.h, e = d.e;
  const double E = c.experts, slots = c.experts > 0 ? s * c.top_k * c.capacity_factor : s;
  if (c.experts == 0) {
    Mlp m = mlp_ops(p, l, s, d.f, d, c.gated_mlp);
    for (Op* op : {&m.gate_up, &m.act, &m.down}) chain.add(*op);
    return;
  }
  const int norm = chain.last();
  Op router = gemm(p + "router", l, s, h, E, e, false);
  router.tp = TpMode::Replicated;
  router.activation_bytes = s * h * e;
  router.activation_split = false;
  router.ep_a2a_fwd_bytes = slots * h * e;  // dispatch
  const int routed = chain.add(router);
  if (c.shared_experts > 0) {
    chain.resume(norm);
    Mlp shared = mlp_ops(p + "shared_", l, s, d.f * c.shared_experts, d);
    for (Op* op : {&shared.gate_up, &shared.act, &shared.down}) chain.add(*op);
    chain.resume(routed);
  }
  const int shared_end = c.shared_experts > 0 ? chain.last() : -1;
  Mlp m = mlp_ops(p, l, slots, d.f, d);
  for (Op* op : {&m.gate_up, &m.down}) {
    op->expert = true;
    op->params *= E;
    op->weight_bytes *= E;
  }
  m.gate_up.ep_a2a_bwd_bytes = slots * h * e;      // dispatch's gradient
  m.down.ep_a2a_fwd_bytes = slots * h * e;         // combine
  m.down.ep_a2a_bwd_before_bytes = slots * h * e;  // combine's gradient
  for (Op* op : {&m.gate_up, &m.act, &m.down}) chain.add(*op);
  if (shared_end >= 0) chain.feed_next(shared_end);  // joins the routed experts' output in the next layer
}

// The residual stream: x + attention(rmsnorm1(x)) is added in rmsnorm2 (a fused add and
// norm), and that sum plus the MLP's output in the next layer's rmsnorm1 (or the final).
void add_layer(Chain& chain, const LlamaConfig& c, int l, const Dims& d, int& residual) {
  const double s = d.s, h = d.h, kv = d.kv, e = d.e;
  const std::string p = "L" + std::to_string(l) + ".";
  Op norm1 = memory_op(p + "rmsnorm1", OpClass::Norm, l, s * h, e, TpMode::Replicated);
  norm1.params = h;
  norm1.layer_input = true;
  chain.feed_next(residual);
  chain.add(norm1);
  Op qkv = gemm(p + "qkv", l, s, h, h + 2 * kv, e, false);
  qkv.activation_bytes = s * h * d.q;  // its input
  qkv.linear_cols = {h, kv, kv};       // wq, wk, wv
  qkv.activation_split = false;
  qkv.tp_sync_bwd = true;
  qkv.tp_sync_bytes = s * h * e;
  qkv.role = LinearRole::AttentionIn;
  chain.add(qkv);
  chain.add(attention_op(p + "attention", l, d.s, d.h, d.a, d.kv, d.e, c.attention, true));  // grouped-query, causal
  Op out = gemm(p + "out_proj", l, s, h, h, e, false);
  out.activation_bytes = s * h * d.o;
  out.tp_sync_fwd = true;
  out.tp_sync_bytes = s * h * e;
  out.role = LinearRole::AttentionOut;
  chain.add(out);
  Op norm2 = memory_op(p + "rmsnorm2", OpClass::Norm, l, s * h, e, TpMode::Replicated);
  norm2.params = h;
  chain.feed_next(residual);
  residual = chain.add(norm2);
  add_mlp(chain, c, l, p, d);
}
}  // namespace

ModelGraph make_llama(const LlamaConfig& c) {
  ModelGraph g;
  g.name = c.name;
  g.layers = c.layers;
  g.heads = c.kv_heads;  // the tensor-parallel limit: whole key/value heads per rank
  g.experts = c.experts;
  g.dtype = c.dtype;
  const Dims d(c);
  const double s = d.s, h = d.h, V = d.V, e = d.e;
  g.tokens_per_sample = s;
  g.boundary_bytes_per_sample = s * h * e;
  Chain chain(g);

  Op emb = memory_op("embedding", OpClass::Embedding, -1, s * h, e, TpMode::Split);
  emb.params = V * h;
  emb.activation_bytes = 0;
  emb.tp_sync_fwd = true;
  emb.tp_sync_bytes = s * h * e;
  int residual = chain.add(emb);
  for (int l = 0; l < c.layers; ++l) add_layer(chain, c, l, d, residual);

  const int after = c.layers;
  Op norm = memory_op("final_rmsnorm", OpClass::Norm, after, s * h, e, TpMode::Replicated);
  norm.params = h;
  chain.feed_next(residual);
  chain.add(norm);
  Op head = lm_head_op(after, s, h, V, e);
  if (!c.tie_embeddings) head.params = h * V;
  chain.add(head);
  chain.add(cross_entropy_op("loss", after, s, V, e, c.cross_entropy));
  g.cross_entropy = to_string(c.cross_entropy);
  mark_op_sac(g);
  return g;
}

ModelGraph LlamaGenerator::generate(const ConfigNode& n) const {
  n.expect_map({"kind", "name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab", "dtype",
                "global_batch_size", "tie_embeddings", "experts", "top_k", "capacity_factor", "shared_experts",
                "attention", "mlp", "cross_entropy"});
  LlamaConfig c;
  c.name = n.get_string("name", n.file_stem());
  c.layers = positive_key(n, "layers", 0, true, limits::kMaxLayers);
  c.hidden = positive_key(n, "hidden", 0, true, limits::kMaxWidth);
  c.heads = positive_key(n, "heads", 0, true, limits::kMaxHeads);
  c.kv_heads = positive_key(n, "kv_heads", c.heads, false, limits::kMaxHeads);
  c.ffn_hidden = positive_key(n, "ffn_hidden", 0, true, limits::kMaxWidth);
  c.seq_len = positive_key(n, "seq_len", 0, true, limits::kMaxSequence);
  c.vocab = positive_key(n, "vocab", 0, true, 1 << 30);
  c.tie_embeddings = n.get_bool("tie_embeddings", false);
  c.dtype = dtype_key(n, c.dtype);
  c.attention = attention_key(n, c.attention);
  c.cross_entropy = cross_entropy_key(n, c.cross_entropy);
  if (n.has("mlp")) c.gated_mlp = n.child("mlp").as_choice({"swiglu", "squared_relu"}) == "swiglu";
  if (n.has("experts")) {
    c.experts = positive_key(n, "experts", 0, true, limits::kMaxCount);
    c.top_k = positive_key(n, "top_k", 2, false, limits::kMaxCount);
    if (c.top_k > c.experts)
      n.child("top_k").fail("must be at most experts (" + std::to_string(c.experts) + "), got " +
                            std::to_string(c.top_k));
    c.capacity_factor = n.get_double("capacity_factor", 1.0, 1.0, limits::kMaxCount);
    if (n.has("shared_experts"))
      c.shared_experts = static_cast<int>(n.child("shared_experts").as_int(0, limits::kMaxCount));
  } else if (n.has("shared_experts")) {
    n.child("shared_experts").fail("needs experts (shared experts run beside routed ones)");
  }
  if (c.hidden % c.heads != 0)
    n.child("heads").fail("must divide hidden (" + std::to_string(c.hidden) + "), got " + std::to_string(c.heads));
  if (c.heads % c.kv_heads != 0)
    n.child("kv_heads").fail("must divide heads (" + std::to_string(c.heads) + "), got " + std::to_string(c.kv_heads));
  return make_llama(c);
}

}  // namespace dejavu::workloads
