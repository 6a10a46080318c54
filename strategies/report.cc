#include "strategies/report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "platforms/gpu_order.h"
#include "sim/device_time.h"
#include "sim/json_text.h"
#include "sim/memory.h"
#include "sim/units.h"

namespace dejavu::strategies {

namespace {
void add_totals(Report& r, const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                const LoweredJob& job, const sim::Result& result) {
  r.platform = cluster.name;
  r.workload = model.name;
  r.plan = plan.name;
  r.engine = result.engine;
  r.gpus = cluster.gpu_count();
  r.tasks = static_cast<int>(job.graph.size());
  r.iteration_time_s = result.makespan_s;
  r.stopped = result.stopped();
  r.stopped_at_s = result.stopped_at_s;
  r.stop_cause = result.stop_cause;
  r.model_flops = job.model_flops;
  r.hardware_flops = job.hardware_flops;
  for (const auto& slot : cluster.gpus) r.peak_flops_total += slot.spec->peak_flops(model.dtype);
  const double T = r.iteration_time_s;
  if (T > 0 && !r.stopped) {
    r.tflops_per_gpu = r.model_flops / T / r.gpus / 1e12;
    r.hardware_tflops_per_gpu = r.hardware_flops / T / r.gpus / 1e12;
    r.mfu = r.model_flops / T / r.peak_flops_total;
    r.hfu = r.hardware_flops / T / r.peak_flops_total;
  }
}

// A simulated device's streams into the report's per-GPU sums (divided by the GPUs later).
void add_stream_times(Report& r, const SimulatedDeviceReport& s) {
  for (const StreamCommReport& c : s.communication) {
    auto it = std::find_if(r.communication.begin(), r.communication.end(),
                           [&](const StreamCommReport& x) { return x.stream == c.stream; });
    if (it == r.communication.end()) it = r.communication.insert(r.communication.end(), {c.stream, 0, 0});
    it->busy_s += c.busy_s * s.gpus;
    it->hidden_s += c.hidden_s * s.gpus;
  }
}

// The pipeline phase runs until the last microbatch's task ends; within it, a device's
// bubble is the time it does no microbatch work (neither compute nor its own exposed
// tensor-parallel or pipeline communication).
void add_simulated_devices(Report& r, const platforms::Cluster& cluster, const LoweredJob& job,
                           const sim::Result& result, const std::vector<sim::DeviceTime>& times,
                           const std::vector<sim::MemoryProfile>& memory) {
  const sim::TaskGraph& g = job.graph;
  const auto microbatch_times = sim::device_times(g, result, [](const sim::Task& t) { return t.tag >= 0; });
  double pipeline_end = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (g.task(static_cast<sim::TaskId>(i)).tag >= 0) pipeline_end = std::max(pipeline_end, result.end_s[i]);
  double bubble_sum = 0;
  double worst_margin = -1e300;
  for (size_t d = 0; d < g.devices().size(); ++d) {
    SimulatedDeviceReport s;
    s.peak_memory_bytes = memory[d].peak_bytes;
    s.capacity_bytes = g.devices()[d].capacity_bytes;
    s.memory_at_peak = g.devices()[d].resident;
    s.memory_at_peak.push_back({"activations", memory[d].peak_bytes - memory[d].resident_bytes});
    const double margin = s.peak_memory_bytes - s.capacity_bytes;
    if (s.capacity_bytes > 0 && margin > worst_margin) {
      worst_margin = margin;
      r.fullest_gpu = cluster.network.node(g.devices()[d].hosts.at(0)).name;
      r.peak_memory_bytes = s.peak_memory_bytes;
      r.capacity_bytes = s.capacity_bytes;
      r.oom = margin > 0;
      r.shortfall_bytes = std::max(0.0, margin);
    }
    s.name = g.devices()[d].name;
    s.stage = job.device_stage[d];
    s.gpus = static_cast<int>(g.devices()[d].hosts.size());
    s.compute_s = times[d].compute_s;
    s.communication_s = times[d].communication_s;
    s.exposed_communication_s = times[d].exposed_communication_s;
    s.idle_s = times[d].idle_s;
    s.compute_slowed_s = times[d].compute_slowed_s;
    r.compute_slowed_s += s.compute_slowed_s * s.gpus;
    for (const sim::StreamTime& st : times[d].streams)
      s.communication.push_back({g.stream_names().at(st.stream), st.busy_s, st.hidden_s});
    add_stream_times(r, s);
    const double busy = microbatch_times[d].compute_s + microbatch_times[d].exposed_communication_s;
    // (rounding can leave a device that never waits a hair below zero)
    s.bubble_fraction = pipeline_end > 0 ? std::max(0.0, 1.0 - busy / pipeline_end) : 0;
    bubble_sum += s.bubble_fraction * s.gpus;
    r.simulated.push_back(s);
  }
  r.bubble_fraction = r.gpus > 0 ? bubble_sum / r.gpus : 0;
  r.compute_slowed_s /= std::max(1, r.gpus);
  for (StreamCommReport& c : r.communication) {
    c.busy_s /= std::max(1, r.gpus);
    c.hidden_s /= std::max(1, r.gpus);
  }
  r.pipeline_s = pipeline_end;
}

void add_gpus(Report& r, const platforms::Cluster& cluster, const LoweredJob& job,
              const std::vector<sim::DeviceTime>& times, const std::vector<sim::MemoryProfile>& memory) {
  for (int i = 0; i < cluster.gpu_count(); ++i) {
    const GpuRole& role = job.roles[i];
    DeviceReport d;
    d.gpu = i;
    d.name = cluster.network.node(cluster.gpus[i].host).name;
    d.gpu_type = cluster.gpus[i].spec->name;
    d.stage = role.stage;
    d.dp_rank = role.dp_rank;
    d.tp_rank = role.tp_rank;
    d.cp_rank = role.cp_rank;
    d.simulated_as = job.graph.devices()[role.device].name;
    d.busy_s = times[role.device].compute_s;
    d.communication_s = times[role.device].communication_s;
    d.exposed_communication_s = times[role.device].exposed_communication_s;
    d.idle_s = times[role.device].idle_s;
    d.peak_memory_bytes = memory[role.device].peak_bytes;
    d.memory_capacity_bytes = cluster.gpus[i].spec->memory_bytes;
    r.devices.push_back(d);
  }
}

LinkReport link_report(const platforms::Cluster& cluster, const sim::Result& result, double T, size_t k) {
  const sim::Link& link = cluster.network.link(static_cast<int>(k / 2));
  const double demand = T > 0 ? result.link_bytes[k] / (link.bandwidth_Bps * T) : 0;
  const bool forward = k % 2 == 0;
  const std::string& a = cluster.network.node(forward ? link.a : link.b).name;
  const std::string& b = cluster.network.node(forward ? link.b : link.a).name;
  LinkReport out{link.name, a + " -> " + b, result.link_bytes[k], demand, busy_fraction(demand)};
  if (k < result.link_busy_s.size()) {
    out.in_flight_s = result.link_busy_s[k];
    out.peak_flows = static_cast<int>(result.link_peak_flows.at(k));
  }
  return out;
}

void add_links(Report& r, const platforms::Cluster& cluster, const sim::Result& result) {
  const double T = r.iteration_time_s;
  size_t busiest = 0;
  std::vector<std::pair<double, size_t>> by_bytes;
  for (size_t k = 0; k < result.link_bytes.size(); ++k) {
    const double bw = cluster.network.link(static_cast<int>(k / 2)).bandwidth_Bps;
    if (result.link_bytes[k] / bw >
        result.link_bytes[busiest] / cluster.network.link(static_cast<int>(busiest / 2)).bandwidth_Bps)
      busiest = k;
    if (result.link_bytes[k] > 0) by_bytes.emplace_back(-result.link_bytes[k], k);
  }
  if (!result.link_bytes.empty()) r.busiest_link = link_report(cluster, result, T, busiest);
  std::sort(by_bytes.begin(), by_bytes.end());
  for (size_t i = 0; i < by_bytes.size() && i < 15; ++i)
    r.links.push_back(link_report(cluster, result, T, by_bytes[i].second));
}

// The recipe each GPU type runs the plan's fp8 casts with: the plan's, or Transformer Engine's
// default for the type.
std::string fp8_recipe_text(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan) {
  if (model.dtype != sim::DType::FP8) return "";
  if (plan.fp8_recipe != sim::Fp8Recipe::Default) return sim::to_string(plan.fp8_recipe);
  std::string out;
  for (const std::string& type : platforms::gpu_types(cluster)) {
    const sim::Fp8Recipe r = sim::resolve_fp8_recipe(plan.fp8_recipe, platforms::gpu_spec(type).mx_formats);
    out +=
        (out.empty() ? "" : "; ") + std::string(sim::to_string(r)) + " (Transformer Engine's default on " + type + ")";
  }
  return out;
}
}  // namespace

Report make_report(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                   const LoweredJob& job, const sim::Result& result) {
  Report r;
  add_totals(r, model, cluster, plan, job, result);
  const auto times = sim::device_times(job.graph, result);
  const auto memory = sim::memory_profiles(job.graph, result);
  add_simulated_devices(r, cluster, job, result, times, memory);
  r.schedule = plan.schedule;
  add_gpus(r, cluster, job, times, memory);
  add_links(r, cluster, result);
  r.offload = job.offload;
  r.token_slices = job.token_slices;
  r.token_slices_chosen = job.token_slices_chosen;
  r.fp8_recipe = fp8_recipe_text(model, cluster, plan);
  for (const auto& [gpu, eff] : cluster.efficiency)
    r.host_overhead_s = std::max(r.host_overhead_s, eff.step_overhead_s);
  for (const auto& [gpu, files] : cluster.calibrated_from)
    if (const auto it = cluster.efficiency.find(gpu); it != cluster.efficiency.end())
      r.calibrations.push_back({gpu, files, it->second.step, it->second.attention_step, it->second.step_overhead_s});
  return r;
}

double busy_fraction(double demand) { return std::min(demand, 1.0); }

std::string ValidationBand::runs_text() const {
  const std::string words = steps_words(steps);
  return std::to_string(runs) + " " + gpu + (words.empty() ? "" : " " + words.substr(0, words.size() - 1)) +
         (precision == "16-bit" ? "" : " " + precision) + " runs";
}

std::string steps_words(const std::string& steps) {
  return steps == "fitted" ? "step-calibrated " : steps == "typical" ? "typical-calibrated " : "";
}

}  // namespace dejavu::strategies
