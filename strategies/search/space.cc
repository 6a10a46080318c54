#include "strategies/search/space.h"

#include <algorithm>

#include "sim/config_node.h"

namespace dejavu::strategies::search {

Space default_space(const Problem& problem, int max_micro_batch) {
  const auto& model = *problem.model;
  const auto& cluster = *problem.cluster;
  int per_server = cluster.gpu_count();
  for (const auto& g : cluster.groups) per_server = std::min(per_server, g.gpus_per_server);
  Space s;
  const int n = cluster.gpu_count();
  for (int t = 1; t <= per_server; ++t)
    if (n % t == 0 && (model.heads == 0 || model.heads % t == 0)) s.tp.push_back(t);
  for (int p = 1; p <= std::min(n, model.layers); ++p)
    if (n % p == 0) s.pp.push_back(p);
  for (int b = 1; b <= max_micro_batch; b *= 2) s.micro_batch.push_back(b);
  // Context parallelism for long sequences (kLongContext tokens and more): each sequence
  // split over cp GPUs, in 2cp chunks (the causal mask's load balance), at most a server's.
  const long long seq = static_cast<long long>(model.tokens_per_sample);
  for (int c = 2; c <= per_server && model.heads > 0 && seq >= kLongContext; ++c)
    if (n % c == 0 && seq % (2 * c) == 0) s.cp.push_back(c);
  for (int e = 2; e <= n && model.experts > 0; ++e)
    if (n % e == 0 && model.experts % e == 0) s.ep.push_back(e);
  bool cpu = true, nvme = true;
  for (const auto& g : cluster.groups) {
    cpu = cpu && g.host.memory_bytes > 0 && g.host.memory_Bps > 0 && g.host.pcie_Bps > 0;
    nvme = nvme && g.host.nvme_bytes > 0 && g.host.nvme_Bps > 0;
  }
  if (!problem.recompute.empty()) {  // the problem's modes, each once, in its order
    s.recompute.clear();
    for (const std::string& m : problem.recompute)
      if (std::find(s.recompute.begin(), s.recompute.end(), m) == s.recompute.end()) s.recompute.push_back(m);
  }
  if (cpu) s.offload.push_back("cpu");
  if (cpu && nvme) s.offload.push_back("nvme");
  return s;
}

bool make_plan(const Problem& problem, int tp, int pp, int micro_batch, Plan& out, int cp) {
  const int n = problem.cluster->gpu_count();
  if (n % (tp * pp * cp) != 0) return false;
  const int dp = n / (tp * pp * cp);
  if (problem.global_batch % (micro_batch * dp) != 0) return false;
  if (pp > problem.model->layers) return false;
  if (problem.model->heads > 0 && problem.model->heads % tp != 0) return false;
  out = Plan{};
  out.name = "searched";
  out.tp = tp;
  out.pp = pp;
  out.cp = cp;
  out.dp = dp;
  out.micro_batch_size = micro_batch;
  out.global_batch_size = problem.global_batch;
  out.grad_dtype = problem.grad_dtype;
  return true;
}

// The space's microbatch sizes, and each replica's whole batch in one microbatch (no
// accumulation; DLRM-style models take thousands of samples at once).
std::vector<int> micro_batch_options(const Problem& problem, const Space& space, int tp, int pp, int cp) {
  std::vector<int> out = space.micro_batch;
  const long long gpus = problem.cluster->gpu_count(), inner = static_cast<long long>(tp) * pp * cp;
  if (gpus % inner != 0) return out;
  const long long whole = problem.global_batch / (gpus / inner);
  if (whole > 0 && std::find(out.begin(), out.end(), whole) == out.end()) out.push_back(static_cast<int>(whole));
  return out;
}

namespace {

// Every recomputation, ZeRO stage, sequence parallelism and offload of `base`.
void add_variants(const Space& space, const Plan& base, const std::string& schedule, int v, std::vector<Plan>& out) {
  for (const std::string& rc : space.recompute)
    for (int z : space.zero) {
      if (z > 0 && base.dp == 1) continue;  // nothing to shard over
      for (bool sp : space.sequence_parallel) {
        if (sp && base.tp == 1) continue;
        for (const std::string& offload : space.offload) {
          Plan p = base;
          p.schedule = schedule;
          p.virtual_stages = v;
          p.recompute = rc;
          p.zero = z;
          p.sequence_parallel = sp;
          p.offload_optimizer = offload;
          out.push_back(p);
        }
      }
    }
}
}  // namespace

std::vector<std::pair<std::string, int>> schedules_of(const Space& space, int pp, int m, int layers) {
  if (pp == 1) return {{"1f1b", 1}};  // one stage: every schedule is the same
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& name : space.schedules) {
    if (name != "interleaved-1f1b") {
      out.push_back({name, 1});
      continue;
    }
    for (int v : space.chunks)
      if (v > 1 && pp * v <= layers && m % pp == 0) out.push_back({name, v});
  }
  return out;
}

namespace {
// How context ranks share keys and values: none to share with cp 1.
std::vector<std::string> cp_comms(const Space& space, int cp) {
  return cp > 1 ? space.cp_comm : std::vector<std::string>{"all-gather"};
}
}  // namespace

std::vector<Plan> enumerate(const Problem& problem, const Space& space) {
  std::vector<Plan> out;
  for (int tp : space.tp)
    for (int cp : space.cp)
      for (int pp : space.pp)
        for (int mb : micro_batch_options(problem, space, tp, pp, cp)) {
          Plan base;
          if (!make_plan(problem, tp, pp, mb, base, cp)) continue;
          for (const auto& [schedule, v] : schedules_of(space, pp, base.microbatches(), problem.model->layers))
            for (int ep : space.ep)
              for (const std::string& comm : cp_comms(space, cp)) {
                if (base.dp % ep != 0) continue;
                base.ep = ep;
                base.cp_comm = comm;
                add_variants(space, base, schedule, v, out);
              }
        }
  return out;
}

namespace {
// "[a, b, c]" (sep ", ") or "[a,b,c]" (sep ",").
template <class T, class F>
std::string listed(const std::vector<T>& xs, const char* sep, F text) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? sep : "") + text(xs[i]);
  return s + "]";
}
std::string number(int x) { return std::to_string(x); }
// A plan's embedding_sharding: the one mode for all table groups, or the list.
std::string shardings(const Plan& p, const char* sep) {
  const auto& m = p.embedding_sharding;
  return m.size() == 1 ? m.front() : listed(m, sep, [](const std::string& x) { return x; });
}
}  // namespace

std::string describe(const Plan& p) {
  std::string s = (p.stage_tp.empty() ? "tp" + std::to_string(p.tp) : "tp=" + listed(p.stage_tp, ",", number)) + " pp" +
                  std::to_string(p.pp) + " dp" + std::to_string(p.dp) + " mb" + std::to_string(p.micro_batch_size);
  if (p.pp > 1) s += " " + p.schedule + (p.virtual_stages > 1 ? "/v" + std::to_string(p.virtual_stages) : "");
  if (!p.stage_recompute.empty())
    s += " rc=" + listed(p.stage_recompute, ",", [](const std::string& m) { return m; });
  else if (p.recompute != "none")
    s += " rc=" + p.recompute;
  if (p.recompute_early_stop) s += "(early-stop)";
  if (p.recompute_layers > 0) s += "(first " + std::to_string(p.recompute_layers) + " layers)";
  if (p.zero > 0) s += " zero" + std::to_string(p.zero);
  if (p.zero == 3 && p.zero_backward_prefetch != Plan{}.zero_backward_prefetch) s += "/bwd-" + p.zero_backward_prefetch;
  if (p.zero == 3 && !p.zero_reshard_after_forward) s += "/kept";
  if (p.dp_shard > 0) s += "/shard" + std::to_string(p.dp_shard);
  if (p.sequence_parallel) s += " sp";
  if (p.ep > 1) s += " ep" + std::to_string(p.ep);
  if (p.cp > 1) s += " cp" + std::to_string(p.cp) + (p.cp_comm == "ring" ? "/ring" : "");
  if (!p.offload_optimizer.empty()) s += " offload=" + p.offload_optimizer;
  if (!p.offload_parameters.empty()) s += " params=" + p.offload_parameters;
  if (!p.offload_activations.empty()) s += " activations=" + p.offload_activations;
  if (p.offload_activation_layers > 0) s += "/" + std::to_string(p.offload_activation_layers) + "-layers";
  if (!p.gpu_order.empty()) {
    s += " order=";
    for (size_t i = 0; i < p.gpu_order.size(); ++i)
      s += (i ? "," : "") + p.gpu_order[i].substr(0, p.gpu_order[i].find('-'));
  }
  if (p.use_gpus > 0) s += " on" + std::to_string(p.use_gpus);
  if (!p.embedding_sharding.empty()) s += " tables=" + shardings(p, ",");
  if (!p.stages.empty()) s += " stages=" + listed(p.stages, ",", number);
  const std::string counted = std::string(p.account_for_embedding ? "+embedding" : "") +
                              (p.account_for_loss ? "+loss" : "");  // Megatron-Core's pipeline split
  if (!counted.empty()) s += " layers" + counted;
  if (!p.replica_microbatches.empty()) s += " split=" + listed(p.replica_microbatches, ",", number);
  std::string overlaps;  // Megatron-Core's overlap switches on
  if (p.overlap_grad_reduce) overlaps += ",grad";
  if (p.overlap_param_gather) overlaps += ",param";
  if (p.tp_comm_overlap) overlaps += ",tp";
  if (p.defer_embedding_wgrad_compute) overlaps += ",wgrad" + std::to_string(p.wgrad_deferral_limit);
  if (!overlaps.empty()) s += " overlap=" + overlaps.substr(1);
  const auto& d = p.data_parallel;
  if (d.bucket_bytes > 0) s += " bucket=" + std::to_string(static_cast<long long>(d.bucket_bytes / 1e6)) + "MB";
  if (d.sync != "all-reduce") s += " " + d.sync + (d.servers != 1 ? "/" + std::to_string(d.servers) : "");
  if (d.compression != "none") s += " " + d.compression;
  if (d.delay > 0) s += " delay" + std::to_string(d.delay);
  if (!p.grad_dtype.empty()) s += " grads=" + p.grad_dtype;
  if (p.optimizer_dtype == "bf16") s += " adam=bf16";
  if (p.fp8_param_gather) s += " fp8-weights";
  return s;
}

void write_plan_yaml(std::ostream& out, const Plan& p, const std::string& comment) {
  out << "# " << comment << "\n";
  out << "name: " << yaml_scalar(p.name) << "\n";
  out << "tp: " << p.tp << "\npp: " << p.pp << "\ndp: " << p.dp << "\n";
  if (!p.stage_tp.empty()) out << "stage_tp: " << listed(p.stage_tp, ", ", number) << "\n";
  if (p.ep > 1) out << "ep: " << p.ep << "\n";
  if (p.cp > 1) out << "cp: " << p.cp << "\ncp_comm: " << p.cp_comm << "\n";
  out << "micro_batch_size: " << p.micro_batch_size << "\nglobal_batch_size: " << p.global_batch_size << "\n";
  out << "schedule: " << p.schedule << "\n";
  if (p.virtual_stages > 1) out << "virtual_stages: " << p.virtual_stages << "\n";
  if (!p.stages.empty()) out << "stages: " << listed(p.stages, ", ", number) << "\n";
  if (p.account_for_embedding) out << "account_for_embedding_in_pipeline_split: true\n";
  if (p.account_for_loss) out << "account_for_loss_in_pipeline_split: true\n";
  if (p.token_slice_count > 0) out << "token_slices: " << p.token_slice_count << "\n";
  if (!p.token_slices.empty()) out << "token_slices: " << listed(p.token_slices, ", ", number) << "\n";
  if (p.stage_recompute.empty())
    out << "recompute: " << p.recompute << "\n";
  else
    out << "recompute: " << listed(p.stage_recompute, ", ", [](const std::string& m) { return m; }) << "\n";
  if (p.recompute_early_stop) out << "recompute_early_stop: true\n";
  if (p.recompute_layers > 0) out << "recompute_layers: " << p.recompute_layers << "\n";
  out << "sequence_parallel: " << (p.sequence_parallel ? "true" : "false") << "\n";
  out << "zero: " << p.zero << "\n";
  if (p.zero == 3 && p.zero_prefetch != Plan{}.zero_prefetch) out << "zero_prefetch: " << p.zero_prefetch << "\n";
  if (p.zero == 3 && p.zero_backward_prefetch != Plan{}.zero_backward_prefetch)
    out << "zero_backward_prefetch: " << p.zero_backward_prefetch << "\n";
  if (p.zero == 3 && !p.zero_reshard_after_forward) out << "zero_reshard_after_forward: false\n";
  if (p.dp_shard > 0) out << "dp_shard: " << p.dp_shard << "\n";
  if (!p.grad_dtype.empty()) out << "grad_dtype: " << p.grad_dtype << "\n";
  if (!p.optimizer_dtype.empty()) out << "optimizer_dtype: " << p.optimizer_dtype << "\n";
  if (!p.offload_optimizer.empty() || !p.offload_parameters.empty() || !p.offload_activations.empty()) {
    std::string tiers;
    if (!p.offload_optimizer.empty()) tiers += ", optimizer: " + p.offload_optimizer;
    if (!p.offload_parameters.empty()) tiers += ", parameters: " + p.offload_parameters;
    if (!p.offload_activations.empty()) tiers += ", activations: " + p.offload_activations;
    if (p.offload_activation_layers > 0) tiers += ", layers: " + std::to_string(p.offload_activation_layers);
    out << "offload: {" << tiers.substr(2) << "}\n";
  }
  if (!p.gpu_order.empty())
    out << "gpu_order: " << listed(p.gpu_order, ", ", [](const std::string& t) { return t; }) << "\n";
  if (!p.embedding_sharding.empty()) out << "embedding_sharding: " << shardings(p, ", ") << "\n";
  if (p.use_gpus > 0) out << "gpus: " << p.use_gpus << "  # the platform's first " << p.use_gpus << " GPUs\n";
  if (!p.replica_microbatches.empty())
    out << "replica_microbatches: " << listed(p.replica_microbatches, ", ", number) << "\n";
  if (p.overlap_grad_reduce) out << "overlap_grad_reduce: true\n";
  if (p.overlap_param_gather) out << "overlap_param_gather: true\n";
  if (p.tp_comm_overlap) out << "tp_comm_overlap: true\n";
  if (p.defer_embedding_wgrad_compute)
    out << "defer_embedding_wgrad_compute: true\nwgrad_deferral_limit: " << p.wgrad_deferral_limit << "\n";
  if (p.fp8_param_gather) out << "fp8_param_gather: true\n";
  if (p.fp8_recipe != sim::Fp8Recipe::Default) out << "fp8_recipe: " << sim::to_string(p.fp8_recipe) << "\n";
  if (p.comm_sms != Plan::kAutoCommSms) out << "comm_sms: " << p.comm_sms << "\n";
  const auto& d = p.data_parallel;  // refined syncs and buckets, and the update-rule variants
  if (d.sync != "all-reduce" || d.compression != "none" || d.delay > 0 || d.bucket_bytes > 0) {
    out << "data_parallel: {sync: " << d.sync;
    if (d.servers != 1) out << ", servers: " << d.servers;
    if (d.bucket_bytes > 0) out << ", bucket: " << static_cast<long long>(d.bucket_bytes) << " B";
    if (d.sync == "gossip") out << ", peers: " << d.peers;
    if (d.compression != "none") out << ", compression: " << d.compression;
    if (d.compression == "topk") out << ", density: " << d.density;
    if (d.compression == "powersgd") out << ", rank: " << d.rank;
    if (d.delay > 0) out << ", delay: " << d.delay;
    out << "}\n";
  }
}

}  // namespace dejavu::strategies::search
