// Scale: one Llama-3 405B job (tp 8, pp 16, 1F1B, sequence parallel, ZeRO-1, microbatch 1 of
// 8192 tokens, 16 microbatches a replica: 16M tokens a batch at 16,384 GPUs) on clusters of
// DGX H100 servers (400 Gb/s NIC per GPU, a leaf switch per two servers, non-blocking spine:
// platforms/presets/h100-16k.yaml at 16,384 GPUs)
// growing from 1,024 to 131,072 GPUs, dp growing with them, on both engines (SimGrid: flow
// fidelity). Each run is a child process, so its time and peak memory are its own:
// load, lower, run, report, as `dejavu simulate` does. After the runs, the growth exponent
// of time in GPU count between 4,096 and 65,536 GPUs (issue 22: at most 1.2).
//
// Also: a 1 GiB all-reduce over the 1,024 GPUs of 128 DGX A100 servers at step fidelity
// (`--collectives step`: alike steps past 32 played as their period, sim/step_periods.h),
// and its activities per second.
//
//   build/bench/scale_benchmark                       # all (about 4 minutes on 2 cores)
//   build/bench/scale_benchmark --benchmark_filter=analytic
#include <benchmark/benchmark.h>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "bench/bench_common.h"
#include "platforms/cluster.h"
#include "sim/collective.h"
#include "sim/simgrid_engine.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace {

using namespace dejavu;

using bench::in_child;
using bench::Measured;

std::string h100_cluster(int gpus) {
  return "name: h100-" + std::to_string(gpus) +
         "\n"
         "servers:\n"
         "  - count: " +
         std::to_string(gpus / 8) +
         "\n"
         "    gpu: H100-SXM-80GB\n"
         "    gpus_per_server: 8\n"
         "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
         "    step_latency: 3.3 us\n"
         "    nic: {bandwidth: 400 Gbps, latency: 2 us, per_gpu: true}\n"
         "network: {kind: fat-tree, latency: 2 us, oversubscription: 1, servers_per_leaf: 2}\n";
}

std::string llama_plan(int gpus) {
  const int dp = gpus / 128;
  return "tp: 8\npp: 16\ndp: " + std::to_string(dp) +
         "\nmicro_batch_size: 1\nglobal_batch_size: " + std::to_string(16 * dp) +
         "\nschedule: 1f1b\nrecompute: none\nzero: 1\nsequence_parallel: true\n";
}

std::map<std::string, std::map<int, double>>& seconds() {  // engine -> GPUs -> wall s
  static std::map<std::string, std::map<int, double>> s;
  return s;
}

void BM_Llama3_405B(benchmark::State& state, const std::string& engine) {
  const int gpus = static_cast<int>(state.range(0));
  Measured m;
  for (auto _ : state) {
    m = in_child([&] {
      bench::register_all();
      const auto cluster = platforms::load_cluster(ConfigNode::load_string(h100_cluster(gpus), "cluster.yaml"));
      const auto model = workloads::load_workload_file(bench::src("workloads/presets/llama3-405b.yaml"));
      const auto plan = strategies::load_plan(ConfigNode::load_string(llama_plan(gpus), "plan.yaml"));
      const auto s = strategies::simulate(model, cluster, plan, engine);
      return std::make_pair(s.report.iteration_time_s, static_cast<double>(s.result.activities));
    });
    state.SetIterationTime(m.wall_s);
  }
  seconds()[engine][gpus] = m.wall_s;
  state.counters["GPUs"] = gpus;
  state.counters["peak_MiB"] = m.peak_mib;
  state.counters["iteration_s"] = m.answer;
}
// 1,024 to 65,536 GPUs by fours, then 131,072; one run each, timed by the child.
void llama_sizes(benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(4)->Range(1024, 65536)->Arg(131072)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
}
BENCHMARK_CAPTURE(BM_Llama3_405B, analytic, std::string("analytic"))->Apply(llama_sizes);
BENCHMARK_CAPTURE(BM_Llama3_405B, simgrid, std::string("simgrid"))->Apply(llama_sizes);

void BM_AllReduce1GiB_1024Gpus_StepLevel(benchmark::State& state) {
  Measured m;
  for (auto _ : state) {
    m = in_child([&] {
      bench::register_all();
      const auto cluster = platforms::load_cluster_file(bench::src("platforms/presets/dgx-a100-128x8.yaml"));
      sim::TaskGraph g;
      std::vector<int> hosts;
      for (const auto& gpu : cluster.gpus) hosts.push_back(gpu.host);
      const sim::DeviceId d = g.add_device("all", hosts);
      const sim::CommSetId set = g.add_comm_set(sim::CommSet{{hosts}});
      g.add_collective(g.add_participants({d}), g.stream("comm"), sim::CollectiveOp::AllReduce, set, 1073741824.0,
                       g.label("all_reduce"), -1);
      g.finalize();
      sim::EngineOptions o;
      o.fidelity = "step";
      const sim::Result r = sim::SimGridEngine().run(g, cluster.network, o);
      return std::make_pair(r.makespan_s, static_cast<double>(r.activities));
    });
    state.SetIterationTime(m.wall_s);
  }
  state.counters["peak_MiB"] = m.peak_mib;
  state.counters["simulated_s"] = m.answer;
  state.counters["activities"] = m.activities;
  state.counters["activities_per_s"] = m.activities / m.wall_s;
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus_StepLevel)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

void print_growth() {
  for (const auto& [engine, by_gpus] : seconds()) {
    if (!by_gpus.count(4096) || !by_gpus.count(65536)) continue;
    const double exponent = std::log(by_gpus.at(65536) / by_gpus.at(4096)) / std::log(65536.0 / 4096);
    std::printf("%-9s growth exponent of time in GPUs, 4,096 to 65,536: %.2f\n", engine.c_str(), exponent);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  print_growth();
  benchmark::Shutdown();
  return 0;
}
