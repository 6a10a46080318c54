#include "strategies/search/evaluator.h"

#include <algorithm>
#include <cstdio>

#include "sim/error.h"
#include "sim/memory.h"
#include "strategies/lowering.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/pipeline_model.h"
#include "strategies/simulate.h"

namespace dejavu::strategies::search {

std::string plan_key(const Plan& p) {
  std::string k;
  auto add = [&](const char* name, const std::string& v) { k += std::string(name) + "=" + v + ";"; };
  add("tp", std::to_string(p.tp));
  add("pp", std::to_string(p.pp));
  add("dp", std::to_string(p.dp));
  std::string stp;
  for (int t : p.stage_tp) stp += std::to_string(t) + ",";
  add("stage_tp", stp);
  add("ep", std::to_string(p.ep));
  add("cp", std::to_string(p.cp));
  add("mb", std::to_string(p.micro_batch_size));
  add("gb", std::to_string(p.global_batch_size));
  add("sched", p.schedule);
  add("v", std::to_string(p.virtual_stages));
  std::string st = std::string(p.account_for_embedding ? "e" : "") + (p.account_for_loss ? "l" : "") + ":";
  for (int l : p.stages) st += std::to_string(l) + ",";
  add("stages", st);
  std::string rc = p.recompute + (p.recompute_early_stop ? "/early" : "") +
                   (p.recompute_layers > 0 ? "/first" + std::to_string(p.recompute_layers) : "") + ":";
  for (const std::string& m : p.stage_recompute) rc += m + ",";
  add("rc", rc);
  add("sp", p.sequence_parallel ? "1" : "0");
  add("zero", std::to_string(p.zero) + "/" + std::to_string(p.zero_prefetch) + "/" + p.zero_backward_prefetch +
                  (p.zero_reshard_after_forward ? "" : "/kept") + "/" + std::to_string(p.dp_shard));
  const auto& d = p.data_parallel;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s/%d/%d/%d/%llu/%s/%a/%d/%a", d.sync.c_str(), d.servers, d.peers, d.step, d.seed,
                d.compression.c_str(), d.density, d.rank, d.bucket_bytes);
  add("dpx", buf);
  add("delay", std::to_string(d.delay));
  add("grad", p.grad_dtype);
  add("optimizer_dtype", p.optimizer_dtype);
  add("cp_comm", p.cp_comm);
  add("overlap", std::string(p.overlap_grad_reduce ? "g" : "") + (p.overlap_param_gather ? "p" : "") +
                     (p.tp_comm_overlap ? "t" : ""));
  add("offload", p.offload_optimizer + "/" + p.offload_parameters + "/" + p.offload_activations +
                     (p.offload_activation_layers > 0 ? "/" + std::to_string(p.offload_activation_layers) : ""));
  std::string slices = std::to_string(p.token_slice_count) + ":";
  for (int l : p.token_slices) slices += std::to_string(l) + ",";
  add("slices", slices);
  add("gpus", std::to_string(p.use_gpus));
  std::string tables;
  for (const std::string& m : p.embedding_sharding) tables += m + ",";
  add("tables", tables);
  std::string split;
  for (int m : p.replica_microbatches) split += std::to_string(m) + ",";
  add("split", split);
  return k;
}

double model_state_lower_bound_bytes(const workloads::ModelGraph& model, const Plan& p) {
  // Every GPU holds at least its share of the parameters: the fullest stage has at least
  // the average, and tensor parallelism splits at most every parameter t ways.
  const double params = model.parameter_count() / static_cast<double>(p.tp_sum());
  if (p.ep > 1) return 0;  // experts shard further; no cheap bound
  const ModelStateBytes state = model_state_per_param(model.dtype, p, p.zero_shards());
  // Offloaded states are on the host.
  return params * (state.total() - (p.offload_optimizer.empty() ? 0 : state.optimizer) -
                   (p.offload_parameters.empty() ? 0 : state.weights));
}

SimulationEvaluator::~SimulationEvaluator() = default;

SimulationEvaluator::SimulationEvaluator(Problem problem, std::string collective_algorithm, Path path)
    : problem_(problem), algorithm_(std::move(collective_algorithm)), engine_(sim::engines().make(kSearchEngine)) {
  if (path == Path::Fast) fast_ = std::make_unique<PipelineModel>(problem_, algorithm_);
  for (const auto& slot : problem_.cluster->gpus)
    min_capacity_ = min_capacity_ == 0 ? slot.spec->memory_bytes : std::min(min_capacity_, slot.spec->memory_bytes);
}

bool SimulationEvaluator::prices_fast(const Plan& plan) { return fast_ && fast_->takes(plan); }

Score SimulationEvaluator::evaluate(const Plan& plan) {
  ++evaluations_;
  const std::string key = plan_key(plan);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  Score s;
  const workloads::ModelGraph& model = *problem_.model;
  try {
    validate(plan, model, *problem_.cluster);
    s.valid = true;
    const double bound = model_state_lower_bound_bytes(model, plan);
    if (bound > min_capacity_) {
      ++pruned_;
      s.peak_memory_bytes = bound;
      s.capacity_bytes = min_capacity_;
    } else if (fast_ && fast_->score(plan, s)) {
      ++simulations_;
    } else if (!schedules().make(plan.schedule)->flushes()) {
      // An asynchronous pipeline's iteration is its steady state: simulate() finds it.
      const Simulation sim = simulate(model, *problem_.cluster, plan, kSearchEngine);
      ++simulations_;
      s.simulated = true;
      s.iteration_time_s = sim.report.iteration_time_s;
      s.fits = !sim.report.oom && (!sim.report.offload.any() || sim.report.offload.fits());
      s.peak_memory_bytes = sim.report.peak_memory_bytes;
      s.capacity_bytes = sim.report.capacity_bytes;
      s.tokens_per_s = plan.global_batch_size * model.tokens_per_sample / s.iteration_time_s;
    } else {
      LowerOptions options;
      options.fuse_items = true;
      options.collective_algorithm = algorithm_;
      const LoweredJob job = lower(model, *problem_.cluster, plan, options);
      sim::EngineOptions eo;
      eo.collective_algorithm = algorithm_;
      const sim::Result r = engine_->run(job.graph, problem_.cluster->network, eo);
      ++simulations_;
      s.simulated = true;
      s.iteration_time_s = r.makespan_s;
      s.fits = !job.offload.any() || job.offload.fits();  // the host holds what is offloaded
      double worst = -1;
      const auto memory = sim::memory_profiles(job.graph, r);
      for (size_t d = 0; d < memory.size(); ++d) {
        const double cap = job.graph.devices()[d].capacity_bytes;
        const double ratio = cap > 0 ? memory[d].peak_bytes / cap : 0;
        if (cap > 0 && memory[d].peak_bytes > cap) s.fits = false;
        if (ratio > worst) {
          worst = ratio;
          s.peak_memory_bytes = memory[d].peak_bytes;
          s.capacity_bytes = cap;
        }
      }
      s.tokens_per_s = plan.global_batch_size * model.tokens_per_sample / r.makespan_s;
    }
  } catch (const Error& e) {
    s.valid = false;
    s.error = e.what();
  }
  cache_.emplace(key, s);
  return s;
}

}  // namespace dejavu::strategies::search
