#include "workloads/op_sac.h"

#include <map>

namespace dejavu::workloads {

void mark_op_sac(ModelGraph& g) {
  const double e = sim::dtype_bytes(sim::storage_of(g.dtype));  // a GEMM's output
  std::map<int, int> matmuls;                                   // per layer, the linears met so far
  for (int v : g.topological_order()) {
    Op& op = g.mutable_op(v);
    const bool gemm = op.op_class == sim::OpClass::Gemm && op.weight_rows > 0 && op.weight_cols > 0;
    if (op.layer < 0 || op.layer >= g.layers || !gemm || op.expert) continue;  // replayed whole
    const std::vector<double> widths = op.linear_cols.empty() ? std::vector<double>{op.weight_cols} : op.linear_cols;
    double saved = 0, replayed = 0;
    for (double w : widths) (++matmuls[op.layer] % 2 == 1 ? saved : replayed) += w;
    const double tokens = op.fwd_flops / (2 * op.weight_rows * op.weight_cols);
    op.sac_saved_bytes = tokens * saved * e;
    op.sac_replay_share = replayed / (saved + replayed);
  }
  mark_dot_sac(g);
}

namespace {
bool layer_gemm(const Op& op, int layers) {
  return op.op_class == sim::OpClass::Gemm && op.weight_rows > 0 && op.weight_cols > 0 && op.layer >= 0 &&
         op.layer < layers && !op.expert;
}

void mark_dot_policy(ModelGraph& g, int k, const std::vector<int>& order, const std::map<int, int>& last) {
  const double e = sim::dtype_bytes(sim::storage_of(g.dtype));
  const DotPolicy& policy = dot_policies()[static_cast<size_t>(k)];
  double kept = 0;  // a kept GEMM output waiting for the op that reads it
  for (int v : order) {
    Op& op = g.mutable_op(v);
    if (kept > 0 && op.activation_bytes > 0) {
      op.dot_saved_bytes[k] = kept;
      kept = 0;
    }
    if (!layer_gemm(op, g.layers)) continue;
    const bool keeps =
        op.role == LinearRole::AttentionIn || (op.role == LinearRole::AttentionOut && policy.keeps_attention_out);
    if (keeps || last.at(op.layer) == v) op.dot_replayed[k] = false;
    if (!keeps || last.at(op.layer) == v) continue;
    const double tokens = op.fwd_flops / (2 * op.weight_rows * op.weight_cols);
    kept = tokens * op.weight_cols * e;
  }
}
}  // namespace

const std::vector<DotPolicy>& dot_policies() {
  static const std::vector<DotPolicy> policies = {{"save-dot-except-mlpwi", true}, {"save-qkv-proj", false}};
  return policies;
}

int dot_policy_index(const std::string& mode) {
  for (size_t i = 0; i < dot_policies().size(); ++i)
    if (mode == dot_policies()[i].mode) return static_cast<int>(i);
  return -1;
}

void mark_dot_sac(ModelGraph& g) {
  const std::vector<int> order = g.topological_order();
  std::map<int, int> last;  // per layer, its last GEMM
  for (int v : order)
    if (layer_gemm(g.op(v), g.layers)) last[g.op(v).layer] = v;
  for (int k = 0; k < kDotPolicies; ++k) mark_dot_policy(g, k, order, last);
}

}  // namespace dejavu::workloads
