#include "workloads/token_slice.h"

namespace dejavu::workloads {

namespace {
bool is_attention(const Op& op) { return op.op_class == sim::OpClass::Attention || sim::fused_attention(op.op_class); }

// Every per-sample figure of `op` that grows with the tokens, times `f`.
void scale_linear(Op& op, double f) {
  for (double* x :
       {&op.fwd_flops, &op.bwd_flops, &op.fwd_bytes, &op.bwd_bytes, &op.activation_bytes, &op.selective_recompute_bytes,
        &op.sac_saved_bytes, &op.dot_saved_bytes[0], &op.dot_saved_bytes[1], &op.tp_sync_bytes, &op.cp_kv_bytes,
        &op.ep_a2a_fwd_bytes, &op.ep_a2a_bwd_bytes, &op.ep_a2a_bwd_before_bytes})
    *x *= f;
  if (op.model_fwd_flops >= 0) op.model_fwd_flops *= f;
}

void scale_attention(Op& op, double o, double l, double s) {
  const double tokens = l / s;
  const double flops =
      op.op_class == sim::OpClass::Attention ? unfused_score_fraction(o, l, s) : causal_pair_fraction(o, l, s);
  const double stored_scores = op.selective_recompute_bytes;  // unfused only (fused stores none)
  const double unfused = op.op_class == sim::OpClass::Attention;
  const double traffic = unfused ? flops : (2 * l + o) / (2 * s);
  op.fwd_flops *= flops;
  op.bwd_flops *= flops;
  if (op.model_fwd_flops >= 0) op.model_fwd_flops *= flops;
  op.fwd_bytes *= traffic;
  op.bwd_bytes *= traffic;
  op.activation_bytes = (op.activation_bytes - stored_scores) * tokens + stored_scores * flops;
  op.selective_recompute_bytes = stored_scores * flops;
  for (double* x : {&op.tp_sync_bytes, &op.cp_kv_bytes, &op.sac_saved_bytes}) *x *= tokens;
  for (double& x : op.dot_saved_bytes) x *= tokens;
}
}  // namespace

double causal_pair_fraction(double o, double l, double s) { return (2 * l * o + l * l) / (s * s); }
double unfused_score_fraction(double o, double l, double s) { return l * (o + l) / (s * s); }

bool sliceable_by_tokens(const ModelGraph& model) {
  if (model.tokens_per_sample < 2) return false;
  bool any = false;
  for (size_t v = 0; v < model.size(); ++v) {
    const Op& op = model.op(static_cast<int>(v));
    if (!is_attention(op)) continue;
    if (!op.causal) return false;
    any = true;
  }
  return any;
}

ModelGraph token_slice(const ModelGraph& model, double offset, double length) {
  ModelGraph out = model;
  const double s = model.tokens_per_sample;
  for (size_t v = 0; v < out.size(); ++v) {
    Op& op = out.mutable_op(static_cast<int>(v));
    if (is_attention(op))
      scale_attention(op, offset, length, s);
    else
      scale_linear(op, length / s);
  }
  out.boundary_bytes_per_sample *= length / s;
  out.tokens_per_sample = length;
  return out;
}

}  // namespace dejavu::workloads
