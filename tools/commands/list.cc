// `dejavu list`: every registry (GPU types, engines, algorithms, schedules, searchers,
// workload kinds, sync topologies, compressions, recovery policies, update rules,
// aggregators, commands), the shipped step calibrations and the shipped presets.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "platforms/calibration.h"
#include "platforms/cluster.h"
#include "platforms/nic_protocol.h"
#include "sim/collective.h"
#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/data_parallel.h"
#include "strategies/recovery/recovery_policy.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/searcher.h"
#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/rules/update_rule.h"
#include "strategies/cluster/placement.h"
#include "tools/commands/command.h"
#include "tools/platform_input.h"
#include "workloads/generator.h"

#ifndef DEJAVU_SOURCE_DIR
#define DEJAVU_SOURCE_DIR "."
#endif

namespace dejavu::tools {

namespace {

void list_presets(const std::string& folder) {
  const std::filesystem::path dir = std::filesystem::path(DEJAVU_SOURCE_DIR) / folder / "presets";
  std::set<std::string> names;  // sorted: the listing is deterministic
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml")
      names.insert((std::filesystem::path(folder) / std::filesystem::relative(e.path(), dir.parent_path())).string());
  for (const auto& n : names) std::cout << "  " << n << "\n";
}

template <class R>
void list_registry(const char* title, const R& registry) {
  std::cout << title << ":\n";
  for (const auto& [name, entry] : registry.entries())
    std::cout << "  " << name << std::string(name.size() < 14 ? 14 - name.size() : 1, ' ') << entry.description << "\n";
}

// Each framework's shipped step calibrations, by the GPU types they were fitted on.
void list_step_calibrations() {
  std::cout << "step calibrations (--calibration NAME: its file for each of the platform's GPU types):\n";
  std::map<std::string, std::string> gpus;  // sorted by framework
  for (const ShippedStepCalibration& s : shipped_step_calibrations())
    gpus[s.framework] += (gpus[s.framework].empty() ? "" : ", ") +
                         (s.gpu == platforms::kAnyGpu ? "every GPU type (fitted across frameworks)" : s.gpu);
  for (const auto& [name, on] : gpus)
    std::cout << "  " << name << std::string(name.size() < 26 ? 26 - name.size() : 1, ' ') << on << "\n";
}

std::string tflops(double flops) {
  if (flops <= 0) return "-";
  std::ostringstream s;
  s << flops / 1e12;
  return s.str();
}

// A GPU type: its dense peaks, memory and GPU link on one line, then where the figures come
// from and what its kernel speeds were fitted to (or that nothing was measured).
void print_gpu(const platforms::GpuSpec& g) {
  std::cout << "  " << g.name << std::string(16 - std::min<size_t>(15, g.name.size()), ' ') << tflops(g.peak_fp32)
            << " / " << tflops(g.peak_tf32) << " / " << tflops(g.peak_fp16) << " / " << tflops(g.peak_bf16) << " / "
            << tflops(g.peak_fp8) << " / " << tflops(g.peak_fp4) << "; " << g.memory_bytes / (1 << 30) << " GiB at "
            << units::format_rate(g.memory_bandwidth_Bps) << "; " << g.gpu_link;
  if (g.gpu_link_bandwidth_Bps > 0) std::cout << " " << units::format_rate(g.gpu_link_bandwidth_Bps);
  std::cout << "\n"
            << std::string(18, ' ') << "figures: " << g.source << "\n"
            << std::string(18, ' ')
            << (g.has_measurements() ? "kernels measured: " + g.measured_from
                                     : std::string("no public kernel measurement: default efficiencies, unvalidated"))
            << "\n";
}

class ListCommand : public Command {
 public:
  void add_options(CLI::App&) override {}

  int run() override {
    std::cout << "GPU types (dense TFLOPS fp32 / tf32 / fp16 / bf16 / fp8 / fp4; memory; GPU-to-GPU link per "
                 "direction):\n";
    for (const auto& g : platforms::gpu_catalog()) print_gpu(g);
    std::cout << "NIC protocols (nic.protocol; headers a packet, data at a 4096-byte payload):\n";
    for (const std::string& name : platforms::nic_protocols()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %-16s%.0f bytes, %.2f%%\n", name.c_str(),
                    platforms::packet_overhead_bytes(name), 100 * platforms::framing_efficiency(name, 4096));
      std::cout << buf;
    }
    list_step_calibrations();
    list_registry("engines", sim::engines());
    list_registry("collective algorithms", sim::collective_algorithms());
    list_registry("pipeline schedules", strategies::schedules());
    list_registry("data-parallel sync topologies", strategies::sync_topologies());
    list_registry("gradient compressions", strategies::compressors());
    list_registry("recovery policies", strategies::recovery_policies());
    list_registry("placement policies (cluster)", strategies::cluster::placement_policies());
    list_registry("update rules (converge)", strategies::convergence::update_rules());
    list_registry("aggregators (converge)", strategies::convergence::aggregators());
    list_registry("plan searchers", strategies::search::searchers());
    list_registry("workload kinds", workloads::generators());
    list_registry("commands", commands());
    std::cout << "platform presets:\n";
    list_presets("platforms");
    std::cout << "workload presets:\n";
    list_presets("workloads");
    std::cout << "plan presets:\n";
    list_presets("strategies");
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace dejavu::tools
