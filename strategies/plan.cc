#include "strategies/plan.h"

#include "platforms/gpu_order.h"

#include <algorithm>
#include <set>

#include "sim/limits.h"
#include "strategies/data_parallel.h"
#include "strategies/pipeline_layout.h"
#include "strategies/recompute_modes.h"
#include "strategies/schedules/schedule.h"
#include "workloads/dlrm.h"
#include "workloads/token_slice.h"

namespace dejavu::strategies {

namespace {
int positive(const ConfigNode& n, const char* key, int fallback, Plan& plan, long long max = limits::kMaxDegree) {
  if (!n.has(key)) return fallback;
  const ConfigNode v = n.child(key);
  plan.where[key] = v.loc();
  return static_cast<int>(v.as_int(1, max));
}

[[noreturn]] void fail_at(const Plan& p, const std::string& key, const std::string& problem) {
  auto it = p.where.find(key);
  throw ConfigError(it != p.where.end() ? it->second : SourceLoc{p.file, 0, 0}, key, problem);
}

std::string divisors(int n) {
  std::string out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}
// data_parallel: the sync topology, compression, buckets and delay (after zero: the
// rules below read it).
void load_data_parallel(const ConfigNode& dp, Plan& p) {
  dp.expect_map({"sync", "servers", "peers", "step", "seed", "compression", "density", "rank", "bucket", "delay"});
  auto& c = p.data_parallel;
  if (dp.has("sync")) {
    const ConfigNode s = dp.child("sync");
    p.where["data_parallel.sync"] = s.loc();
    if (!sync_topologies().has(s.as_string()))
      s.fail("unknown sync topology \"" + s.as_string() + "\"; valid: " + sync_topologies().names_joined());
    c.sync = s.as_string();
  }
  c.servers = static_cast<int>(dp.get_int("servers", 1, 1, limits::kMaxDegree));
  c.peers = static_cast<int>(dp.get_int("peers", 1, 1, limits::kMaxDegree));
  c.step = static_cast<int>(dp.get_int("step", 0, 0, 1 << 30));
  c.seed = static_cast<unsigned long long>(dp.get_int("seed", 1, 0, limits::kMaxSeed));
  if (dp.has("compression")) c.compression = dp.child("compression").as_choice(compressors().names());
  c.density = dp.get_double("density", 0.01, 1e-9, 1);
  c.rank = static_cast<int>(dp.get_int("rank", 4, 1, limits::kMaxWidth));
  c.bucket_bytes = dp.get_quantity("bucket", units::Dimension::Bytes, 0, 1, limits::kMaxMemory);
  if (c.bucket_bytes > 0 && p.zero >= 3)
    dp.child("bucket").fail("zero: 3 reduce-scatters each layer's gradients as its backward ends; drop bucket");
  if (c.bucket_bytes > 0 && (c.sync != "all-reduce" || c.compression != "none"))
    dp.child("bucket").fail(
        "buckets overlap an uncompressed all-reduce with the backward; use sync: all-reduce, compression: none");
  if (p.zero > 0 && c.sync != "all-reduce")
    dp.child("sync").fail("ZeRO shards over an all-reduce group; use sync: all-reduce with zero > 0");
  c.delay = static_cast<int>(dp.get_int("delay", 0, 0, 1 << 16));  // 0: average every step
  if (dp.has("delay")) p.where["data_parallel.delay"] = dp.child("delay").loc();
}

bool flag(const ConfigNode& root, const char* key, Plan& p) {
  if (!root.has(key)) return false;
  p.where[key] = root.child(key).loc();
  return root.get_bool(key, false);
}

}  // namespace

const std::string& Plan::recompute_of_layer(int virtual_stage, int rank) const {
  static const std::string kNone = "none";
  return recompute_layers > 0 && rank >= recompute_layers ? kNone : recompute_of(virtual_stage);
}

SwitchBreak megatron_switch_break(const Plan& p) {
  if (p.overlap_grad_reduce && p.zero >= 3)
    return {"overlap_grad_reduce", "zero: 3 reduce-scatters each layer's gradients as its backward ends"};
  if (p.overlap_grad_reduce && (p.data_parallel.sync != "all-reduce" || p.data_parallel.compression != "none"))
    return {"overlap_grad_reduce",
            "buckets overlap an uncompressed all-reduce with the backward; use data_parallel sync: all-reduce, "
            "compression: none"};
  if (p.overlap_param_gather && (p.zero < 1 || p.zero > 2 || !p.overlap_grad_reduce))
    return {"overlap_param_gather",
            "gathers the distributed optimizer's weights under the next forward: needs distributed_optimizer: true "
            "(zero: 1 or 2) and overlap_grad_reduce: true"};
  if (p.tp_comm_overlap && !p.sequence_parallel)
    return {"tp_comm_overlap",
            "overlaps the all-gathers and reduce-scatters of sequence parallelism; needs sequence_parallel: true"};
  return {};
}

namespace {
// Megatron-Core's switches (plan.h), with the requirements its arguments.py asserts.
void load_megatron_switches(const ConfigNode& root, Plan& p) {
  if (root.has("distributed_optimizer")) {
    const bool on = flag(root, "distributed_optimizer", p);
    if (on && root.has("zero") && p.zero == 0)
      root.child("zero").fail("0 contradicts distributed_optimizer: true (it shards the optimizer: zero 1)");
    if (!on && p.zero > 0)
      root.child("distributed_optimizer").fail("false contradicts zero: " + std::to_string(p.zero));
    if (on && !root.has("zero")) p.zero = 1;
    if (on && p.data_parallel.sync != "all-reduce")
      root.child("distributed_optimizer").fail("shards over an all-reduce group; use data_parallel sync: all-reduce");
  }
  p.overlap_grad_reduce = flag(root, "overlap_grad_reduce", p);
  p.overlap_param_gather = flag(root, "overlap_param_gather", p);
  p.tp_comm_overlap = flag(root, "tp_comm_overlap", p);
  p.defer_embedding_wgrad_compute = flag(root, "defer_embedding_wgrad_compute", p);
  p.fp8_param_gather = flag(root, "fp8_param_gather", p);
  if (root.has("fp8_recipe")) {
    const ConfigNode r = root.child("fp8_recipe");
    p.where["fp8_recipe"] = r.loc();
    if (!sim::parse_fp8_recipe(r.as_string(), &p.fp8_recipe))
      r.fail("expected one of " + sim::fp8_recipe_names() + ", got \"" + r.as_string() + "\"");
  }
  if (root.has("wgrad_deferral_limit")) {
    p.where["wgrad_deferral_limit"] = root.child("wgrad_deferral_limit").loc();
    // without the switch it defers nothing, as Megatron-Core's ModelParallelConfig has it
    p.wgrad_deferral_limit = static_cast<int>(root.get_int("wgrad_deferral_limit", 0, 0, limits::kMaxMicrobatches));
  }
  if (const SwitchBreak b = megatron_switch_break(p); !b.key.empty()) root.child(b.key).fail(b.problem);
}
}  // namespace

double Plan::gradient_bucket_bytes(double element_bytes) const {
  if (data_parallel.bucket_bytes > 0) return data_parallel.bucket_bytes;
  if (!overlap_grad_reduce) return 0;
  return std::max(40e6, 1e6 * dp) * element_bytes;
}

Plan Plan::at_stage(int stage) const {
  Plan out = *this;
  out.tp = tp_of(stage);
  out.stage_tp.clear();
  return out;
}

double Plan::comm_share(const platforms::GpuSpec& gpu) const {
  if (gpu.sms <= 0) return 0;
  const int sms = comm_sms != kAutoCommSms ? comm_sms : gpu.gpu_link_bandwidth_Bps > 0 ? 16 : 2;
  return static_cast<double>(sms) / gpu.sms;
}

sim::DType Plan::gradient_dtype(sim::DType model_dtype) const {
  sim::DType d = sim::storage_of(model_dtype);
  if (!grad_dtype.empty() && !sim::parse_dtype(grad_dtype, &d))
    throw ModelError("grad_dtype " + grad_dtype + " is not a dtype; valid: fp32, bf16, fp16");
  return d;
}

double Plan::gradient_element_bytes(sim::DType model_dtype) const {
  return sim::dtype_bytes(gradient_dtype(model_dtype));
}

double Plan::weight_element_bytes(sim::DType model_dtype) const {
  return sim::dtype_bytes(fp8_param_gather ? sim::DType::FP8 : sim::storage_of(model_dtype));
}

std::vector<int> Plan::layers_per_stage(int layers) const {
  if (!stages.empty()) return stages;
  const int S = total_stages();
  std::vector<int> out(S);
  if (account_for_embedding || account_for_loss) {  // validate() checks the units divide evenly
    const int per = (layers + account_for_embedding + account_for_loss) / S;
    std::fill(out.begin(), out.end(), per);
    out.front() -= account_for_embedding;
    out.back() -= account_for_loss;
    return out;
  }
  for (int s = 0; s < S; ++s) out[s] = layers / S + (s < layers % S ? 1 : 0);
  return out;
}

namespace {
// token_slices: auto | a count | [lengths]; only for a schedule that slices tokens.
void load_token_slices(const ConfigNode& root, Plan& p) {
  if (!root.has("token_slices")) return;
  const ConfigNode n = root.child("token_slices");
  p.where["token_slices"] = n.loc();
  if (!schedules().make(p.schedule)->slices_tokens())
    n.fail("token slices are pipelined by schedule: terapipe (not " + p.schedule + "); valid: drop token_slices");
  if (n.is_sequence()) {
    for (const ConfigNode& l : n.items()) p.token_slices.push_back(static_cast<int>(l.as_int(1, limits::kMaxSequence)));
    if (p.token_slices.empty()) n.fail("an empty list; valid: auto, a count, or lengths adding up to the sequence");
  } else if (!n.is_scalar() || n.as_string() != "auto") {
    const std::string v = n.is_scalar() ? n.as_string() : "";
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      n.fail("expected auto, a count of equal slices, or a list of lengths adding up to the sequence");
    p.token_slice_count = static_cast<int>(n.as_int(1, limits::kMaxMicrobatches));
  }
}

// grad_dtype (gradients) and optimizer_dtype (Adam's state).
void load_dtypes(const ConfigNode& root, Plan& p) {
  if (root.has("grad_dtype")) {
    p.where["grad_dtype"] = root.child("grad_dtype").loc();
    p.grad_dtype = root.child("grad_dtype").as_choice({"fp32", "bf16", "fp16"});
  }
  if (root.has("optimizer_dtype")) {
    p.where["optimizer_dtype"] = root.child("optimizer_dtype").loc();
    p.optimizer_dtype = root.child("optimizer_dtype").as_choice({"fp32", "bf16"});
  }
}

void load_offload(const ConfigNode& root, Plan& p) {
  if (!root.has("offload")) return;
  const ConfigNode o = root.child("offload");
  o.expect_map({"optimizer", "parameters", "activations", "layers"});
  p.where["offload"] = o.loc();
  if (!o.has("optimizer") && !o.has("parameters") && !o.has("activations"))
    o.fail(
        "expected optimizer (cpu or nvme), parameters (cpu or nvme), activations (cpu; with layers: N, the first N "
        "layers'), or several");
  if (o.has("optimizer")) p.offload_optimizer = o.child("optimizer").as_choice({"cpu", "nvme"});
  if (o.has("optimizer") && p.optimizer_dtype == "bf16")
    o.child("optimizer")
        .fail(
            "an offloaded optimizer runs DeepSpeed's CPU Adam on fp32 states; valid: "
            "optimizer_dtype fp32 (or no offload)");
  if (o.has("activations")) p.offload_activations = o.child("activations").as_choice({"cpu"});
  if (o.has("layers")) {
    const ConfigNode n = o.child("layers");
    p.where["offload.layers"] = n.loc();  // beside activations: cpu (check_layer_offload)
    p.offload_activation_layers = static_cast<int>(n.as_int(1, limits::kMaxLayers));
  }
  if (!o.has("parameters")) return;
  const ConfigNode params = o.child("parameters");
  p.offload_parameters = params.as_choice({"cpu", "nvme"});
  if (p.zero < 3)
    params.fail("the weights leave the GPU only where ZeRO-3 gathers them block by block; valid: zero: 3");
}
}  // namespace

namespace {
// gpu_order: GPU types of the catalog, each once; gpus: how many of the platform's.
void load_gpu_placement(const ConfigNode& root, Plan& p) {
  if (root.has("gpus")) p.use_gpus = positive(root, "gpus", 1, p, limits::kMaxGpus);
  if (!root.has("gpu_order")) return;
  const ConfigNode n = root.child("gpu_order");
  p.where["gpu_order"] = n.loc();
  for (const ConfigNode& t : n.items()) {
    const std::string type = t.as_string();
    if (!platforms::has_gpu(type)) t.fail("unknown GPU \"" + type + "\"; valid: " + platforms::gpu_names());
    if (std::find(p.gpu_order.begin(), p.gpu_order.end(), type) != p.gpu_order.end())
      t.fail(type + " is listed twice; valid: each GPU type once");
    p.gpu_order.push_back(type);
  }
  if (p.gpu_order.empty()) n.fail("an empty list; valid: the cluster's GPU types in the order ranks take them");
}

// What is wrong with a plan's batch when its replicas take equal shares ("" when nothing).
std::string even_batch_break(const Plan& p) {
  const long long per_step = static_cast<long long>(p.micro_batch_size) * p.dp;  // no int overflow
  if (p.global_batch_size % per_step == 0) return "";
  return std::to_string(p.global_batch_size) +
         " is not a multiple of micro_batch_size x dp = " + std::to_string(per_step) + "; valid: any multiple of it";
}

// replica_microbatches: one count per data-parallel replica, adding up to the global batch.
void load_replica_microbatches(const ConfigNode& root, Plan& p) {
  if (!root.has("replica_microbatches")) {
    if (const std::string wrong = even_batch_break(p); !wrong.empty()) root.child("global_batch_size").fail(wrong);
    return;
  }
  const ConfigNode n = root.child("replica_microbatches");
  p.where["replica_microbatches"] = n.loc();
  long long sum = 0;
  for (const ConfigNode& x : n.items()) {
    p.replica_microbatches.push_back(static_cast<int>(x.as_int(1, limits::kMaxMicrobatches)));
    sum += p.replica_microbatches.back();
  }
  if (static_cast<long long>(p.replica_microbatches.size()) != p.dp)
    n.fail(std::to_string(p.replica_microbatches.size()) + " counts for dp = " + std::to_string(p.dp) +
           " replicas; valid: one count per data-parallel replica");
  if (sum * p.micro_batch_size != p.global_batch_size)
    n.fail(std::to_string(sum) + " microbatches of " + std::to_string(p.micro_batch_size) + " samples make " +
           std::to_string(sum * p.micro_batch_size) + ", not the global_batch_size " +
           std::to_string(p.global_batch_size) + "; valid: counts adding up to global_batch_size / micro_batch_size");
}
}  // namespace

namespace {
// embedding_sharding: a mode for every table group, or one per group.
void load_embedding_sharding(const ConfigNode& n, Plan& p) {
  p.where["embedding_sharding"] = n.loc();
  if (!n.is_sequence()) {
    p.embedding_sharding = {n.as_choice(workloads::embedding_shardings())};
    return;
  }
  for (const ConfigNode& m : n.items()) p.embedding_sharding.push_back(m.as_choice(workloads::embedding_shardings()));
  if (p.embedding_sharding.empty()) n.fail("an empty list; valid: a sharding, or one per table group");
}

// recompute: a mode, or one per pipeline stage.
void load_recompute(const ConfigNode& n, Plan& p) {
  p.where["recompute"] = n.loc();
  if (!n.is_sequence()) {
    p.recompute = n.as_choice(recompute_mode_names());
    return;
  }
  for (const ConfigNode& m : n.items()) p.stage_recompute.push_back(m.as_choice(recompute_mode_names()));
  if (static_cast<long long>(p.stage_recompute.size()) != p.pp)
    n.fail(std::to_string(p.stage_recompute.size()) + " modes for pp = " + std::to_string(p.pp) +
           " stages; valid: one mode (" + recompute_mode_list() + ") for every stage, or one for all");
  p.recompute = p.stage_recompute.front();
  if (std::all_of(p.stage_recompute.begin(), p.stage_recompute.end(),
                  [&](const std::string& m) { return m == p.recompute; }))
    p.stage_recompute.clear();  // the same everywhere: the plain key
}

// zero: 0..3, and zero_prefetch, zero_backward_prefetch and zero_reshard_after_forward (ZeRO-3 only).
void load_zero(const ConfigNode& root, Plan& p) {
  if (root.has("zero")) {
    const ConfigNode z = root.child("zero");
    p.where["zero"] = z.loc();
    p.zero = static_cast<int>(z.as_int(0, 3));
  }
  if (root.has("zero_prefetch")) {
    const ConfigNode z = root.child("zero_prefetch");
    p.where["zero_prefetch"] = z.loc();
    const long long depth = z.as_int(0, 64);  // blocks gathered ahead
    if (p.zero < 3) z.fail("prefetching gathers weights that only zero: 3 shards; use zero: 3 or drop zero_prefetch");
    p.zero_prefetch = static_cast<int>(depth);
  }
  if (root.has("zero_backward_prefetch")) {
    const ConfigNode z = root.child("zero_backward_prefetch");
    p.where["zero_backward_prefetch"] = z.loc();
    p.zero_backward_prefetch = z.as_choice({"pre", "post", "none"});
    if (p.zero < 3)
      z.fail("only zero: 3 gathers weights in the backward pass; use zero: 3 or drop zero_backward_prefetch");
  }
  if (root.has("dp_shard")) {
    const ConfigNode n = root.child("dp_shard");
    p.where["dp_shard"] = n.loc();
    p.dp_shard = static_cast<int>(n.as_int(1, limits::kMaxDegree));
  }
  if (root.has("zero_reshard_after_forward")) {
    p.zero_reshard_after_forward = flag(root, "zero_reshard_after_forward", p);
    if (p.zero < 3)
      root.child("zero_reshard_after_forward")
          .fail("only zero: 3 reshards gathered weights; use zero: 3 or drop zero_reshard_after_forward");
  }
}

// stage_tp: one tensor-parallel degree per pipeline stage; tp, if given too, the largest.
void load_stage_tp(const ConfigNode& root, Plan& p) {
  if (!root.has("stage_tp")) return;
  const ConfigNode n = root.child("stage_tp");
  p.where["stage_tp"] = n.loc();
  for (const ConfigNode& m : n.items()) p.stage_tp.push_back(static_cast<int>(m.as_int(1, limits::kMaxDegree)));
  if (static_cast<long long>(p.stage_tp.size()) != p.pp)
    n.fail(std::to_string(p.stage_tp.size()) + " degrees for pp = " + std::to_string(p.pp) +
           " stages; valid: one tensor-parallel degree for every stage");
  const int most = *std::max_element(p.stage_tp.begin(), p.stage_tp.end());
  if (root.has("tp") && p.tp != most)
    root.child("tp").fail(std::to_string(p.tp) + " with stage_tp, whose largest degree is " + std::to_string(most) +
                          "; valid: " + std::to_string(most) + ", or drop tp");
  p.tp = most;
  if (std::all_of(p.stage_tp.begin(), p.stage_tp.end(), [&](int t) { return t == most; }))
    p.stage_tp.clear();  // the same everywhere: the plain key
}

// `stages: [...]`, Megatron-Core's pipeline_model_parallel_layout (`pipeline_layout`, the
// same counts in its notation), or its split accounting for the embedding and the loss: one
// way to say a split. A first (last) stage of 0 layers holds only the embedding (the loss).
void load_stages(const ConfigNode& root, Plan& p) {
  if (root.has("stages")) {
    const ConfigNode st = root.child("stages");
    p.where["stages"] = st.loc();
    for (const ConfigNode& n : st.items()) p.stages.push_back(static_cast<int>(n.as_int(0, limits::kMaxLayers)));
  }
  if (root.has("pipeline_layout")) {
    const ConfigNode n = root.child("pipeline_layout");
    if (root.has("stages")) n.fail("and stages both say how layers split; valid: one of them");
    PipelineLayout layout = parse_pipeline_layout(n.as_string());
    if (!layout.error.empty()) n.fail(layout.error);
    p.stages = std::move(layout.layers);
    p.where["pipeline_layout"] = n.loc();
  }
  p.account_for_embedding = flag(root, "account_for_embedding_in_pipeline_split", p);
  p.account_for_loss = flag(root, "account_for_loss_in_pipeline_split", p);
  for (const char* key : {"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"})
    for (const char* other : {"stages", "pipeline_layout"})
      if (root.has(key) && root.child(key).as_bool() && root.has(other))
        root.child(key).fail(std::string("and ") + other + " both say how layers split; valid: one of them");
}

// comm_sms: auto | a count of SMs (checked against the GPUs' own by cluster_for_plan).
void load_comm_sms(const ConfigNode& root, Plan& p) {
  if (!root.has("comm_sms")) return;
  const ConfigNode n = root.child("comm_sms");
  p.where["comm_sms"] = n.loc();
  if (n.is_scalar() && n.as_string() == "auto") return;
  const std::string v = n.is_scalar() ? n.as_string() : "";
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
    n.fail("expected auto or a count of SMs (0 leaves every SM to compute)");
  p.comm_sms = static_cast<int>(n.as_int(0, limits::kMaxCommSms));
}

// recompute_layers: a block of fully recomputed layers (only under full recomputation: validate).
void load_recompute_layers(const ConfigNode& root, Plan& p) {
  if (!root.has("recompute_layers")) return;
  const ConfigNode n = root.child("recompute_layers");
  p.where["recompute_layers"] = n.loc();
  p.recompute_layers = static_cast<int>(n.as_int(1, limits::kMaxLayers));
}

// recompute_early_stop: only where some stage recomputes fully.
void load_early_stop(const ConfigNode& root, Plan& p) {
  p.recompute_early_stop = flag(root, "recompute_early_stop", p);
  if (p.recompute_early_stop && p.recompute != "full" &&
      std::none_of(p.stage_recompute.begin(), p.stage_recompute.end(),
                   [](const std::string& m) { return m == "full"; }))
    root.child("recompute_early_stop")
        .fail("stops a full recomputation early, and no stage recomputes fully; valid: recompute: full, or drop it");
}

// The keys a plan file may hold.
const std::vector<std::string>& plan_keys() {
  static const std::vector<std::string> keys = {"name",
                                                "tp",
                                                "pp",
                                                "dp",
                                                "micro_batch_size",
                                                "global_batch_size",
                                                "schedule",
                                                "virtual_stages",
                                                "stages",
                                                "account_for_embedding_in_pipeline_split",
                                                "account_for_loss_in_pipeline_split",
                                                "pipeline_layout",
                                                "stage_tp",
                                                "recompute",
                                                "recompute_early_stop",
                                                "recompute_layers",
                                                "sequence_parallel",
                                                "zero",
                                                "zero_prefetch",
                                                "zero_backward_prefetch",
                                                "zero_reshard_after_forward",
                                                "dp_shard",
                                                "data_parallel",
                                                "grad_dtype",
                                                "optimizer_dtype",
                                                "ep",
                                                "cp",
                                                "cp_comm",
                                                "distributed_optimizer",
                                                "overlap_grad_reduce",
                                                "overlap_param_gather",
                                                "tp_comm_overlap",
                                                "defer_embedding_wgrad_compute",
                                                "wgrad_deferral_limit",
                                                "fp8_param_gather",
                                                "fp8_recipe",
                                                "offload",
                                                "token_slices",
                                                "gpu_order",
                                                "gpus",
                                                "embedding_sharding",
                                                "replica_microbatches",
                                                "comm_sms"};
  return keys;
}
}  // namespace

Plan load_plan(const ConfigNode& root) {
  root.expect_map(plan_keys());
  Plan p;
  p.file = root.file();
  p.where[""] = root.loc();
  p.name = root.get_string("name", root.file_stem());
  p.tp = positive(root, "tp", 1, p);
  p.pp = positive(root, "pp", 1, p);
  p.dp = positive(root, "dp", 1, p);
  p.ep = positive(root, "ep", 1, p);
  p.cp = positive(root, "cp", 1, p);
  load_stage_tp(root, p);
  if (root.has("cp_comm")) p.cp_comm = root.child("cp_comm").as_choice({"all-gather", "ring"});
  p.micro_batch_size = positive(root, "micro_batch_size", 1, p, limits::kMaxBatch);
  p.global_batch_size = positive(root, "global_batch_size", 1, p, limits::kMaxBatch);
  if (root.has("schedule")) {
    const ConfigNode s = root.child("schedule");
    if (!schedules().has(s.as_string()))
      s.fail("unknown schedule \"" + s.as_string() + "\"; valid: " + schedules().names_joined());
    p.schedule = s.as_string();
    p.where["schedule"] = s.loc();
  }
  if (root.has("recompute")) load_recompute(root.child("recompute"), p);
  load_early_stop(root, p);
  load_recompute_layers(root, p);
  p.virtual_stages = positive(root, "virtual_stages", 1, p, limits::kMaxLayers);
  if (p.virtual_stages > 1 && p.schedule != "interleaved-1f1b")
    root.child("virtual_stages").fail("more than one model chunk per GPU needs schedule: interleaved-1f1b");
  load_stages(root, p);
  p.sequence_parallel = root.get_bool("sequence_parallel", false);
  load_zero(root, p);
  if (root.has("data_parallel")) load_data_parallel(root.child("data_parallel"), p);
  load_dtypes(root, p);
  load_megatron_switches(root, p);
  load_offload(root, p);
  load_token_slices(root, p);
  load_comm_sms(root, p);
  load_gpu_placement(root, p);
  if (root.has("embedding_sharding")) load_embedding_sharding(root.child("embedding_sharding"), p);
  load_replica_microbatches(root, p);
  return p;
}

Plan load_plan_file(const std::string& path) { return load_plan(ConfigNode::load_file(path)); }

namespace {
void check_gpu_order(const Plan& p, const platforms::Cluster& cluster) {
  const std::vector<std::string> types = platforms::gpu_types(cluster);
  std::string valid;
  for (const std::string& t : types) valid += (valid.empty() ? "" : ", ") + t;
  for (const std::string& t : p.gpu_order)
    if (std::find(types.begin(), types.end(), t) == types.end())
      fail_at(p, "gpu_order", "platform " + cluster.name + " has no " + t + "; valid: its GPU types, " + valid);
}

// Every GPU type of the cluster runs the model's GEMMs and keeps its tensors in its dtype.
void check_dtype(const workloads::ModelGraph& model, const platforms::Cluster& cluster) {
  std::set<std::string> seen;
  for (const auto& slot : cluster.gpus) {
    const platforms::GpuSpec& g = *slot.spec;
    if (!seen.insert(g.name).second) continue;
    if (g.peak_flops(model.dtype) > 0 && g.peak_flops(sim::storage_of(model.dtype)) > 0) continue;
    std::string valid;
    for (sim::DType d : sim::all_dtypes())
      if (g.peak_flops(d) > 0 && g.peak_flops(sim::storage_of(d)) > 0)
        valid += (valid.empty() ? "" : ", ") + std::string(sim::to_string(d));
    throw ConfigError(model.dtype_where, "dtype",
                      std::string(sim::to_string(model.dtype)) + " is not supported by GPU " + g.name +
                          " of platform " + cluster.name + "; valid on it: " + valid);
  }
}

// Offloading needs each server's host side in the platform.
void check_offload(const Plan& p, const platforms::Cluster& cluster) {
  if (p.offload_optimizer.empty() && p.offload_parameters.empty() && p.offload_activations.empty()) return;
  if (!p.offload_parameters.empty() && static_cast<long long>(p.dp) * p.cp < 2)
    fail_at(p, "offload",
            "parameters: " + p.offload_parameters +
                " leaves shards that ZeRO-3 gathers from the other replicas; with dp x cp = 1 there are none; "
                "valid: dp x cp of 2 or more");
  const bool nvme = p.offload_optimizer == "nvme" || p.offload_parameters == "nvme";
  const std::string what =
      !p.offload_optimizer.empty() ? "optimizer: " + p.offload_optimizer : "parameters: " + p.offload_parameters;
  for (const platforms::ServerGroup& g : cluster.groups) {
    const platforms::HostSpec& h = g.host;
    if (h.memory_bytes > 0 && h.memory_Bps > 0 && h.pcie_Bps > 0 && (!nvme || (h.nvme_bytes > 0 && h.nvme_Bps > 0)))
      continue;
    fail_at(p, "offload",
            what + " needs each server's host: {memory, memory_bandwidth, pcie" +
                (nvme ? ", nvme, nvme_bandwidth" : "") + "} in platform " + cluster.name +
                "; valid: give them there, or drop offload");
  }
}

// TeraPipe slices the sequence of a causal model, whole tokens adding up to it.
void check_token_slices(const Plan& p, const workloads::ModelGraph& model) {
  if (!schedules().make(p.schedule)->slices_tokens()) return;
  if (!workloads::sliceable_by_tokens(model))
    fail_at(p, "schedule",
            "terapipe pipelines token slices of causal (decoder) attention; model " + model.name +
                " has none; valid: another schedule");
  if (p.cp > 1) fail_at(p, "cp", "terapipe slices the whole sequence on each GPU; valid: cp: 1");
  const long long s = static_cast<long long>(model.tokens_per_sample);
  long long sum = 0;
  for (int l : p.token_slices) sum += l;
  if (!p.token_slices.empty() && sum != s)
    fail_at(p, "token_slices",
            std::to_string(p.token_slices.size()) + " slices adding up to " + std::to_string(sum) +
                " tokens; valid: lengths adding up to the " + std::to_string(s) + " tokens of a " + model.name +
                " sequence");
  const long long k = p.token_slices.empty() ? p.token_slice_count : static_cast<long long>(p.token_slices.size());
  if (k > s)
    fail_at(
        p, "token_slices",
        std::to_string(k) + " slices of a " + std::to_string(s) + "-token sequence; valid: 1 to " + std::to_string(s));
  if (k * p.microbatches() > limits::kMaxMicrobatches)
    fail_at(p, "token_slices",
            std::to_string(k) + " slices x " + std::to_string(p.microbatches()) +
                " microbatches = " + std::to_string(k * p.microbatches()) + " work items per stage; at most " +
                std::to_string(limits::kMaxMicrobatches));
}

// Every virtual stage gets its layers: as many stages as layers at most (counting the
// embedding and the loss when the split accounts for them, evenly then, as Megatron-Core
// asserts), or `stages` naming each one's.
void check_layer_split(const Plan& p, const workloads::ModelGraph& model) {
  const long long stages = static_cast<long long>(p.pp) * p.virtual_stages;
  const int extra = p.account_for_embedding + p.account_for_loss;
  if (stages > model.layers + extra)
    fail_at(p, p.virtual_stages > 1 ? "virtual_stages" : "pp",
            std::to_string(stages) + " stages for " + std::to_string(model.layers) + " layers of model " + model.name +
                "; valid: pp x virtual_stages from 1 to " + std::to_string(model.layers + extra) +
                (extra ? "" : " (or up to 2 more, accounting for the embedding and loss in the split)"));
  if (extra > 0 && (model.layers + extra) % stages != 0)
    fail_at(p,
            p.account_for_embedding ? "account_for_embedding_in_pipeline_split" : "account_for_loss_in_pipeline_split",
            std::to_string(model.layers) + " layers + " + std::to_string(extra) + " do not split evenly over pp x " +
                "virtual_stages = " + std::to_string(stages) + " stages; valid: stages dividing " +
                std::to_string(model.layers + extra) + " (" + divisors(model.layers + extra) + ")");
  if (p.stages.empty()) return;
  const bool layout = p.where.count("pipeline_layout") > 0;
  const std::string key = layout ? "pipeline_layout" : "stages";
  long long sum = 0;
  for (int l : p.stages) sum += l;
  if (static_cast<int>(p.stages.size()) != p.total_stages() || sum != model.layers)
    fail_at(p, key,
            std::to_string(p.stages.size()) + (layout ? " stages holding " : " entries adding up to ") +
                std::to_string(sum) + " layers; valid: pp x virtual_stages = " + std::to_string(p.total_stages()) +
                (layout ? " stages holding " : " entries adding up to ") + "the model's " +
                std::to_string(model.layers) + " layers");
  for (size_t s = 1; s + 1 < p.stages.size(); ++s)
    if (p.stages[s] == 0)
      fail_at(p, key,
              "stage " + std::to_string(s) +
                  " of 0 layers; valid: at least 1 in every stage but the first and last "
                  "(which may hold only the embedding or the loss)");
  if (p.stages.size() == 1 && p.stages[0] == 0)
    fail_at(p, key, "no layer in the only stage; valid: the model's layers");
}

// Chimera's two pipelines run here with plain all-reduce data parallelism.
// dp_shard: ZeRO's shard groups (HSDP), whole groups of the replicas.
void check_dp_shard(const Plan& p) {
  if (p.dp_shard == 0) return;
  if (p.zero < 1)
    fail_at(p, "dp_shard", "shard groups split ZeRO's states, and zero is 0; valid: zero: 1, 2 or 3, or drop dp_shard");
  if (p.dp % p.dp_shard != 0)
    fail_at(
        p, "dp_shard",
        std::to_string(p.dp_shard) + " does not divide dp (" + std::to_string(p.dp) + "); valid: " + divisors(p.dp));
  if (p.ep > 1)
    fail_at(p, "dp_shard", "shard groups beside expert parallelism are not modelled; valid: ep: 1, or drop dp_shard");
}

void check_chimera(const Plan& p) {
  if (p.schedule != "chimera") return;
  if (p.pp < 2 || p.pp % 2 != 0)
    fail_at(p, "pp",
            std::to_string(p.pp) + " stages; chimera pairs stage k with stage p-1-k: valid: an even pp of 2 or more");
  if (p.microbatches() % 2 != 0)
    fail_at(p, "global_batch_size",
            std::to_string(p.microbatches()) +
                " microbatches per replica; chimera splits them over two pipelines: valid: an even number");
  if (p.zero > 0 || p.data_parallel.sync != "all-reduce" || p.gradient_bucket_bytes(1) > 0 ||
      p.data_parallel.compression != "none" || p.ep > 1 || p.cp > 1)
    fail_at(p, "schedule",
            "chimera runs here with plain all-reduce data parallelism (zero: 0, no buckets, no "
            "compression, ep: 1, cp: 1)");
}

// Layer-wise activation offload as Megatron-Core allows it (TransformerConfig: cpu_offloading
// with pipeline_model_parallel_size 1, no recompute_granularity, cpu_offloading_num_layers below
// num_layers; Transformer Engine's get_cpu_offload_context refuses more than num_layers - 1).
void check_layer_offload(const Plan& p, const workloads::ModelGraph& model) {
  const int n = p.offload_activation_layers;
  if (n == 0) return;
  if (p.offload_activations.empty())
    fail_at(p, "offload.layers",
            "counts the layers whose activations go to CPU memory; valid: beside activations: cpu");
  if (p.pp > 1 || p.virtual_stages > 1)
    fail_at(p, "offload.layers",
            "Megatron-Core offloads layer activations without pipeline parallelism only; valid: pp: 1 "
            "(or offload: {activations: cpu} without layers, whole work items)");
  if (p.recompute != "none")
    fail_at(p, "offload.layers",
            "Megatron-Core offloads layer activations only without recomputation; valid: recompute: none");
  if (n > model.layers - 1)
    fail_at(p, "offload.layers",
            std::to_string(n) + " of model " + model.name + "'s " + std::to_string(model.layers) +
                " layers; valid: 1 to " + std::to_string(model.layers - 1) + " (one layer stays on the GPU)");
}

// Megatron-Core defers the output layer's weight gradients into the flush of a pipeline
// (pp > 1, its 1F1B schedules): not one that splits every backward already, runs two
// pipelines or never flushes, nor with ZeRO-3's per-layer reduction or offloaded activations.
void check_wgrad_deferral(const Plan& p) {
  if (!p.defer_embedding_wgrad_compute) return;
  const auto schedule = schedules().make(p.schedule);
  if (p.pp < 2 || schedule->splits_backward() || schedule->pipelines() > 1 || !schedule->flushes() ||
      schedule->slices_tokens())
    fail_at(p, "defer_embedding_wgrad_compute",
            "defers into the flush of a pipeline; needs pp > 1 and a schedule that flushes one pipeline of whole "
            "backwards (gpipe, 1f1b, interleaved-1f1b), not pp " +
                std::to_string(p.pp) + " with " + p.schedule);
  if (p.zero >= 3)
    fail_at(p, "defer_embedding_wgrad_compute", "zero: 3 reduces each layer's gradients as its backward ends");
  if (!p.offload_activations.empty())
    fail_at(p, "defer_embedding_wgrad_compute",
            "holds the output layer's inputs past their backward, which offload: {activations} brings back for it; "
            "use one or the other");
}

// fp8 primary weights are Transformer Engine's fp8 GEMMs' (Megatron-Core asserts --fp8-param-gather
// under --fp8 only): a model whose GEMMs run in fp8.
void check_fp8_param_gather(const Plan& p, const workloads::ModelGraph& model) {
  if (p.fp8_param_gather && model.dtype != sim::DType::FP8)
    fail_at(p, "fp8_param_gather",
            "keeps the weights of fp8 GEMMs in fp8; model " + model.name + " is " + sim::to_string(model.dtype) +
                "; valid: a model of dtype fp8, or fp8_param_gather: false");
}

// A scaling recipe is the fp8 casts' (Megatron-Core's --fp8-recipe goes with --fp8); MXFP8 needs
// the block-scaled MX formats of Blackwell's tensor cores on every GPU type the plan runs on.
void check_fp8_recipe(const Plan& p, const workloads::ModelGraph& model, const platforms::Cluster& cluster) {
  if (p.fp8_recipe == sim::Fp8Recipe::Default) return;
  if (model.dtype != sim::DType::FP8)
    fail_at(p, "fp8_recipe",
            "scales the casts of fp8 GEMMs; model " + model.name + " is " + sim::to_string(model.dtype) +
                "; valid: a model of dtype fp8, or no fp8_recipe");
  for (const auto& slot : cluster.gpus)
    if (!sim::runs_on(p.fp8_recipe, slot.spec->mx_formats))
      fail_at(p, "fp8_recipe",
              std::string(sim::to_string(p.fp8_recipe)) + " needs MX formats in the tensor cores (Blackwell's); GPU " +
                  slot.spec->name + " of platform " + cluster.name +
                  " has none; valid on it: " + sim::fp8_recipe_names_on(false));
}

// Uneven replicas run the synchronous schedules that flush once an iteration, each on its
// own count (interleaving needs a multiple of pp on every replica).
void check_replica_microbatches(const Plan& p) {
  if (p.replica_microbatches.empty()) {  // equal shares (a file's the loader checked; this, a plan built in code)
    if (const std::string wrong = even_batch_break(p); !wrong.empty()) fail_at(p, "global_batch_size", wrong);
    return;
  }
  const auto schedule = schedules().make(p.schedule);
  if (!schedule->flushes() || schedule->steps_every_microbatch() || schedule->pipelines() > 1)
    fail_at(p, "replica_microbatches",
            "uneven replicas run a schedule that flushes once per iteration with one pipeline (gpipe, 1f1b, "
            "interleaved-1f1b, zb-h1, terapipe); " +
                p.schedule + " does not");
  for (size_t r = 0; r < p.replica_microbatches.size(); ++r)
    if (p.schedule == "interleaved-1f1b" && p.replica_microbatches[r] % p.pp != 0)
      fail_at(p, "replica_microbatches",
              "replica " + std::to_string(r) + " runs " + std::to_string(p.replica_microbatches[r]) +
                  " microbatches; interleaved-1f1b needs a multiple of pp (" + std::to_string(p.pp) + ") on each");
  if (p.data_parallel.sync != "all-reduce")
    fail_at(p, "replica_microbatches",
            "uneven replicas weight their gradients in an all-reduce; data_parallel.sync " + p.data_parallel.sync +
                " averages them evenly: valid: sync: all-reduce");
}

// The plan's GPUs (Plan::gpus) are the cluster's (or its `gpus` key's).
void check_gpu_count(const Plan& p, const platforms::Cluster& cluster) {
  if (p.gpus() == cluster.gpu_count()) return;
  const bool staged = !p.stage_tp.empty();
  const std::string tensor = staged ? "(sum of stage_tp)" : "tp x pp",
                    ranks = staged ? std::to_string(p.tp_sum()) : std::to_string(p.tp) + " x " + std::to_string(p.pp);
  const std::string context = p.cp > 1 ? " x cp" : "", cp = p.cp > 1 ? " x " + std::to_string(p.cp) : "";
  fail_at(p, "dp",
          tensor + " x dp" + context + " = " + ranks + " x " + std::to_string(p.dp) + cp + " = " +
              std::to_string(p.gpus()) + " GPUs, but " +
              (p.use_gpus > 0 ? "the plan's gpus is " : "platform " + cluster.name + " has ") +
              std::to_string(cluster.gpu_count()) +
              "; valid: " + (staged ? "(sum of stage_tp) x dp x cp = " : "degrees whose product is ") +
              std::to_string(cluster.gpu_count()));
}

// Stages of their own tensor-parallel degrees run one pipeline of distinct GPUs: not a
// bidirectional schedule, whose GPUs hold two stages each.
void check_stage_tp(const Plan& p) {
  if (p.stage_tp.empty()) return;
  if (static_cast<long long>(p.stage_tp.size()) != p.pp)  // a plan built in code
    fail_at(p, "stage_tp",
            std::to_string(p.stage_tp.size()) + " degrees for pp = " + std::to_string(p.pp) +
                " stages; valid: one tensor-parallel degree for every stage");
  if (schedules().make(p.schedule)->pipelines() > 1)
    fail_at(p, "stage_tp",
            "stages of their own tensor-parallel degree; " + p.schedule +
                " puts two stages on every GPU, so they share one; valid: tp, or a one-way schedule");
}
}  // namespace

void validate(const Plan& p, const workloads::ModelGraph& model, const platforms::Cluster& cluster) {
  check_replica_microbatches(p);
  check_dtype(model, cluster);
  check_gpu_order(p, cluster);
  check_token_slices(p, model);
  check_offload(p, cluster);
  check_stage_tp(p);
  for (int s = 0; s < p.pp; ++s)
    if (model.heads > 0 && model.heads % p.tp_of(s) != 0)
      fail_at(p, p.stage_tp.empty() ? "tp" : "stage_tp",
              std::to_string(p.tp_of(s)) + " does not divide the " + std::to_string(model.heads) +
                  " attention heads of model " + model.name + "; valid: " + divisors(model.heads));
  if (p.microbatches() > limits::kMaxMicrobatches)
    fail_at(p, "global_batch_size",
            std::to_string(p.microbatches()) + " microbatches per replica; at most " +
                std::to_string(limits::kMaxMicrobatches) +
                " (a larger micro_batch_size or dp takes the batch in fewer)");
  check_gpu_count(p, cluster);
  check_layer_split(p, model);
  if (p.ep > 1) {
    if (model.experts == 0)
      fail_at(p, "ep", std::to_string(p.ep) + " for model " + model.name + ", which has no experts; valid: 1");
    if (p.dp % p.ep != 0 || model.experts % p.ep != 0)
      fail_at(p, "ep",
              std::to_string(p.ep) + " must divide dp (" + std::to_string(p.dp) + ") and the " +
                  std::to_string(model.experts) + " experts");
    if (p.data_parallel.sync != "all-reduce")
      fail_at(p, "ep",
              "expert parallelism shares the experts' gradients over all-reduce groups; valid: "
              "data_parallel.sync: all-reduce");
  }
  if (p.data_parallel.servers > p.dp)
    fail_at(p, "data_parallel.sync",
            std::to_string(p.data_parallel.servers) + " parameter servers for " + std::to_string(p.dp) +
                " replicas; valid: 1 to dp");
  if (p.data_parallel.sync == "gossip" && p.data_parallel.peers >= p.dp && p.dp > 1)
    fail_at(p, "data_parallel.sync",
            std::to_string(p.data_parallel.peers) + " gossip peers among " + std::to_string(p.dp) +
                " replicas; valid: 1 to dp-1");
  if (p.data_parallel.delay > 0 &&
      (p.zero > 0 || p.gradient_bucket_bytes(1) > 0 || !schedules().make(p.schedule)->flushes()))
    fail_at(p, "data_parallel.delay",
            "delayed averaging exchanges whole gradients after a flushed iteration's backward; use zero: 0, no bucket "
            "and a schedule that flushes (not " +
                p.schedule + ")");
  check_dp_shard(p);
  check_chimera(p);
  check_wgrad_deferral(p);
  check_layer_offload(p, model);
  if (p.recompute_layers > 0 &&
      (p.recompute != "full" || std::any_of(p.stage_recompute.begin(), p.stage_recompute.end(),
                                            [](const std::string& m) { return m != "full"; })))
    fail_at(p, "recompute_layers",
            "recomputes the first layers of each model chunk in full (Megatron-Core's block method); valid: "
            "recompute: full");
  check_fp8_param_gather(p, model);
  check_fp8_recipe(p, model, cluster);
  if (p.schedule == "interleaved-1f1b" && p.microbatches() % p.pp != 0)
    fail_at(p, "global_batch_size",
            std::to_string(p.microbatches()) + " microbatches per replica; interleaved-1f1b needs a multiple of pp (" +
                std::to_string(p.pp) + ")");
}

}  // namespace dejavu::strategies
