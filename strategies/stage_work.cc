#include "strategies/stage_work.h"

#include <algorithm>

#include "platforms/perf_model.h"
#include "sim/kernel.h"
#include "workloads/op_sac.h"

namespace dejavu::strategies {

using workloads::ModelGraph;
using workloads::Op;

std::vector<int> stage_of_ops(const ModelGraph& m, const std::vector<int>& order, const Plan& plan) {
  const int S = plan.total_stages(), L = m.layers;
  const std::vector<int> per_stage = plan.layers_per_stage(L);
  std::vector<int> layer_stage(std::max(L, 1), 0);
  for (int s = 0, l = 0; s < S; ++s)
    for (int k = 0; k < per_stage[s] && l < L; ++k) layer_stage[l++] = s;
  std::vector<int> stage(m.size(), 0);
  for (int v : order) {
    const int layer = m.op(v).layer;
    stage[v] = layer < 0 ? 0 : layer >= L ? S - 1 : layer_stage[layer];
  }
  return stage;
}

double replayed_share(const Op& op, const Segment& seg) {
  if (seg.pass == Pass::ReplayShare) return op.sac_replay_share;
  if (seg.pass == Pass::ReplayKept) return op.dot_replayed[static_cast<size_t>(seg.dot_policy)] ? 1 : 0;
  return 1;
}

ActivationSplit activation_of(const Op& op, const ModelGraph& m, const Plan& plan, const std::string& recompute) {
  const bool in_layer = op.layer >= 0 && op.layer < m.layers;
  const double t = plan.tp;
  // Sequence parallelism splits along the sequence what tensor parallelism leaves whole, in the
  // layers and after them: Megatron runs the final norm on a rank's sequence shard, and the
  // output layer saves that shard and gathers it again for its weight gradient.
  const bool split = op.activation_split || (plan.sequence_parallel && op.layer >= 0);
  ActivationSplit a;
  a.full = op.activation_bytes / (split ? t : 1) / plan.cp;  // each context rank keeps its tokens
  a.stored = a.full;
  if (in_layer && recompute == "selective")
    a.stored = a.full - op.selective_recompute_bytes / (split ? t : 1) / plan.cp;
  if (in_layer && recompute == "full") a.stored = op.layer_input ? a.full : 0;
  if (in_layer && recompute == "selective-op") {
    // the saved outputs: a column-parallel GEMM's and the attention's split by tensor
    // parallelism, a row-parallel GEMM's whole (after its all-reduce) unless SP splits it
    const bool out_split = (op.tp == workloads::TpMode::Split && !op.tp_sync_fwd) || plan.sequence_parallel;
    a.stored = op.layer_input ? a.full : op.sac_saved_bytes / (out_split ? t : 1) / plan.cp;
  }
  if (const int k = workloads::dot_policy_index(recompute); in_layer && k >= 0)  // its input's kept part
    a.stored = op.layer_input
                   ? a.full
                   : std::min(a.full, op.dot_saved_bytes[static_cast<size_t>(k)] / (split ? t : 1) / plan.cp);
  return a;
}

namespace {

// The share of a tensor-parallel all-gather's bytes under sequence parallelism: the GEMM it
// feeds is the next one (forward) or the one before (backward: its output gradient); when
// that GEMM runs in fp8 or fp4, Transformer Engine gathers its quantized input (the
// LayerNorm's fp8 output forward, the cast output gradient backward: layernorm_linear.py and
// base.py's grad_output_preprocess, v1.9; every quantized format in v2.x's
// gather_along_first_dim), else the tensor in its own dtype (the LM head's input; the
// embedding's gradient).
double tp_gather_share(const ModelGraph& m, int v, bool backward) {
  if (!sim::narrow_gemm(m.dtype)) return 1;
  const int n = static_cast<int>(m.size());
  for (int u = backward ? v - 1 : v + 1; u >= 0 && u < n; u += backward ? -1 : 1) {
    const Op& op = m.op(u);
    if (op.op_class != sim::OpClass::Gemm) continue;
    return op.high_precision ? 1 : sim::dtype_bytes(m.dtype) / sim::dtype_bytes(sim::storage_of(m.dtype));
  }
  return 1;
}

// What PyTorch's non-reentrant checkpoint replays of a block before it stops early: every
// op up to the last one that saves a tensor for its backward, that one only if it saves
// more than its inputs (a GEMM saves its input and its weight; a norm its statistics, an
// activation or dropout what it made). Nothing after it is replayed.
std::vector<int> early_stop_replay(const workloads::ModelGraph& model, const std::vector<int>& ops) {
  size_t end = ops.size();
  while (end > 0 && model.op(ops[end - 1]).activation_bytes <= 0) --end;
  if (end > 0 && model.op(ops[end - 1]).op_class == sim::OpClass::Gemm) --end;
  return {ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(end)};
}

bool replay(Pass kind) { return kind == Pass::Replay || kind == Pass::ReplayShare || kind == Pass::ReplayKept; }

const char* pass_name(Pass kind) {
  return kind == Pass::Forward         ? "fwd"
         : replay(kind)                ? "recompute"
         : kind == Pass::Backward      ? "bwd"
         : kind == Pass::BackwardInput ? "bwd-input"
                                       : "bwd-weight";
}

std::vector<int> pass_ops(const ModelGraph& m, const std::vector<int>& all_ops, Pass kind) {
  std::vector<int> ops;
  for (int v : all_ops)
    if (kind != Pass::BackwardWeight || has_weight_gradient(m.op(v))) ops.push_back(v);
  return ops;
}

// Cuts one block's pass into segments: at every tensor-parallel synchronisation, expert
// exchange and context exchange, and where an op needs a branch the open segment does
// not wait for.
class Cutter {
 public:
  Cutter(const ModelGraph& m, const Plan& plan, const std::string& recompute, const std::vector<int>& ops, Pass kind)
      : m_(m),
        plan_(plan),
        recompute_(recompute),
        kind_(kind),
        backward_(kind == Pass::Backward || kind == Pass::BackwardInput || kind == Pass::BackwardWeight),
        exchanges_(kind != Pass::BackwardWeight && plan.ep > 1),
        deps_(m, ops, backward_) {
    cur_ = fresh();
  }

  void add(int v) {
    const Op& op = m_.op(v);
    const bool context = plan_.cp > 1 && op.cp_kv_bytes > 0 && kind_ != Pass::BackwardWeight;
    const bool ring = context && plan_.cp_comm == "ring";  // the attention op in a segment of its own
    if (!cur_.ops.empty() && deps_.needs_more(v)) close();
    if (context && !backward_) {  // gather the sequence's keys and values first
      close();
      cur_.cp_gather_per_sample = op.cp_kv_bytes / plan_.tp;
    }
    if (ring && backward_) close();
    if (exchanges_ && backward_ && op.ep_a2a_bwd_before_bytes > 0) {
      close();
      cur_.ep_before_per_sample = op.ep_a2a_bwd_before_bytes * (op.ep_bytes_per_member ? plan_.ep : 1);
      cur_.ep_before_op = op.ep_bwd_op;
    }
    deps_.take(v);
    cur_.ops.push_back(v);
    account(op);
    const bool syncs = plan_.tp > 1 && kind_ != Pass::BackwardWeight && replayed_share(op, cur_) > 0 &&
                       (backward_ ? op.tp_sync_bwd : op.tp_sync_fwd);
    const double a2a = !exchanges_ ? 0 : backward_ ? op.ep_a2a_bwd_bytes : op.ep_a2a_fwd_bytes;
    if (syncs) {
      cur_.sync_bytes_per_sample = op.tp_sync_bytes;
      cur_.gather_bytes_per_sample = op.tp_sync_bytes * tp_gather_share(m_, v, backward_);
    }
    if (a2a > 0) {
      cur_.ep_after_per_sample = a2a * (op.ep_bytes_per_member ? plan_.ep : 1);
      cur_.ep_after_op = backward_ ? op.ep_bwd_op : op.ep_fwd_op;
    }
    if (context && backward_) cur_.cp_scatter_per_sample = op.cp_kv_bytes / plan_.tp;
    if (syncs || a2a > 0 || (context && backward_) || ring) close();
  }

  std::vector<Segment> finish() {
    close();
    return std::move(out_);
  }

 private:
  // A split backward frees an op's activations once nothing needs them: after W for ops
  // with weights (their inputs make the weight gradient), after B for the rest.
  void account(const Op& op) {
    const ActivationSplit act = activation_of(op, m_, plan_, recompute_);
    const bool frees = kind_ == Pass::Backward || (kind_ == Pass::BackwardInput && !has_weight_gradient(op)) ||
                       kind_ == Pass::BackwardWeight;
    if (backward_ && frees)
      cur_.free_per_sample += act.full;
    else if (!backward_)
      cur_.alloc_per_sample += replay(kind_) ? act.full - act.stored : act.stored;
  }

  void close() {
    if (cur_.ops.empty()) {
      // a segment that only opens with an exchange keeps it for the op that follows
      if (cur_.ep_before_per_sample == 0 && cur_.cp_gather_per_sample == 0) cur_ = fresh();
      return;
    }
    const std::string& a = m_.op(cur_.ops.front()).name;
    const std::string& z = m_.op(cur_.ops.back()).name;
    cur_.name = std::string(pass_name(kind_)) + " " + (a == z ? a : a + ".." + z);
    cur_.after = deps_.close(cur_.ops);
    out_.push_back(std::move(cur_));
    cur_ = fresh();
  }

  Segment fresh() const {
    Segment s;
    s.pass = kind_;
    if (kind_ == Pass::ReplayKept) s.dot_policy = workloads::dot_policy_index(recompute_);
    return s;
  }

  const ModelGraph& m_;
  const Plan& plan_;
  const std::string& recompute_;  // the stage's mode
  Pass kind_;
  bool backward_, exchanges_;
  SegmentDeps deps_;
  Segment cur_;
  std::vector<Segment> out_;
};

std::vector<Segment> cut(const ModelGraph& m, const Plan& plan, const std::string& recompute,
                         const std::vector<int>& all_ops, Pass kind) {
  const std::vector<int> ops = pass_ops(m, all_ops, kind);
  Cutter cutter(m, plan, recompute, ops, kind);
  for (int v : ops) cutter.add(v);
  return cutter.finish();
}

// A deferred weight gradient needs the output gradient of its GEMM (Megatron-Core's
// grad_output_buffer): the input part allocates it, the weight part frees it. Per sample:
// the GEMM's tokens (a context rank's share) x output features (split by tensor
// parallelism) in the model's dtype.
void hold_output_gradients(const ModelGraph& model, const Plan& plan, const std::vector<int>& ops, Block& blk) {
  double held = 0;
  for (int v : ops) {
    const Op& op = model.op(v);
    if (!has_weight_gradient(op) || op.weight_rows <= 0 || op.weight_cols <= 0) continue;
    const double tokens = op.fwd_flops / (2 * op.weight_rows * op.weight_cols) / plan.cp;
    held += tokens * op.weight_cols / (op.tp == workloads::TpMode::Split ? plan.tp : 1) *
            sim::dtype_bytes(sim::storage_of(model.dtype));
  }
  if (held <= 0 || blk.bwd_input.empty() || blk.bwd_weight.empty()) return;
  blk.bwd_input.back().alloc_per_sample += held;
  blk.bwd_weight.back().free_per_sample += held;
}

}  // namespace

bool has_weight_gradient(const Op& op) { return op.weight_bytes > 0; }

namespace {
// One block of virtual stage s: its passes cut into segments under recomputation mode rc.
Block make_block(const ModelGraph& model, const Plan& plan, const std::string& rc, const std::vector<int>& ops, int key,
                 bool split_backward) {
  Block blk;
  blk.is_layer = key >= 0 && key < model.layers;
  for (int v : ops) {
    const double held = model.op(v).params / (model.op(v).tp == workloads::TpMode::Split ? plan.tp : 1) /
                        (model.op(v).expert ? plan.ep : 1);
    blk.params_per_gpu += held;
    if (model.op(v).expert) blk.expert_params_per_gpu += held;
  }
  const std::vector<int> reversed(ops.rbegin(), ops.rend());
  blk.fwd = cut(model, plan, rc, ops, Pass::Forward);
  blk.bwd = cut(model, plan, rc, reversed, Pass::Backward);
  const bool after_layers = key == model.layers;
  if (split_backward || (plan.defer_embedding_wgrad_compute && after_layers)) {
    blk.bwd_input = cut(model, plan, rc, reversed, Pass::BackwardInput);
    blk.bwd_weight = cut(model, plan, rc, reversed, Pass::BackwardWeight);
    if (!split_backward) {
      blk.deferred_wgrad = true;
      hold_output_gradients(model, plan, ops, blk);
    }
  }
  if (blk.is_layer && rc == "full") {
    blk.recompute = cut(model, plan, rc, plan.recompute_early_stop ? early_stop_replay(model, ops) : ops, Pass::Replay);
  } else if (blk.is_layer && rc == "selective") {
    // Replay the core attention: the ops whose activations were dropped (unfused scores),
    // and a fused kernel, which Megatron-Core checkpoints as well (TE's core attention
    // under recompute_granularity: selective) though it stores no scores.
    std::vector<int> attention;
    for (int v : ops)
      if (model.op(v).selective_recompute_bytes > 0 || sim::fused_attention(model.op(v).op_class))
        attention.push_back(v);
    if (!attention.empty()) blk.recompute = cut(model, plan, rc, attention, Pass::Replay);
  } else if (blk.is_layer && rc == "selective-op") {
    // torchtitan's op-level policy (workloads/op_sac.h) under PyTorch's non-reentrant
    // checkpoint: the ops it does not save, up to the last tensor the backward needs; a
    // GEMM saved in part replays the rest of its linears (Pass::ReplayShare)
    std::vector<int> replayed;
    for (int v : early_stop_replay(model, ops))
      if (model.op(v).sac_replay_share > 0) replayed.push_back(v);
    if (!replayed.empty()) blk.recompute = cut(model, plan, rc, replayed, Pass::ReplayShare);
  } else if (blk.is_layer && workloads::dot_policy_index(rc) >= 0) {
    // MaxText's policies (workloads/op_sac.h) under jax.checkpoint: the layer up to its last
    // GEMM comes back, the kept GEMMs and the last one running nothing (Pass::ReplayKept)
    size_t end = ops.size();
    while (end > 0 && model.op(ops[end - 1]).op_class != sim::OpClass::Gemm) --end;
    if (end > 0)
      blk.recompute = cut(model, plan, rc, {ops.begin(), ops.begin() + static_cast<long>(end)}, Pass::ReplayKept);
  }
  return blk;
}
}  // namespace

std::vector<StageWork> build_stage_work(const ModelGraph& model, const Plan& whole, bool split_backward) {
  const std::vector<int> order = model.topological_order();
  const std::vector<int> stage_of = stage_of_ops(model, order, whole);
  std::vector<StageWork> work(whole.total_stages());
  // Each virtual stage's plan: its GPU stage's tensor parallelism (copies only with stage_tp).
  std::vector<Plan> own;
  for (size_t s = 0; s < work.size() && !whole.stage_tp.empty(); ++s)
    own.push_back(whole.at_stage(static_cast<int>(s) % whole.pp));
  auto at = [&](size_t s) -> const Plan& { return own.empty() ? whole : own[s]; };
  std::vector<std::vector<std::vector<int>>> block_ops(work.size());
  std::vector<std::vector<int>> block_layer(work.size());
  std::vector<int> layers_in(work.size(), 0);  // per virtual stage, the layers met so far
  for (int v : order) {
    const Op& op = model.op(v);
    const int s = stage_of[v];
    const bool is_layer = op.layer >= 0 && op.layer < model.layers;
    const int key = is_layer ? op.layer : (op.layer < 0 ? -1 : model.layers);
    if (block_layer[s].empty() || block_layer[s].back() != key) {
      block_layer[s].push_back(key);
      block_ops[s].emplace_back();
      layers_in[s] += is_layer;
    }
    block_ops[s].back().push_back(v);
    const Plan& plan = at(static_cast<size_t>(s));
    const double held = op.params / (op.tp == workloads::TpMode::Split ? plan.tp : 1) / (op.expert ? plan.ep : 1);
    work[s].params_per_gpu += held;
    if (op.expert) work[s].expert_params_per_gpu += held;
    if (op.weight_rows > 0 && op.weight_cols > 0)
      work[s].matrices.emplace_back(op.weight_rows, op.weight_cols / (op.tp == workloads::TpMode::Split ? plan.tp : 1));
    const std::string& rc = plan.recompute_of_layer(s, layers_in[s] - 1);
    work[s].stored_activation_per_sample += activation_of(op, model, plan, rc).stored;
  }
  for (size_t s = 0; s < work.size(); ++s)
    for (size_t b = 0, rank = 0; b < block_ops[s].size(); ++b) {
      const int key = block_layer[s][b];
      const bool is_layer = key >= 0 && key < model.layers;
      const std::string& rc = at(s).recompute_of_layer(static_cast<int>(s), static_cast<int>(is_layer ? rank++ : 0));
      work[s].blocks.push_back(make_block(model, at(s), rc, block_ops[s][b], key, split_backward));
    }
  return work;
}

}  // namespace dejavu::strategies
