// A cluster's week (issue 24): the 1,000 jobs of strategies/presets/cluster/week.csv
// (`dejavu cluster-trace --jobs 1000 --days 7 --gpus 1024 --load 0.8 --seed 1`) on 1,024
// A100s under 2:1 oversubscribed leaves (platforms/presets/dgx-a100-128x8-2to1.yaml), with
// random GPU failures at a 50,000-hour MTBF recovered by checkpoint/restart
// (strategies/presets/faults/mtbf.yaml), once per placement policy. Each run is a child on
// one core: its wall time and peak memory are its own. Target: under 5 minutes and 2 GiB
// each.
//
//   build/bench/cluster_benchmark
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench_common.h"
#include "strategies/cluster/scheduler.h"

namespace {

using namespace dejavu;

void BM_Week1000Jobs1024Gpus(benchmark::State& state, const std::string& policy) {
  bench::Measured m;
  for (auto _ : state) {
    m = bench::in_child([&] {
      bench::register_all();
      const auto cluster = platforms::load_cluster_file(bench::src("platforms/presets/dgx-a100-128x8-2to1.yaml"));
      const auto trace =
          strategies::cluster::load_trace_file(bench::src("strategies/presets/cluster/week.csv"), cluster);
      const auto faults =
          strategies::load_fault_scenario_file(bench::src("strategies/presets/faults/mtbf.yaml"), cluster);
      strategies::cluster::ScheduleOptions o;
      o.policy = policy;
      o.faults = &faults;
      const auto r = strategies::cluster::run_schedule(trace, cluster, o);
      return std::make_pair(r.makespan_s, static_cast<double>(r.shared_runs));
    });
    state.SetIterationTime(m.wall_s);
  }
  state.counters["peak_MiB"] = m.peak_mib;
  state.counters["makespan_days"] = m.answer / 86400;
  state.counters["shared_runs"] = m.activities;
}
BENCHMARK_CAPTURE(BM_Week1000Jobs1024Gpus, first_fit, std::string("first-fit"))
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Week1000Jobs1024Gpus, topology_aware, std::string("topology-aware"))
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Week1000Jobs1024Gpus, random, std::string("random"))
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
