// Search speed targets (plan search issue): the evaluator scores at least 10,000 plans per
// second for GPT-3 1.3B on 64 GPUs; grid over 1024 GPUs for GPT-3 175B finishes in under 10 s.
#include <benchmark/benchmark.h>

#include "bench/bench_common.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"
#include "workloads/generator.h"

namespace {

using namespace dejavu;
using bench::register_all;
using bench::src;

// Every plan of the grid space scored by a fresh evaluator (no cache carried over).
void BM_EvaluatorPlansPerSecond_Gpt3_1_3B_64Gpus(benchmark::State& state) {
  register_all();
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-8x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const strategies::search::Problem problem{&model, &cluster, 512};
  const auto plans = strategies::search::enumerate(problem, strategies::search::default_space(problem));
  long simulated = 0;
  for (auto _ : state) {
    strategies::search::SimulationEvaluator evaluator(problem);
    for (const auto& p : plans) benchmark::DoNotOptimize(evaluator.evaluate(p).iteration_time_s);
    simulated = evaluator.simulations();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<long>(plans.size()));
  state.counters["plans"] = static_cast<double>(plans.size());
  state.counters["simulated"] = static_cast<double>(simulated);
}
BENCHMARK(BM_EvaluatorPlansPerSecond_Gpt3_1_3B_64Gpus)->Unit(benchmark::kMillisecond);

void BM_GridSearch_Gpt3_175B_1024Gpus(benchmark::State& state) {
  register_all();
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-128x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-175b.yaml"));
  const strategies::search::Problem problem{&model, &cluster, 1536};
  for (auto _ : state) {
    strategies::search::SimulationEvaluator evaluator(problem);
    const auto r = strategies::search::GridSearcher().search(problem, evaluator, {});
    state.counters["evaluations"] = static_cast<double>(r.evaluations);
    state.counters["best_s"] = r.best() ? r.best()->score.iteration_time_s : 0;
  }
}
BENCHMARK(BM_GridSearch_Gpt3_175B_1024Gpus)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
