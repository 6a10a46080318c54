#include "strategies/report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/json_text.h"
#include "sim/device_time.h"
#include "sim/memory.h"
#include "sim/units.h"

namespace dejavu::strategies {

Report make_report(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                   const Plan& plan, const LoweredJob& job, const sim::Result& result) {
  const sim::TaskGraph& g = job.graph;
  Report r;
  r.platform = cluster.name;
  r.workload = model.name;
  r.plan = plan.name;
  r.engine = result.engine;
  r.gpus = cluster.gpu_count();
  r.tasks = static_cast<int>(g.size());
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

  // The pipeline phase runs until the last microbatch's task ends; within it, a device's
  // bubble is the time it does no microbatch work (neither compute nor its own exposed
  // tensor-parallel or pipeline communication).
  const auto times = sim::device_times(g, result);
  const auto microbatch_times =
      sim::device_times(g, result, [](const sim::Task& t) { return t.microbatch >= 0; });
  double pipeline_end = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (g.task(static_cast<sim::TaskId>(i)).microbatch >= 0)
      pipeline_end = std::max(pipeline_end, result.end_s[i]);
  std::vector<double> microbatch_busy;
  for (const auto& t : microbatch_times)
    microbatch_busy.push_back(t.compute_s + t.exposed_communication_s);
  const auto memory = sim::memory_profiles(g, result);
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
    // (rounding can leave a device that never waits a hair below zero)
    s.bubble_fraction = pipeline_end > 0 ? std::max(0.0, 1.0 - microbatch_busy[d] / pipeline_end) : 0;
    bubble_sum += s.bubble_fraction * s.gpus;
    r.simulated.push_back(s);
  }
  r.bubble_fraction = r.gpus > 0 ? bubble_sum / r.gpus : 0;
  r.pipeline_s = pipeline_end;
  r.schedule = plan.schedule;

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
    d.simulated_as = g.devices()[role.device].name;
    d.busy_s = times[role.device].compute_s;
    d.communication_s = times[role.device].communication_s;
    d.exposed_communication_s = times[role.device].exposed_communication_s;
    d.idle_s = times[role.device].idle_s;
    d.peak_memory_bytes = memory[role.device].peak_bytes;
    d.memory_capacity_bytes = cluster.gpus[i].spec->memory_bytes;
    r.devices.push_back(d);
  }

  double best = -1;
  for (size_t k = 0; k < result.link_bytes.size(); ++k) {
    const sim::Link& link = cluster.network.link(static_cast<int>(k / 2));
    const double demand = T > 0 ? result.link_bytes[k] / (link.bandwidth_Bps * T) : 0;
    if (demand > best) {
      best = demand;
      const bool forward = k % 2 == 0;
      const std::string& a = cluster.network.node(forward ? link.a : link.b).name;
      const std::string& b = cluster.network.node(forward ? link.b : link.a).name;
      r.busiest_link = LinkReport{link.name, a + " -> " + b, result.link_bytes[k], demand, busy_fraction(demand)};
    }
  }
  return r;
}

double busy_fraction(double demand) { return std::min(demand, 1.0); }

void write_json(std::ostream& out, const Report& r) {
  nlohmann::ordered_json j;
  j["platform"] = r.platform;
  j["workload"] = r.workload;
  j["plan"] = r.plan;
  j["engine"] = r.engine;
  j["gpus"] = r.gpus;
  j["tasks"] = r.tasks;
  // A stopped iteration has no time or throughput: null, and what stopped it.
  auto unless_stopped = [&](double x) { return r.stopped ? nlohmann::ordered_json() : nlohmann::ordered_json(x); };
  j["iteration_time_s"] = unless_stopped(r.iteration_time_s);
  if (r.stopped) j["stopped"] = {{"at_s", r.stopped_at_s}, {"cause", r.stop_cause}};
  j["tflops_per_gpu"] = unless_stopped(r.tflops_per_gpu);
  j["hardware_tflops_per_gpu"] = unless_stopped(r.hardware_tflops_per_gpu);
  j["mfu"] = unless_stopped(r.mfu);
  j["hfu"] = unless_stopped(r.hfu);
  j["model_flops"] = r.model_flops;
  j["bubble_fraction"] = r.bubble_fraction;
  j["oom"] = r.oom;
  j["memory"] = {{"fullest_gpu", r.fullest_gpu},
                 {"peak_bytes", r.peak_memory_bytes},
                 {"capacity_bytes", r.capacity_bytes},
                 {"shortfall_bytes", r.shortfall_bytes}};
  j["busiest_link"] = {{"name", r.busiest_link.name},
                       {"direction", r.busiest_link.direction},
                       {"bytes", r.busiest_link.bytes},
                       {"utilization", r.busiest_link.utilization},
                       {"demand", r.busiest_link.demand}};
  auto& sims = j["simulated_devices"] = nlohmann::ordered_json::array();
  for (const auto& s : r.simulated) {
    nlohmann::ordered_json parts;
    for (const auto& part : s.memory_at_peak) parts[part.name] = part.bytes;
    sims.push_back({{"name", s.name},
                    {"stage", s.stage},
                    {"gpus", s.gpus},
                    {"compute_s", s.compute_s},
                    {"communication_s", s.communication_s},
                    {"exposed_communication_s", s.exposed_communication_s},
                    {"idle_s", s.idle_s},
                    {"bubble_fraction", s.bubble_fraction},
                    {"peak_memory_bytes", s.peak_memory_bytes},
                    {"memory_at_peak", parts}});
  }
  auto& devs = j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : r.devices)
    devs.push_back({{"gpu", d.gpu},
                    {"name", d.name},
                    {"gpu_type", d.gpu_type},
                    {"stage", d.stage},
                    {"dp_rank", d.dp_rank},
                    {"tp_rank", d.tp_rank},
                    {"cp_rank", d.cp_rank},
                    {"simulated_as", d.simulated_as},
                    {"busy_s", d.busy_s},
                    {"communication_s", d.communication_s},
                    {"exposed_communication_s", d.exposed_communication_s},
                    {"idle_s", d.idle_s},
                    {"peak_memory_bytes", d.peak_memory_bytes},
                    {"memory_capacity_bytes", d.memory_capacity_bytes}});
  nlohmann::ordered_json pipe = {{"schedule", r.schedule},
                                 {"flush", r.pipeline_flush},
                                 {"optimizer_steps_per_iteration", r.optimizer_steps},
                                 {"mean_staleness", r.mean_staleness}};
  if (r.delayed_averaging > 0) pipe["delayed_averaging_steps"] = r.delayed_averaging;
  if (!r.pipeline_flush || r.delayed_averaging > 0) {
    pipe["steady_state_period_s"] = r.steady_state_period_s;
    pipe["staleness_per_stage"] = r.staleness;
    pipe["weight_versions_per_stage"] = r.weight_versions;
  }
  j["pipeline"] = pipe;
  if (!r.faults_json.empty()) j["faults"] = nlohmann::ordered_json::parse(r.faults_json);
  out << json_text(j, 2) << "\n";
}

void write_summary(std::ostream& out, const Report& r) {
  char buf[256];
  out << "dejavu: " << r.workload << " on " << r.platform << ", plan " << r.plan << " ("
      << r.engine << " engine)\n";
  if (r.stopped) {
    std::snprintf(buf, sizeof buf, "  iteration time     none: the iteration stopped at %s (%s)\n",
                  units::format_time(r.stopped_at_s).c_str(), r.stop_cause.c_str());
    out << buf;
  } else {
    std::snprintf(buf, sizeof buf, "  iteration time     %s\n", units::format_time(r.iteration_time_s).c_str());
    out << buf;
    std::snprintf(buf, sizeof buf,
                  "  model TFLOP/s/GPU  %.1f   MFU %.1f%%   (hardware %.1f TFLOP/s/GPU, HFU %.1f%%)\n",
                  r.tflops_per_gpu, 100 * r.mfu, r.hardware_tflops_per_gpu, 100 * r.hfu);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "  pipeline bubble    %.1f%%\n", 100 * r.bubble_fraction);
  out << buf;
  if (r.delayed_averaging > 0) {
    std::snprintf(buf, sizeof buf,
                  "  delayed averaging  the gradient exchange hidden behind %d step(s): steady state, gradients %d "
                  "steps stale\n",
                  r.delayed_averaging, r.delayed_averaging);
    out << buf;
  }
  if (!r.pipeline_flush) {
    std::string versions;
    for (int v : r.weight_versions) versions += (versions.empty() ? "" : "/") + std::to_string(v);
    std::snprintf(buf, sizeof buf,
                  "  asynchronous       %s: no flush (steady state), %d optimizer step(s) per iteration, gradients "
                  "%.2f steps stale on average, weight versions per stage %s\n",
                  r.schedule.c_str(), r.optimizer_steps, r.mean_staleness, versions.c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "  simulated          %d GPUs as %zu devices, %d tasks\n", r.gpus,
                r.simulated.size(), r.tasks);
  out << buf;
  if (r.oom)
    std::snprintf(buf, sizeof buf, "  memory             OUT OF MEMORY on %s: needs %s, has %s (short by %s)\n",
                  r.fullest_gpu.c_str(), units::format_bytes(r.peak_memory_bytes).c_str(),
                  units::format_bytes(r.capacity_bytes).c_str(), units::format_bytes(r.shortfall_bytes).c_str());
  else
    std::snprintf(buf, sizeof buf, "  memory             fits: at most %s of %s (%s)\n",
                  units::format_bytes(r.peak_memory_bytes).c_str(), units::format_bytes(r.capacity_bytes).c_str(),
                  r.fullest_gpu.c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "  busiest link       %s (%s): %s, %.1f%% busy\n",
                r.busiest_link.name.c_str(), r.busiest_link.direction.c_str(),
                units::format_bytes(r.busiest_link.bytes).c_str(), 100 * r.busiest_link.utilization);
  out << buf;
  if (r.busiest_link.demand > 1) {
    std::snprintf(buf, sizeof buf,
                  "                     its traffic needs %.2fx the link in this time: this engine gave every "
                  "transfer the whole link (--engine simgrid shares it)\n",
                  r.busiest_link.demand);
    out << buf;
  }
  out << "  device (stage)        GPUs   compute     exposed comm   idle        bubble   peak memory\n";
  for (const auto& s : r.simulated) {
    char bubble[16];
    std::snprintf(bubble, sizeof bubble, "%.1f%%", 100 * s.bubble_fraction);
    std::snprintf(buf, sizeof buf, "  %-16s (%d)  %5d   %-11s %-14s %-11s %-7s  %s\n", s.name.c_str(),
                  s.stage, s.gpus, units::format_time(s.compute_s).c_str(),
                  units::format_time(s.exposed_communication_s).c_str(),
                  units::format_time(s.idle_s).c_str(), bubble, units::format_bytes(s.peak_memory_bytes).c_str());
    out << buf;
  }
}

}  // namespace dejavu::strategies
