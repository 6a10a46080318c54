// The SimGrid engine's speed (SimGrid engine issue). Targets: at least 300K simulated
// activities per second of wall time; one GPT-3 175B iteration on 1024 GPUs at `flow`
// fidelity in under 30 s. Every run forks (SimGrid runs once per process); the fork costs
// about a millisecond. Counters: activities (SimGrid activities and timers), activities
// per second, and the child's peak resident memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "sim/collective.h"
#include "sim/simgrid_engine.h"
#include "bench/bench_common.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace {

using namespace dejavu;

using bench::register_all;
using bench::src;

double children_peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss / 1024.0;
}

// A ring all-reduce of 1 GiB over n GPUs (8 per DGX A100 server) at step fidelity:
// 2(n-1) rounds of n flows.
void BM_RingAllReduce1GiB_Step(benchmark::State& state) {
  register_all();
  const int n = static_cast<int>(state.range(0));
  const auto cluster = platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: " + std::to_string(n / 8) +
          "\n    gpu: A100-SXM-80GB\n    gpus_per_server: 8\n"
          "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
          "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "bench.yaml"));
  std::vector<int> ring;
  for (const auto& g : cluster.gpus) ring.push_back(g.host);
  sim::TaskGraph g;
  const sim::DeviceId d = g.add_device("ring", ring);
  g.add_collective(g.add_participants({d}), g.stream("comm"), sim::CollectiveOp::AllReduce,
                   g.add_comm_set(sim::CommSet{{ring}}), 1 << 30, g.label("all-reduce"), -1);
  g.finalize();
  sim::EngineOptions o;
  o.fidelity = "step";
  uint64_t activities = 0;
  for (auto _ : state) activities += sim::SimGridEngine().run(g, cluster.network, o).activities;
  state.counters["activities"] = static_cast<double>(activities) / state.iterations();
  state.counters["activities_per_s"] = benchmark::Counter(static_cast<double>(activities), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = children_peak_rss_mib();
}
BENCHMARK(BM_RingAllReduce1GiB_Step)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Gpt3_175B_1024Gpus_Flow(benchmark::State& state) {
  register_all();
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-128x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-175b.yaml"));
  const auto plan = strategies::load_plan_file(src("strategies/presets/tp8-pp16-dp8-1f1b.yaml"));
  const auto job = strategies::lower(model, cluster, plan);
  sim::EngineOptions o;
  o.fidelity = "flow";
  uint64_t activities = 0;
  for (auto _ : state) activities += sim::SimGridEngine().run(job.graph, cluster.network, o).activities;
  state.counters["activities"] = static_cast<double>(activities) / state.iterations();
  state.counters["activities_per_s"] = benchmark::Counter(static_cast<double>(activities), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = children_peak_rss_mib();
}
BENCHMARK(BM_Gpt3_175B_1024Gpus_Flow)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
