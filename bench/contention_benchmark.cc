// The contention suite (tests/fixtures/contention/cases.txt) on the analytic engine: each
// case's wall time end to end (load, lower, run, report), and as counters its iteration time
// shared (analytic_s), on SimGrid flow (simgrid_s, run once) and priced alone (alone_s),
// with the analytic engine's error against SimGrid in percent. The closing table of
// issue 21 comes from `build/bench/contention_benchmark`.
#include <benchmark/benchmark.h>

#include <cmath>

#include "bench/bench_common.h"
#include "bench/contention_suite.h"

namespace {

using namespace dejavu;

void run_case(benchmark::State& state, const bench::ContentionCase& c) {
  double shared = 0;
  for (auto _ : state) {
    shared = bench::contention_case_s(c, "analytic");
    benchmark::DoNotOptimize(shared);
  }
  const double simgrid = bench::contention_case_s(c, "simgrid");
  state.counters["analytic_s"] = shared;
  state.counters["simgrid_s"] = simgrid;
  state.counters["alone_s"] = bench::contention_case_s(c, "analytic-no-contention");
  state.counters["error_pct"] = 100 * std::abs(shared - simgrid) / simgrid;
}

}  // namespace

int main(int argc, char** argv) {
  bench::register_all();
  for (const bench::ContentionCase& c : bench::contention_cases(DEJAVU_SOURCE_DIR))
    benchmark::RegisterBenchmark(("BM_Contention/" + c.name).c_str(), run_case, c)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
