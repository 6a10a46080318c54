// Times `simulate` on the analytic engine. Target (foundation issue): GPT-3 175B on 1024
// GPUs (tp 8, pp 16, dp 8, global batch 1536, microbatch 1, 1F1B) in under 1 s of wall
// time on one core and under 1 GiB of memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "sim/engine.h"
#include "bench/bench_common.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace {

using namespace dejavu;

using bench::register_all;
using bench::src;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // kilobytes on Linux
}

void run_preset(benchmark::State& state, const char* platform, const char* workload, const char* plan,
                const char* schedule = nullptr) {
  register_all();
  for (auto _ : state) {
    // Everything a user's `dejavu simulate` does but print: load, lower, run, report.
    const auto cluster = platforms::load_cluster_file(src(platform));
    const auto model = workloads::load_workload_file(src(workload));
    auto p = strategies::load_plan_file(src(plan));
    if (schedule) p.schedule = schedule;
    const auto s = strategies::simulate(model, cluster, p);
    benchmark::DoNotOptimize(s.report.iteration_time_s);
    state.counters["tasks"] = static_cast<double>(s.job.graph.size());
    state.counters["iteration_s"] = s.report.iteration_time_s;
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

void BM_Gpt3_175B_1024Gpus_1F1B(benchmark::State& state) {
  run_preset(state, "platforms/presets/dgx-a100-128x8.yaml", "workloads/presets/gpt3-175b.yaml",
             "strategies/presets/tp8-pp16-dp8-1f1b.yaml");
}
BENCHMARK(BM_Gpt3_175B_1024Gpus_1F1B)->Unit(benchmark::kMillisecond);

// Chimera: two pipelines' worth of tasks and the merged order; PipeDream-2BW: the steady
// state simulates m and 2m microbatches.
void BM_Gpt3_175B_1024Gpus_Chimera(benchmark::State& state) {
  run_preset(state, "platforms/presets/dgx-a100-128x8.yaml", "workloads/presets/gpt3-175b.yaml",
             "strategies/presets/tp8-pp16-dp8-1f1b.yaml", "chimera");
}
BENCHMARK(BM_Gpt3_175B_1024Gpus_Chimera)->Unit(benchmark::kMillisecond);

void BM_Gpt3_175B_1024Gpus_PipeDream2BW(benchmark::State& state) {
  run_preset(state, "platforms/presets/dgx-a100-128x8.yaml", "workloads/presets/gpt3-175b.yaml",
             "strategies/presets/tp8-pp16-dp8-1f1b.yaml", "pipedream-2bw");
}
BENCHMARK(BM_Gpt3_175B_1024Gpus_PipeDream2BW)->Unit(benchmark::kMillisecond);

void BM_Gpt3_13B_32Gpus_1F1B(benchmark::State& state) {
  run_preset(state, "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
             "strategies/presets/tp4-pp2-dp4-1f1b.yaml");
}
BENCHMARK(BM_Gpt3_13B_32Gpus_1F1B)->Unit(benchmark::kMillisecond);

// The engine alone, on the 175B graph lowered once: the inner loop of every search. Arg 1:
// links shared among transfers in flight (the default engine); 0: each priced alone.
void BM_AnalyticEngineOnly_175B(benchmark::State& state) {
  register_all();
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-128x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-175b.yaml"));
  const auto plan = strategies::load_plan_file(src("strategies/presets/tp8-pp16-dp8-1f1b.yaml"));
  const auto job = strategies::lower(model, cluster, plan);
  const auto engine = sim::engines().make(state.range(0) ? "analytic" : "analytic-no-contention");
  for (auto _ : state) {
    auto r = engine->run(job.graph, cluster.network, {});
    benchmark::DoNotOptimize(r.makespan_s);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(job.graph.size()));
}
BENCHMARK(BM_AnalyticEngineOnly_175B)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
