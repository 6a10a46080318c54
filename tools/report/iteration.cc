#include "tools/report/iteration.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/json_text.h"
#include "sim/units.h"

namespace dejavu::report {

using namespace strategies;

namespace {
nlohmann::json fault_json(const strategies::FaultReport& f) {
  nlohmann::json j = {{"scenario", f.scenario},        {"baseline_s", f.baseline_s},
                      {"iteration_s", f.iteration_s},  {"slowdown", f.slowdown},
                      {"stopped", f.stopped},          {"tasks_done", f.tasks_done},
                      {"tasks_total", f.tasks_total},  {"delayed_tasks", f.delayed_tasks},
                      {"slowed_tasks", f.slowed_tasks}};
  if (f.stopped) {
    j["stopped_at_s"] = f.stopped_at_s;
    j["cause"] = f.cause;
    j["lost_gpu_seconds"] = f.lost_gpu_seconds;
  }
  j["most_delayed"] = nlohmann::json::array();
  for (const strategies::DelayedTask& d : f.most_delayed)
    j["most_delayed"].push_back(
        {{"label", d.label}, {"device", d.device}, {"delay_s", d.delay_s}, {"slowed", d.slowed}});
  j["byzantine"] = nlohmann::json::array();
  for (const strategies::ByzantineWorker& w : f.byzantine)
    j["byzantine"].push_back({{"gpu", w.gpu}, {"mode", w.mode}, {"factor", w.factor}});
  return j;
}

// The band validation gives the iteration time, and what no validated run did; absent when
// the run stopped or nothing was looked up (a Chakra trace).
nlohmann::ordered_json link_json(const strategies::LinkReport& l) {
  nlohmann::ordered_json j = {{"name", l.name},
                              {"direction", l.direction},
                              {"bytes", l.bytes},
                              {"utilization", l.utilization},
                              {"demand", l.demand}};
  if (l.in_flight_s >= 0) {
    j["in_flight_s"] = l.in_flight_s;
    j["peak_flows"] = l.peak_flows;
  }
  return j;
}

nlohmann::ordered_json calibrations_json(const std::vector<strategies::CalibrationNote>& notes) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const strategies::CalibrationNote& c : notes)
    j.push_back({{"gpu", c.gpu},
                 {"files", c.files},
                 {"step_efficiency", c.step_efficiency},
                 {"attention_step_efficiency", c.attention_step_efficiency},
                 {"step_overhead_s", c.step_overhead_s}});
  return j;
}

nlohmann::ordered_json validation_json(const strategies::ValidationBand& v) {
  nlohmann::ordered_json j;
  if (v.has_band) {
    j["band_s"] = {v.low_s, v.high_s};
    j["measured_over_predicted"] = {v.ratio_low, v.ratio_high};
  } else {
    j["band_s"] = nullptr;
  }
  j["runs"] = v.runs;
  j["gpu"] = v.gpu;
  j["step_calibrated"] = v.steps != "none";
  j["step_calibration"] = v.steps;
  j["precision"] = v.precision;
  j["outside"] = nlohmann::ordered_json::array();
  for (const std::string& o : v.outside) j["outside"].push_back(o);
  return j;
}

void write_validation_lines(std::ostream& out, const strategies::ValidationBand& v) {
  char buf[320];
  if (v.has_band) {
    std::snprintf(buf, sizeof buf,
                  "  validated band     %s to %s (measured / predicted %.2f to %.2f, 10th to 90th percentile of "
                  "%s not fitted to)\n",
                  units::format_time(v.low_s).c_str(), units::format_time(v.high_s).c_str(), v.ratio_low, v.ratio_high,
                  v.runs_text().c_str());
    out << buf;
  }
  if (v.outside.empty()) return;
  std::string list;
  for (const std::string& o : v.outside) list += (list.empty() ? "" : "; ") + o;
  out << "  outside validation " << list << "\n";
}
}  // namespace

namespace {
nlohmann::ordered_json offload_json(const strategies::OffloadUse& o) {
  return {{"optimizer", o.tier},
          {"parameters", o.parameters},
          {"fits", o.fits()},
          {"host_memory_bytes_per_server", o.host_bytes()},
          {"host_memory_capacity_bytes", o.host_capacity_bytes},
          {"nvme_bytes_per_server", o.nvme_bytes()},
          {"parameter_bytes_per_server", o.parameter_held_bytes},
          {"parameter_pcie_bytes_per_gpu", o.parameter_pcie_bytes},
          {"activations", o.activations},
          {"activation_layers", o.activation_layers},
          {"activation_bytes_per_server", o.activation_held_bytes},
          {"activation_pcie_bytes_per_gpu", o.activation_pcie_bytes},
          {"nvme_capacity_bytes", o.nvme_capacity_bytes},
          {"pcie_bytes_per_gpu", o.cost.pcie_bytes},
          {"host_traffic_bytes_per_gpu", o.cost.host_traffic_bytes},
          {"nvme_traffic_bytes_per_gpu", o.cost.nvme_traffic_bytes},
          {"step_s", o.cost.seconds}};
}

void write_offload_line(std::ostream& out, const strategies::OffloadUse& o) {
  char buf[512];
  if (!o.parameters.empty()) {
    const bool nvme = o.parameters == "nvme";
    std::snprintf(buf, sizeof buf,
                  "  offload            parameters on %s: %s of %s per server%s; per GPU a step %s over PCIe "
                  "(its shard before every ZeRO-3 gather)\n",
                  o.parameters.c_str(), units::format_bytes(o.parameter_held_bytes).c_str(),
                  units::format_bytes(nvme ? o.nvme_capacity_bytes : o.host_capacity_bytes).c_str(),
                  o.fits() ? "" : " (DOES NOT FIT)", units::format_bytes(o.parameter_pcie_bytes).c_str());
    out << buf;
  }
  if (!o.activations.empty()) {
    const std::string what = o.activation_layers > 0
                                 ? "the first " + std::to_string(o.activation_layers) + " layers' of each forward"
                                 : "each forward's";
    std::snprintf(buf, sizeof buf,
                  "  offload            activations on %s: at most %s of %s per server%s; per GPU a step %s over "
                  "PCIe (%s, down and back before its backward)\n",
                  o.activations.c_str(), units::format_bytes(o.activation_held_bytes).c_str(),
                  units::format_bytes(o.host_capacity_bytes).c_str(), o.fits() ? "" : " (DOES NOT FIT)",
                  units::format_bytes(o.activation_pcie_bytes).c_str(), what.c_str());
    out << buf;
  }
  if (o.tier.empty()) return;
  std::snprintf(buf, sizeof buf,
                "  offload            optimizer on %s: %s %s of %s per server%s; per GPU a step %s over PCIe, "
                "%s of host memory traffic%s, %s\n",
                o.tier.c_str(), o.tier == "nvme" ? "NVMe" : "host memory",
                units::format_bytes(o.tier == "nvme" ? o.cost.nvme_held_bytes : o.cost.host_held_bytes).c_str(),
                units::format_bytes(o.tier == "nvme" ? o.nvme_capacity_bytes : o.host_capacity_bytes).c_str(),
                o.fits() ? "" : " (DOES NOT FIT)", units::format_bytes(o.cost.pcie_bytes).c_str(),
                units::format_bytes(o.cost.host_traffic_bytes).c_str(),
                o.tier == "nvme" ? (", " + units::format_bytes(o.cost.nvme_traffic_bytes) + " of NVMe").c_str() : "",
                units::format_time(o.cost.seconds).c_str());
  out << buf;
}
}  // namespace

namespace {
// Per simulated device: its times, bubble, memory at peak and streams.
nlohmann::ordered_json simulated_json(const strategies::Report& r) {
  nlohmann::ordered_json sims = nlohmann::ordered_json::array();
  for (const auto& s : r.simulated) {
    nlohmann::ordered_json parts, streams = nlohmann::ordered_json::object();
    for (const auto& part : s.memory_at_peak) parts[part.name] = part.bytes;
    for (const auto& c : s.communication) streams[c.stream] = {{"busy_s", c.busy_s}, {"hidden_s", c.hidden_s}};
    sims.push_back({{"name", s.name},
                    {"stage", s.stage},
                    {"gpus", s.gpus},
                    {"compute_s", s.compute_s},
                    {"communication_s", s.communication_s},
                    {"exposed_communication_s", s.exposed_communication_s},
                    {"idle_s", s.idle_s},
                    {"compute_slowed_s", s.compute_slowed_s},
                    {"bubble_fraction", s.bubble_fraction},
                    {"peak_memory_bytes", s.peak_memory_bytes},
                    {"memory_at_peak", parts},
                    {"communication", streams}});
  }
  return sims;
}
}  // namespace

void write_json(std::ostream& out, const strategies::Report& r, const strategies::FaultReport* faults) {
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
  if (r.validation.has_band || !r.validation.outside.empty()) j["validation"] = validation_json(r.validation);
  j["tflops_per_gpu"] = unless_stopped(r.tflops_per_gpu);
  j["hardware_tflops_per_gpu"] = unless_stopped(r.hardware_tflops_per_gpu);
  j["mfu"] = unless_stopped(r.mfu);
  j["hfu"] = unless_stopped(r.hfu);
  j["model_flops"] = r.model_flops;
  if (!r.fp8_recipe.empty()) j["fp8_recipe"] = r.fp8_recipe;
  if (!r.calibrations.empty()) j["calibrations"] = calibrations_json(r.calibrations);
  j["bubble_fraction"] = r.bubble_fraction;
  auto& comm = j["communication"] = nlohmann::ordered_json::object();
  for (const auto& c : r.communication) comm[c.stream] = {{"busy_s", c.busy_s}, {"hidden_s", c.hidden_s}};
  j["compute_slowed_s"] = r.compute_slowed_s;
  j["host_overhead_s"] = r.host_overhead_s;
  j["oom"] = r.oom;
  j["memory"] = {{"fullest_gpu", r.fullest_gpu},
                 {"peak_bytes", r.peak_memory_bytes},
                 {"capacity_bytes", r.capacity_bytes},
                 {"shortfall_bytes", r.shortfall_bytes}};
  if (r.offload.any()) j["offload"] = offload_json(r.offload);
  if (!r.token_slices.empty())
    j["token_slices"] = {{"tokens", r.token_slices}, {"chosen_by", r.token_slices_chosen ? "terapipe-dp" : "plan"}};
  j["busiest_link"] = link_json(r.busiest_link);
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const auto& l : r.links) links.push_back(link_json(l));
  j["simulated_devices"] = simulated_json(r);
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
  if (faults) j["faults"] = nlohmann::ordered_json::parse(fault_json(*faults).dump());
  out << json_text(j, 2) << "\n";
}

std::string communication_line(const std::vector<strategies::StreamCommReport>& streams) {
  std::string out;
  for (const auto& c : streams) {
    if (c.busy_s <= 0) continue;
    std::string name = c.stream;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "-comm") == 0) name.resize(name.size() - 5);
    char share[48];
    std::snprintf(share, sizeof share, " (%.0f%% under compute)", 100 * c.hidden_s / c.busy_s);
    out += (out.empty() ? "" : ", ") + name + " " + units::format_time(c.busy_s) + share;
  }
  return out;
}

std::vector<std::string> calibration_lines(const strategies::Report& r) {
  std::vector<std::string> lines;
  char buf[160];
  for (const strategies::CalibrationNote& c : r.calibrations) {
    std::string line = c.gpu + ": ";
    for (size_t i = 0; i < c.files.size(); ++i) line += (i ? ", " : "") + c.files[i];
    if (c.step_efficiency != 1 || c.attention_step_efficiency != 1) {
      std::snprintf(buf, sizeof buf, " (kernels at %.1f%% of their speed alone", 100 * c.step_efficiency);
      line += buf;
      if (c.attention_step_efficiency != 1) {
        std::snprintf(buf, sizeof buf, ", attention kernels %.2fx that", c.attention_step_efficiency);
        line += buf;
      }
      line += ")";
    }
    lines.push_back(line);
  }
  if (r.calibrations.empty() && r.validation.has_band && r.validation.steps == "none")
    lines.push_back(
        "none (kernels at their speed alone): --calibration NAME centres the band, NAME a framework's (dejavu list) "
        "or typical");
  return lines;
}

namespace {
// calibration_lines, one a line.
void write_calibration_lines(std::ostream& out, const strategies::Report& r) {
  for (const std::string& line : calibration_lines(r)) out << "  calibration        " << line << "\n";
}

// What communication took and what it took from compute, and the compute time beside the
// kernels a step calibration adds (its host overhead).
void write_communication_lines(std::ostream& out, const strategies::Report& r) {
  if (const std::string line = communication_line(r.communication); !line.empty())
    out << "  communication      " << line << "\n";
  if (r.compute_slowed_s > 0)
    out << "  compute slowed     " << units::format_time(r.compute_slowed_s)
        << " a GPU: kernels beside communication kernels, which hold SMs (plan comm_sms), or on a straggler\n";
  if (r.host_overhead_s > 0)
    out << "  host overhead      " << units::format_time(r.host_overhead_s)
        << " an iteration after the optimizer step (the step calibration's step_overhead)\n";
}
}  // namespace

void write_summary(std::ostream& out, const strategies::Report& r) {
  char buf[256];
  out << "dejavu: " << r.workload << " on " << r.platform << ", plan " << r.plan << " (" << r.engine << " engine)\n";
  if (r.stopped) {
    std::snprintf(buf, sizeof buf, "  iteration time     none: the iteration stopped at %s (%s)\n",
                  units::format_time(r.stopped_at_s).c_str(), r.stop_cause.c_str());
    out << buf;
  } else {
    std::snprintf(buf, sizeof buf, "  iteration time     %s\n", units::format_time(r.iteration_time_s).c_str());
    out << buf;
    write_validation_lines(out, r.validation);
    if (!r.fp8_recipe.empty()) out << "  fp8 recipe         " << r.fp8_recipe << "\n";
    write_calibration_lines(out, r);
    std::snprintf(buf, sizeof buf, "  model TFLOP/s/GPU  %.1f   MFU %.1f%%   (hardware %.1f TFLOP/s/GPU, HFU %.1f%%)\n",
                  r.tflops_per_gpu, 100 * r.mfu, r.hardware_tflops_per_gpu, 100 * r.hfu);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "  pipeline bubble    %.1f%%\n", 100 * r.bubble_fraction);
  out << buf;
  write_communication_lines(out, r);
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
  if (!r.token_slices.empty()) {
    std::string lengths;
    for (int l : r.token_slices) lengths += (lengths.empty() ? "" : ", ") + std::to_string(l);
    out << "  token slices       " << r.token_slices.size() << " per sequence (" << lengths << " tokens)"
        << (r.token_slices_chosen ? ", chosen by TeraPipe's dynamic program" : ", as the plan gives") << "\n";
  }
  std::snprintf(buf, sizeof buf, "  simulated          %d GPUs as %zu devices, %d tasks\n", r.gpus, r.simulated.size(),
                r.tasks);
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
  if (r.offload.any()) write_offload_line(out, r.offload);
  std::snprintf(buf, sizeof buf, "  busiest link       %s (%s): %s, %.1f%% busy\n", r.busiest_link.name.c_str(),
                r.busiest_link.direction.c_str(), units::format_bytes(r.busiest_link.bytes).c_str(),
                100 * r.busiest_link.utilization);
  out << buf;
  if (r.busiest_link.in_flight_s >= 0) {
    std::snprintf(buf, sizeof buf, "                     flows in flight %s of the step, at most %d at once\n",
                  units::format_time(r.busiest_link.in_flight_s).c_str(), r.busiest_link.peak_flows);
    out << buf;
  } else if (r.busiest_link.demand > 1) {
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
    std::snprintf(buf, sizeof buf, "  %-16s (%d)  %5d   %-11s %-14s %-11s %-7s  %s\n", s.name.c_str(), s.stage, s.gpus,
                  units::format_time(s.compute_s).c_str(), units::format_time(s.exposed_communication_s).c_str(),
                  units::format_time(s.idle_s).c_str(), bubble, units::format_bytes(s.peak_memory_bytes).c_str());
    out << buf;
  }
}

void write_fault_summary(std::ostream& out, const strategies::FaultReport& f) {
  char buf[512];
  out << "faults (" << f.scenario << "):\n";
  if (f.stopped) {
    std::snprintf(buf, sizeof buf,
                  "  stopped at       %s: %s\n  done             %zu of %zu tasks; lost %.4g GPU-seconds of work "
                  "(the iteration must run again)\n",
                  units::format_time(f.stopped_at_s).c_str(), f.cause.c_str(), f.tasks_done, f.tasks_total,
                  f.lost_gpu_seconds);
  } else {
    std::snprintf(buf, sizeof buf, "  iteration        %s against %s without faults: %.3fx\n",
                  units::format_time(f.iteration_s).c_str(), units::format_time(f.baseline_s).c_str(), f.slowdown);
  }
  out << buf;
  std::snprintf(buf, sizeof buf, "  delayed tasks    %zu (%zu of them slowed themselves)\n", f.delayed_tasks,
                f.slowed_tasks);
  out << buf;
  for (const DelayedTask& d : f.most_delayed) {
    std::snprintf(buf, sizeof buf, "    +%-10s %-16s %s%s\n", units::format_time(d.delay_s).c_str(), d.device.c_str(),
                  d.label.c_str(), d.slowed ? "  (slowed)" : "");
    out << buf;
  }
  for (const ByzantineWorker& w : f.byzantine)
    out << "  byzantine        GPU " << w.gpu << " sends corrupted gradients (" << w.mode
        << "); recorded for convergence\n";
}

}  // namespace dejavu::report
