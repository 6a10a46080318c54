#include "tools/public_row.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "platforms/calibration.h"
#include "tools/platform_input.h"

namespace dejavu::tools::public_rows {

namespace {

int whole(const CsvRow& r, const std::string& column, int fallback = 0) {
  return r.has(column) ? static_cast<int>(r.as_int(column, 1, 1 << 30)) : fallback;
}

// A cell that must be one of `valid` ("" for empty), else the row is refused naming them.
const std::string& choice(const CsvRow& r, const std::string& column, const std::vector<std::string>& valid) {
  const std::string& v = r.text(column);
  if (std::find(valid.begin(), valid.end(), v) != valid.end()) return v;
  std::string names;
  for (const std::string& n : valid) names += (names.empty() ? "" : ", ") + (n.empty() ? "empty" : n);
  throw Error("row " + r.text("row_id") + ": " + column + ": \"" + v + "\"; valid: " + names);
}

// Frameworks that checkpoint with PyTorch's non-reentrant checkpoint (FSDP's checkpoint
// wrapper: llm-foundry's activation_checkpointing_reentrant: false, torchtitan), whose
// replay stops early (Plan::recompute_early_stop), and train without dropout (MPT's
// attn_pdrop, resid_pdrop and emb_pdrop are 0; Llama has none).
bool pytorch_checkpoint(const CsvRow& r) {
  const std::string& fw = r.text("framework");
  return fw == "Composer/llm-foundry" || fw == "torchtitan";
}

// Composer's FSDP issues a block's backward gather after the previous block's gradient
// computation (backward_prefetch BACKWARD_POST: composer/trainer/dist_strategy.py's default at
// 871b3093e, April 2023, and 282df413a, January 2024); llm-foundry's benchmark YAMLs and
// submit_benchmarks.py set none at the tables' commits (9fa3ceb9a, b2a43a147, 5e85bd62d).
std::string backward_prefetch_of(const CsvRow& r) {
  return r.text("framework") == "Composer/llm-foundry" ? "post" : strategies::Plan{}.zero_backward_prefetch;
}

// A hand-entered row turns off what its run did not do in an optional column of that name:
// sequence_parallel (NeMo's 2022 5B: public/nemo_megatron_launcher_a100_2207.csv) and
// tie_embeddings (Megatron-Core's H100 table, whose parameter counts say the head has its own
// weights: public/megatron_core_h100.csv).
bool turned_off(const CsvRow& r, const std::string& column) {
  return r.has(column) && choice(r, column, {"off"}) == "off";
}

// The row's model as a generator's config; its attention kernel and loss are the row's
// (tools/public_training.py says which each framework ran; no cross_entropy cell: unfused).
ModelConfig model_config_of(const CsvRow& r, sim::DType dtype) {
  const int heads = whole(r, "heads"), kv = whole(r, "kv_heads", heads);
  const auto attention = workloads::attention_of(r.as_choice("attention", workloads::attention_names()));
  const auto loss = r.has("cross_entropy")
                        ? workloads::cross_entropy_of(r.as_choice("cross_entropy", workloads::cross_entropy_names()))
                        : workloads::CrossEntropyKind::Unfused;
  std::string name = r.text("model");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto common = [&](auto& c) {  // the fields both generators' configs share
    c.name = r.text("model");
    c.layers = whole(r, "layers");
    c.hidden = whole(r, "hidden");
    c.heads = heads;
    c.ffn_hidden = whole(r, "ffn_hidden");
    c.seq_len = whole(r, "seq_len");
    c.vocab = whole(r, "vocab");
    c.dtype = dtype;
    c.attention = attention;
    c.cross_entropy = loss;
  };
  if (kv < heads || name.find("llama") != std::string::npos) {
    workloads::LlamaConfig c;
    common(c);
    c.kv_heads = kv;
    c.gated_mlp = name.find("nemotron") == std::string::npos;  // Nemotron-4: squared ReLU
    return c;
  }
  workloads::TransformerConfig c;
  common(c);
  c.dropout = !pytorch_checkpoint(r);
  c.tie_embeddings = !turned_off(r, "tie_embeddings");
  return c;
}

workloads::ModelGraph model_of(const ModelConfig& config) {
  if (const auto* llama = std::get_if<workloads::LlamaConfig>(&config)) return workloads::make_llama(*llama);
  return workloads::make_transformer(std::get<workloads::TransformerConfig>(config));
}

// "wgrad<limit>": Megatron-Core's defer_embedding_wgrad_compute with that wgrad_deferral_limit
// (0: every microbatch); false when `s` is not that.
bool set_wgrad_deferral(const std::string& s, strategies::Plan& p) {
  const std::string digits = s.substr(std::min<size_t>(s.size(), 5));
  if (s.rfind("wgrad", 0) != 0 || digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  p.defer_embedding_wgrad_compute = true;
  p.wgrad_deferral_limit = std::stoi(digits);
  return true;
}

// The overlap switches the run's configuration turns on (tools/public_training.py cites
// them): grad, param, tp and wgrad<limit> joined by +. Tensor-parallel overlap pipelines
// sequence parallelism's collectives, so a run without them (tp 1) has none to overlap.
void set_overlaps(const CsvRow& r, strategies::Plan& p) {
  std::stringstream in(r.text("overlaps"));
  for (std::string s; std::getline(in, s, '+');) {
    if (s == "grad")
      p.overlap_grad_reduce = p.zero < 3;  // ZeRO-3 / FSDP overlaps by its own prefetch
    else if (s == "param")
      p.overlap_param_gather = p.zero == 1 || p.zero == 2;
    else if (s == "tp")
      p.tp_comm_overlap = p.sequence_parallel;
    else if (!set_wgrad_deferral(s, p))
      throw Error("row " + r.text("row_id") + ": overlaps: unknown switch \"" + s +
                  "\"; valid: grad, param, tp, wgrad<limit>");
  }
}

// The plan's ZeRO stage from a row's sharding (offload rows are skipped before a plan is made).
// NeMo's recipes run the distributed optimizer (distributed_fused_adam), and so do
// Megatron-Bridge's where its table leaves the sharding unstated (every Llama recipe sets
// ddp.use_distributed_optimizer = True: src/megatron/bridge/recipes/llama/llama3.py@c76eae64e):
// their dp and unknown are ZeRO-1. "none" is a run whose own configuration names an unsharded
// optimizer (NeMo's 2022 fused_adam). FSDP's SHARD_GRAD_OP is ZeRO-3 whose gathered layers
// stay from their forward to their backward (zero_reshard_after_forward: false).
void set_sharding(const CsvRow& r, bool nemo, strategies::Plan& p) {
  const std::string& s =
      choice(r, "sharding", {"dp", "none", "zero1", "zero2", "zero3", "shard_grad_op", "offload", "unknown"});
  if (s == "zero3" || s == "zero2" || s == "zero1")
    p.zero = s.back() - '0';
  else if (s == "shard_grad_op")
    p.zero = 3;
  else
    p.zero = nemo && s != "none" ? 1 : 0;
  p.zero_reshard_after_forward = s != "shard_grad_op";
  if (p.zero == 3) p.zero_backward_prefetch = backward_prefetch_of(r);
}

// Megatron-family frameworks run sequence parallelism with tensor parallelism (Megatron-Core's
// --tp-comm-overlap, which its H100 table ran, requires it), and so does
// torchtitan: its tensor-parallel plan shards the norms and the residual stream along the
// sequence (SequenceParallel, Shard(1): parallelize_llama.py at 9dec370 and 820504e). Unstated
// recomputation is settled by resolve_row.
strategies::Plan plan_of(const CsvRow& r) {
  strategies::Plan p;
  p.name = r.text("model");
  p.tp = whole(r, "tp", 1);
  p.pp = whole(r, "pp", 1);
  p.cp = whole(r, "cp", 1);
  const int gpus = whole(r, "gpus");
  p.dp = whole(r, "dp", gpus / (p.tp * p.pp * p.cp));
  p.virtual_stages = whole(r, "vp", 1);
  p.schedule = p.virtual_stages > 1 ? "interleaved-1f1b" : "1f1b";
  p.micro_batch_size = whole(r, "micro_batch", 1);  // unstated (MT-NLG's rows): 1 (docs/CALIBRATION.md)
  p.global_batch_size = whole(r, "global_batch");
  const std::string& fw = r.text("framework");
  const bool nemo = fw == "NeMo" || fw.rfind("Megatron-Bridge", 0) == 0;
  set_sharding(r, nemo, p);
  const std::string& re =
      choice(r, "recompute",
             {"none", "full", "selective", "selective-op", "save-dot-except-mlpwi", "save-qkv-proj", "unknown"});
  p.recompute = re == "unknown" ? "none" : re;
  p.recompute_early_stop = p.recompute == "full" && pytorch_checkpoint(r);
  p.sequence_parallel =
      p.tp > 1 && (nemo || fw == "Megatron-Core" || fw == "torchtitan") && !turned_off(r, "sequence_parallel");
  // fp32 where the source says (tools/public_training.py), else the model's
  p.grad_dtype = choice(r, "grad_dtype", {"", "fp32", "bf16", "fp16"});
  p.optimizer_dtype = choice(r, "optimizer_dtype", {"", "fp32", "bf16"});  // bf16 where the run's config says
  p.account_for_embedding = p.account_for_loss = choice(r, "pipeline_split", {"", "embedding+loss"}) != "";
  p.fp8_param_gather = r.has("fp8_param_gather") && choice(r, "fp8_param_gather", {"", "on"}) == "on";
  // the scaling recipe the source's configs name (tools/public_training.py), else Transformer Engine's default
  if (r.has("fp8_recipe") && !r.text("fp8_recipe").empty()) {
    std::vector<std::string> recipes = {""};
    for (const sim::Fp8RecipeEntry& e : sim::fp8_recipes()) recipes.emplace_back(e.name);
    sim::parse_fp8_recipe(choice(r, "fp8_recipe", recipes), &p.fp8_recipe);
  }
  set_overlaps(r, p);
  if (r.has("dp_shard") && !r.text("dp_shard").empty()) p.dp_shard = whole(r, "dp_shard");  // HSDP's groups
  // the layers whose activations the run's recipe sends to CPU memory (tools/public_training.py)
  if (r.has("offload_layers") && !r.text("offload_layers").empty()) {
    p.offload_activations = "cpu";
    p.offload_activation_layers = whole(r, "offload_layers");
  }
  return p;
}

// The path of the servers the source names (column server), else of the vendor's server of
// the row's GPU: DGX A100 / H100 / H200 / B200, or a GB200 or GB300 NVL72 rack.
std::string preset_of(const CsvRow& r, const std::string& platforms) {
  const std::string& gpu = r.text("gpu");
  const std::map<std::string, std::string> server = {{"H100", "dgx-h100-1x8"},
                                                     {"H200", "dgx-h200-1x8"},
                                                     {"B200", "dgx-b200-1x8"},
                                                     {"GB200", "gb200-nvl72"},
                                                     {"GB300", "gb300-nvl72"}};
  const auto it = server.find(gpu.substr(0, gpu.find('-')));
  return platforms + "/" +
         (r.has("server")      ? r.text("server")
          : it != server.end() ? it->second
                               : "dgx-a100-1x8") +
         ".yaml";
}

platforms::Cluster cluster_of(const CsvRow& r, const std::string& preset, const Calibrations& calibrations,
                              const PublicOptions& o) {
  const std::string& gpu = r.text("gpu");
  platforms::Cluster c = load_platform(preset, {});
  // Servers (NVLink domains) of the preset's size, or of the largest size under it that
  // divides the job (a 256-GPU job on NVL72 racks: 4 domains of 64).
  const int gpus = whole(r, "gpus");
  int per_server = std::min(gpus, c.groups[0].gpus_per_server);
  while (gpus % per_server != 0) --per_server;
  c.groups[0].gpu = gpu;
  c.groups[0].gpus_per_server = per_server;
  c.groups[0].count = gpus / per_server;
  c.network = sim::Network();
  platforms::build_network(c);
  for (const CalibrationFile& f : calibrations)
    if (f.applies_to(gpu)) platforms::apply_calibration(c, f.file, f.file.loc().file);
  if (o.step_efficiency > 0 || o.attention_step_efficiency > 0 || o.step_overhead_s >= 0) {
    auto it = c.efficiency.emplace(gpu, platforms::Efficiency::defaults_for(platforms::gpu_spec(gpu))).first;
    if (o.step_efficiency > 0) it->second.step = o.step_efficiency;
    if (o.attention_step_efficiency > 0) it->second.attention_step = o.attention_step_efficiency;
    if (o.step_overhead_s >= 0) it->second.step_overhead_s = o.step_overhead_s;
    it->second.step_typical = false;  // the factors are the fit's under way, not a file's
  }
  return c;
}

}  // namespace

// Why a row cannot be simulated as its source ran it (nothing: it can).
std::optional<std::string> unsupported(const CsvRow& r) {
  if (r.text("gpu") == "unsupported") return "GPU not in dejavu's catalog (H100 96GB HBM2e at 500 W)";
  if (r.text("sharding") == "offload") return "ZeRO-3 with CPU offload on a host the source does not describe";
  const std::string& fw = r.text("framework");
  if (r.text("sharding") == "unknown" && (fw == "MaxText" || fw == "Paxml"))
    return "JAX on XLA with an FSDP degree its source does not state (Paxml)";
  // Megatron-Core's table gives each run's stages but not whether it interleaved them, which
  // moves a 16-stage step by a fifth (public/megatron_core_h100.yaml).
  if (r.text("vp") == "unknown") return "pipeline stages without their interleaving (virtual stages) stated";
  if (!r.has("global_batch") || !r.has("measured_step_s") || !r.has("layers")) return "batch, step or model not stated";
  if (!r.has("vocab")) return "vocabulary not stated";
  if (!r.has("heads")) return "attention heads not stated";
  return std::nullopt;
}

// " overlap=grad,param,tp,wgrad22" as the plan has them, for a row's label.
std::string overlaps_of(const strategies::Plan& p) {
  std::string on = std::string(p.overlap_grad_reduce ? ",grad" : "") + (p.overlap_param_gather ? ",param" : "") +
                   (p.tp_comm_overlap ? ",tp" : "") +
                   (p.defer_embedding_wgrad_compute ? ",wgrad" + std::to_string(p.wgrad_deferral_limit) : "");
  return on.empty() ? "" : " overlap=" + on.substr(1);
}

bool CalibrationFile::applies_to(const std::string& gpu_type) const {
  return gpu == gpu_type || gpu == platforms::kAnyGpu;
}

Calibrations load_calibrations(const std::vector<std::string>& paths) {
  Calibrations out;
  for (const std::string& path : paths) {
    const ConfigNode file = ConfigNode::load_file(path);
    out.push_back({file, file.get_string("gpu")});
  }
  return out;
}

ResolvedRow resolve_row(const CsvRow& r, const std::string& platforms, const Calibrations& calibrations,
                        const PublicOptions& o) {
  sim::DType dtype = sim::DType::BF16;  // the converter writes a dtype name: bf16, fp16, fp8, fp4
  sim::parse_dtype(choice(r, "precision", {"bf16", "fp16", "fp8", "fp4"}), &dtype);
  const std::string preset = preset_of(r, platforms);
  ResolvedRow out{model_config_of(r, dtype), {}, cluster_of(r, preset, calibrations, o), plan_of(r), {}, preset};
  out.model = model_of(out.config);
  out.simulation = strategies::simulate(out.model, out.cluster, out.plan);
  for (const char* next : {"selective", "full"}) {
    if (r.text("recompute") != "unknown" || !out.simulation.report.oom) break;
    out.plan.recompute = next;
    out.plan.recompute_early_stop = out.plan.recompute == "full" && pytorch_checkpoint(r);
    out.simulation = strategies::simulate(out.model, out.cluster, out.plan);
  }
  return out;
}

bool in_suite(const CsvRow& r, const std::string& source, const std::string& precision) {
  const bool narrow = r.text("precision") == "fp8" || r.text("precision") == "fp4";
  return r.text("source") == source && narrow == (precision == "fp8");  // else the other precision's suite
}

ConfigError no_such_row(const std::string& row, const std::string& source, const CsvTable& table,
                        const std::string& precision) {
  return ConfigError(SourceLoc{"--row", 0, 0}, "",
                     "no row " + row + " of " + source + " in " + table.file() + " (its " + precision +
                         " rows; row_id is the CSV's first column, shown first on each of validate's rows)");
}

CsvTable load_training_table(const std::string& csv) {
  const CsvTable table = CsvTable::load_file(csv);
  table.expect_columns({"row_id",
                        "source",
                        "model",
                        "layers",
                        "hidden",
                        "heads",
                        "kv_heads",
                        "ffn_hidden",
                        "vocab",
                        "seq_len",
                        "gpu",
                        "gpus",
                        "framework",
                        "precision",
                        "tp",
                        "pp",
                        "vp",
                        "cp",
                        "dp",
                        "sharding",
                        "micro_batch",
                        "global_batch",
                        "recompute",
                        "measured_step_s",
                        "attention",
                        "grad_dtype",
                        "pipeline_split",
                        "overlaps",
                        "optimizer_dtype",
                        "held_out"});
  return table;
}

}  // namespace dejavu::tools::public_rows
