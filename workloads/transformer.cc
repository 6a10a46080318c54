#include "workloads/transformer.h"

#include "sim/limits.h"
#include "workloads/op_builders.h"
#include "workloads/op_sac.h"

namespace dejavu::workloads {

using sim::OpClass;

namespace {
// A transformer's sizes, as doubles for the FLOP and byte counts.
struct Dims {
  explicit Dims(const TransformerConfig& c)
      : s(c.seq_len),
        h(c.hidden),
        a(c.heads),
        V(c.vocab),
        f(c.ffn_hidden > 0 ? c.ffn_hidden : 4.0 * c.hidden),
        e(sim::dtype_bytes(sim::storage_of(c.dtype))),
        q(saved_gemm_input_bytes(c.dtype)),
        o(saved_attention_output_bytes(c.dtype, c.attention)) {}
  double s, h, a, V, f, e;
  double q, o;  // bytes a layer's GEMM keeps per input element; the output projection per O element
};

Op keep(Op op, double bytes, bool split) {
  op.activation_bytes = bytes;
  op.activation_split = split;
  return op;
}

// Word and position embeddings; vocabulary-parallel under TP, so the output is summed
// over the group (an all-reduce) as in Megatron.
void add_embedding(Chain& chain, const TransformerConfig& c, const Dims& d) {
  const double s = d.s, h = d.h, e = d.e;
  if (c.ends == TransformerConfig::Ends::Vit) {
    // Patches of p x p x 3 values, each projected to h: a GEMM over the s-1 patches.
    const double p = c.patch;
    Op patches = gemm("patch_embedding", -1, s - 1, 3 * p * p, h, e, true);
    patches.tp = TpMode::Replicated;
    patches.params += (s + 1) * h;  // the learnt positions and the class token
    patches.activation_bytes = (s - 1) * 3 * p * p * e;
    patches.activation_split = false;
    chain.add(patches);
    return;
  }
  Op emb = memory_op("embedding", OpClass::Embedding, -1, s * h, e, TpMode::Split);
  const double positions = c.max_position > 0 ? c.max_position : s;
  emb.params = (d.V + positions) * h;
  if (c.ends == TransformerConfig::Ends::Bert) emb.params += 2 * h + 2 * h;  // token types, LayerNorm
  emb.weight_bytes = 0;                                                      // a lookup touches only the rows it reads
  emb.activation_bytes = 0;  // its output is layer 0's input, kept there
  emb.tp_sync_fwd = true;
  emb.tp_sync_bytes = s * h * e;
  chain.add(emb);
}

// Activation memory per layer and sample, Korthikanti et al. 2022 (16-bit: e = 2):
// 34·s·h + 5·a·s² bytes, of which LayerNorm inputs, the attention and MLP inputs and
// the two dropout masks (10·s·h) stay whole on every tensor-parallel rank without
// sequence parallelism, and the softmax, its dropout mask and output (5·a·s²) are what
// selective recomputation drops.
// The residual path runs beside each sub-layer: the layer's input joins the attention's
// output at its dropout (dropout + add), which joins the MLP's output at the next one.
// Without dropout: 32·s·h + 4·a·s², the two dropouts plain residual adds that store nothing.
void add_layer(Chain& chain, int l, const Dims& d, AttentionKind kind, bool causal, bool dropout) {
  const double s = d.s, h = d.h, f = d.f, e = d.e;
  const std::string p = "L" + std::to_string(l) + ".";
  const int input = chain.last();
  Op ln1 = keep(memory_op(p + "ln1", OpClass::Norm, l, s * h, e, TpMode::Replicated), s * h * e, false);
  ln1.params = 2 * h;
  ln1.layer_input = true;
  chain.add(ln1);
  Op qkv = keep(gemm(p + "qkv", l, s, h, 3 * h, e, true), s * h * d.q, false);
  qkv.tp_sync_bwd = true;  // Megatron's f: all-reduce of the input gradient
  qkv.tp_sync_bytes = s * h * e;
  qkv.role = LinearRole::AttentionIn;
  chain.add(qkv);
  // multi-head: keys as wide as queries
  chain.add(attention_op(p + "attention", l, d.s, d.h, d.a, d.h, d.e, kind, causal, dropout));
  Op proj = keep(gemm(p + "proj", l, s, h, h, e, true), s * h * d.o, true);
  proj.tp_sync_fwd = true;  // Megatron's g: all-reduce of the row-parallel output
  proj.tp_sync_bytes = s * h * e;
  proj.role = LinearRole::AttentionOut;
  chain.add(proj);
  chain.feed_next(input);
  auto residual = [&](const std::string& branch) {  // attn or mlp
    const std::string name = p + branch + (dropout ? "_dropout" : "_residual");
    return keep(memory_op(name, OpClass::Elementwise, l, s * h, e, TpMode::Replicated), dropout ? s * h : 0, false);
  };
  const int mid = chain.add(residual("attn"));
  Op ln2 = keep(memory_op(p + "ln2", OpClass::Norm, l, s * h, e, TpMode::Replicated), s * h * e, false);
  ln2.params = 2 * h;
  chain.add(ln2);
  Op fc1 = keep(gemm(p + "fc1", l, s, h, f, e, true), s * h * d.q, false);
  fc1.tp_sync_bwd = true;
  fc1.tp_sync_bytes = s * h * e;
  fc1.role = LinearRole::MlpIn;
  chain.add(fc1);
  chain.add(keep(memory_op(p + "gelu", OpClass::Elementwise, l, s * f, e, TpMode::Split), s * f * e, true));
  Op fc2 = keep(gemm(p + "fc2", l, s, f, h, e, true), s * f * d.q, true);
  fc2.tp_sync_fwd = true;
  fc2.tp_sync_bytes = s * h * e;
  chain.add(fc2);
  chain.feed_next(mid);
  chain.add(residual("mlp"));
}

// A vision transformer's classifier on the class token.
void add_vit_head(Chain& chain, const TransformerConfig& c, const Dims& d) {
  const int after = c.layers;
  Op lnf = memory_op("final_ln", OpClass::Norm, after, d.s * d.h, d.e, TpMode::Replicated);
  lnf.params = 2 * d.h;
  chain.add(lnf);
  Op head = gemm("classifier", after, 1, d.h, c.classes, d.e, true);
  head.tp = TpMode::Replicated;
  chain.add(head);
  chain.add(memory_op("loss", OpClass::Elementwise, after, c.classes, d.e, TpMode::Replicated));
}

// A language model's head: BERT's pooler and MLM transform or GPT's final LayerNorm, then
// the LM head sharing the embedding's weights unless untied (vocabulary-parallel) and the loss.
void add_lm_head(Chain& chain, const TransformerConfig& c, const Dims& d) {
  const double s = d.s, h = d.h, V = d.V, e = d.e;
  const int after = c.layers;
  if (c.ends == TransformerConfig::Ends::Bert) {
    Op pooler = gemm("pooler", after, 1, h, h, e, true);  // tanh(dense) on the first token
    pooler.tp = TpMode::Replicated;
    chain.add(pooler);
    Op transform = gemm("mlm_transform", after, s, h, h, e, true);  // dense, GELU, LayerNorm
    transform.tp = TpMode::Replicated;
    transform.params += 2 * h;
    chain.add(transform);
  } else {
    Op lnf = memory_op("final_ln", OpClass::Norm, after, s * h, e, TpMode::Replicated);
    lnf.params = 2 * h;
    chain.add(lnf);
  }
  Op head = lm_head_op(after, s, h, V, e);
  if (c.ends == TransformerConfig::Ends::Bert) head.params = V;  // BERT's decoder keeps a bias
  if (!c.tie_embeddings) head.params = V * h;
  chain.add(head);
  chain.add(cross_entropy_op("loss", after, s, V, e, c.cross_entropy));
}
}  // namespace

ModelGraph make_transformer(const TransformerConfig& c) {
  ModelGraph g;
  g.name = c.name;
  g.layers = c.layers;
  g.heads = c.heads;
  g.dtype = c.dtype;
  const Dims d(c);
  g.boundary_bytes_per_sample = d.s * d.h * d.e;
  // Language models count tokens; a vision transformer's throughput is in images.
  g.tokens_per_sample = c.ends == TransformerConfig::Ends::Vit ? 1 : d.s;
  Chain chain(g);
  add_embedding(chain, c, d);
  const bool causal = c.ends == TransformerConfig::Ends::Gpt;
  for (int l = 0; l < c.layers; ++l) add_layer(chain, l, d, c.attention, causal, c.dropout);
  if (c.ends == TransformerConfig::Ends::Vit)
    add_vit_head(chain, c, d);
  else
    add_lm_head(chain, c, d);
  if (c.ends != TransformerConfig::Ends::Vit) g.cross_entropy = to_string(c.cross_entropy);
  mark_op_sac(g);
  return g;
}

namespace {
// The keys every transformer-shaped generator shares: name, layers, hidden, heads,
// ffn_hidden, dtype (heads must divide hidden).
TransformerConfig read_layers(const ConfigNode& n, TransformerConfig::Ends ends) {
  TransformerConfig c;
  c.ends = ends;
  c.name = n.get_string("name", n.file_stem());
  c.layers = positive_key(n, "layers", 0, true, limits::kMaxLayers);
  c.hidden = positive_key(n, "hidden", 0, true, limits::kMaxWidth);
  c.heads = positive_key(n, "heads", 0, true, limits::kMaxHeads);
  c.ffn_hidden = positive_key(n, "ffn_hidden", 4LL * c.hidden, false, limits::kMaxWidth);
  c.dtype = dtype_key(n, c.dtype);
  c.attention = attention_key(n, c.attention);
  c.dropout = n.get_bool("dropout", true);
  c.cross_entropy = cross_entropy_key(n, c.cross_entropy);
  if (c.hidden % c.heads != 0)
    n.child("heads").fail("must divide hidden (" + std::to_string(c.hidden) + "), got " + std::to_string(c.heads));
  return c;
}
}  // namespace

ModelGraph TransformerGenerator::generate(const ConfigNode& n) const {
  n.expect_map({"kind", "name", "layers", "hidden", "heads", "seq_len", "vocab", "ffn_hidden", "dtype",
                "global_batch_size", "attention", "dropout", "cross_entropy", "tie_embeddings"});
  TransformerConfig c = read_layers(n, TransformerConfig::Ends::Gpt);
  c.seq_len = positive_key(n, "seq_len", 0, true, limits::kMaxSequence);
  c.vocab = positive_key(n, "vocab", 0, true, 1 << 30);
  c.tie_embeddings = n.get_bool("tie_embeddings", true);
  return make_transformer(c);
}

ModelGraph BertGenerator::generate(const ConfigNode& n) const {
  n.expect_map({"kind", "name", "layers", "hidden", "heads", "seq_len", "vocab", "ffn_hidden", "max_position", "dtype",
                "global_batch_size", "attention", "dropout", "cross_entropy"});
  TransformerConfig c = read_layers(n, TransformerConfig::Ends::Bert);
  c.seq_len = positive_key(n, "seq_len", 0, true, limits::kMaxSequence);
  c.vocab = positive_key(n, "vocab", 0, true, 1 << 30);
  c.max_position = positive_key(n, "max_position", 512, false, limits::kMaxSequence);
  if (c.seq_len > c.max_position)
    n.child("seq_len").fail("longer than max_position (" + std::to_string(c.max_position) + ")");
  return make_transformer(c);
}

ModelGraph VitGenerator::generate(const ConfigNode& n) const {
  n.expect_map({"kind", "name", "image_size", "patch", "layers", "hidden", "heads", "ffn_hidden", "classes", "dtype",
                "global_batch_size", "attention", "dropout"});
  TransformerConfig c = read_layers(n, TransformerConfig::Ends::Vit);
  c.image_size = positive_key(n, "image_size", 224, false, 1 << 16);
  c.patch = positive_key(n, "patch", 0, true, 1 << 16);
  c.classes = positive_key(n, "classes", 1000, false, 1 << 24);
  if (c.image_size % c.patch != 0)
    n.child("patch").fail("must divide image_size (" + std::to_string(c.image_size) + ")");
  const int side = c.image_size / c.patch;
  c.seq_len = side * side + 1;
  c.vocab = 1;  // no vocabulary
  return make_transformer(c);
}

}  // namespace dejavu::workloads
