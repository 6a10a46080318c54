#include "workloads/op_builders.h"

#include <array>
#include <stdexcept>
#include <utility>

#include "sim/config_node.h"

namespace dejavu::workloads {

using sim::OpClass;

Op memory_op(std::string name, OpClass cls, int layer, double elems, double e, TpMode tp) {
  Op op;
  op.name = std::move(name);
  op.op_class = cls;
  op.layer = layer;
  op.fwd_flops = 5 * elems;
  op.bwd_flops = 10 * elems;
  op.fwd_bytes = 2 * elems * e;
  op.bwd_bytes = 4 * elems * e;
  op.activation_bytes = elems * e;
  op.activation_split = tp == TpMode::Split;
  op.tp = tp;
  return op;
}

Op cross_entropy_op(std::string name, int layer, double tokens, double vocab, double e, CrossEntropyKind kind) {
  const double logits = tokens * vocab;
  Op op = memory_op(std::move(name), OpClass::Elementwise, layer, logits, e, TpMode::Split);
  switch (kind) {
    case CrossEntropyKind::Unfused:
      op.fwd_bytes = logits * (e + 20);
      op.bwd_bytes = logits * (4 + e);
      op.activation_bytes = logits * 4;
      break;
    case CrossEntropyKind::TransformerEngine:
      op.fwd_bytes = logits * 3 * e;
      op.bwd_bytes = logits * 2 * e;
      op.activation_bytes = logits * e;
      break;
    case CrossEntropyKind::Flash:
      op.fwd_bytes = logits * 2 * e;
      op.bwd_bytes = logits * 2 * e;
      op.activation_bytes = logits * e;
      break;
  }
  return op;
}

Op lm_head_op(int layer, double s, double h, double vocab, double e) {
  Op head = gemm("lm_head", layer, s, h, vocab, e, false);
  head.params = 0;
  head.activation_bytes = s * h * e;
  head.activation_split = false;
  head.high_precision = true;
  head.tp_sync_bwd = true;
  head.tp_sync_bytes = s * h * e;
  return head;
}

Op gemm(std::string name, int layer, double s, double k, double n, double e, bool bias) {
  Op op;
  op.name = std::move(name);
  op.op_class = OpClass::Gemm;
  op.layer = layer;
  op.fwd_flops = 2 * s * k * n;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = (s * k + s * n) * e;
  op.bwd_bytes = 2 * op.fwd_bytes;
  op.weight_bytes = k * n * e;
  op.weight_rows = k;
  op.weight_cols = n;
  op.params = k * n + (bias ? n : 0);
  op.activation_bytes = s * n * e;
  op.counts_as_model_flops = true;
  return op;
}

double saved_gemm_input_bytes(sim::DType dtype) {
  return sim::dtype_bytes(sim::narrow_gemm(dtype) ? dtype : sim::storage_of(dtype));
}

double saved_attention_output_bytes(sim::DType dtype, AttentionKind kind) {
  const double fused = kind == AttentionKind::Unfused ? 0 : sim::dtype_bytes(sim::storage_of(dtype));
  return sim::narrow_gemm(dtype) ? fused + saved_gemm_input_bytes(dtype) : sim::dtype_bytes(dtype);
}

int positive_key(const ConfigNode& n, const char* key, long long fallback, bool required, long long max) {
  if (!required && !n.has(key)) return static_cast<int>(fallback);
  return static_cast<int>(n.child(key).as_int(1, max));
}

sim::DType dtype_key(const ConfigNode& n, sim::DType fallback) {
  if (!n.has("dtype")) return fallback;
  const ConfigNode d = n.child("dtype");
  sim::DType out;
  if (!sim::parse_dtype(d.as_string(), &out))
    d.fail(std::string("expected one of ") + sim::dtype_names() + ", got \"" + d.as_string() + "\"");
  return out;
}

namespace {
// A YAML key's named kinds (attention, cross_entropy): the names in order, a name's kind, a
// kind's name.
template <typename Kind, size_t N>
using KindTable = std::array<std::pair<const char*, Kind>, N>;

template <typename Kind, size_t N>
std::vector<std::string> names_in(const KindTable<Kind, N>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.first);
  return out;
}

template <typename Kind, size_t N>
Kind kind_named(const KindTable<Kind, N>& table, const std::string& name, const char* what) {
  for (const auto& [k, kind] : table)
    if (name == k) return kind;
  throw std::invalid_argument(std::string("unknown ") + what + " kind " + name);  // callers pass a checked name
}

template <typename Kind, size_t N>
const char* name_of(const KindTable<Kind, N>& table, Kind k) {
  for (const auto& [name, kind] : table)
    if (kind == k) return name;
  return "?";
}

const KindTable<AttentionKind, 4> kAttentionKinds = {{{"flash", AttentionKind::Flash},
                                                      {"cudnn", AttentionKind::Cudnn},
                                                      {"triton", AttentionKind::Triton},
                                                      {"unfused", AttentionKind::Unfused}}};
const KindTable<CrossEntropyKind, 3> kCrossEntropyKinds = {{{"unfused", CrossEntropyKind::Unfused},
                                                            {"te", CrossEntropyKind::TransformerEngine},
                                                            {"flash", CrossEntropyKind::Flash}}};
}  // namespace

const std::vector<std::string>& attention_names() {
  static const std::vector<std::string> names = names_in(kAttentionKinds);
  return names;
}

AttentionKind attention_of(const std::string& name) { return kind_named(kAttentionKinds, name, "attention"); }

AttentionKind attention_key(const ConfigNode& n, AttentionKind fallback) {
  if (!n.has("attention")) return fallback;
  return attention_of(n.child("attention").as_choice(attention_names()));
}

const char* to_string(AttentionKind k) { return name_of(kAttentionKinds, k); }

const std::vector<std::string>& cross_entropy_names() {
  static const std::vector<std::string> names = names_in(kCrossEntropyKinds);
  return names;
}

CrossEntropyKind cross_entropy_of(const std::string& name) {
  return kind_named(kCrossEntropyKinds, name, "cross-entropy");
}

CrossEntropyKind cross_entropy_key(const ConfigNode& n, CrossEntropyKind fallback) {
  if (!n.has("cross_entropy")) return fallback;
  return cross_entropy_of(n.child("cross_entropy").as_choice(cross_entropy_names()));
}

const char* to_string(CrossEntropyKind k) { return name_of(kCrossEntropyKinds, k); }

namespace {
// FlashAttention (Dao 2022, 2023): forward 4·s²·h FLOPs, halved under a causal mask; the
// backward 2.5x the forward (it recomputes the scores), the convention its benchmarks
// and the measured efficiency (platforms/calibration/flash_attention_*.csv) share. Memory
// traffic: Q, K, V read and O written once per pass; stores Q, K, V and the softmax
// statistics (a·s fp32 values), no score matrix, so selective recomputation drops nothing.
// Op-level selective checkpointing saves its output and replays none of it.
Op flash_attention(Op attn, double s, double h, double a, double kv, double e, bool causal) {
  attn.op_class = sim::OpClass::FlashAttention;
  attn.fwd_flops = 4 * s * s * h * (causal ? 0.5 : 1);
  attn.bwd_flops = 2.5 * attn.fwd_flops;
  attn.fwd_bytes = (2 * s * h + 2 * s * kv) * e;
  attn.bwd_bytes = 2 * attn.fwd_bytes;
  attn.selective_recompute_bytes = 0;
  attn.activation_bytes = (s * h + 2 * s * kv) * e + 4 * a * s;
  // op-level selective checkpointing (op_sac.h) keeps the kernel's output and log-sum-exp
  attn.sac_saved_bytes = s * h * e + 4 * a * s;
  attn.sac_replay_share = 0;
  return attn;
}
}  // namespace

Op attention_op(std::string name, int layer, double s, double h, double a, double kv, double e, AttentionKind kind,
                bool causal, bool dropout) {
  Op attn;
  attn.name = std::move(name);
  attn.op_class = sim::OpClass::Attention;
  attn.layer = layer;
  attn.fwd_flops = 4 * s * s * h;
  attn.bwd_flops = 2 * attn.fwd_flops;
  attn.fwd_bytes = (2 * s * h + 2 * s * kv + 4 * a * s * s) * e;
  attn.bwd_bytes = 2 * attn.fwd_bytes;
  attn.counts_as_model_flops = true;
  attn.selective_recompute_bytes = a * s * s * (2 * e + (dropout ? 1 : 0));
  attn.cp_kv_bytes = 2 * s * kv * e;
  attn.activation_bytes = (s * h + 2 * s * kv) * e + attn.selective_recompute_bytes;
  attn.activation_split = true;
  attn.model_fwd_flops = attn.fwd_flops;
  attn.causal = causal;
  attn.head_dim = h / a;
  if (kind == AttentionKind::Unfused) return attn;
  attn = flash_attention(attn, s, h, a, kv, e, causal);
  if (kind == AttentionKind::Triton) attn.op_class = sim::OpClass::TritonAttention;
  if (kind == AttentionKind::Cudnn) attn.op_class = sim::OpClass::CudnnAttention;
  return attn;
}

}  // namespace dejavu::workloads
