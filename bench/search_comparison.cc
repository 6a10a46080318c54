// Every searcher on the same problems, the same cost model: each one's best plan relative to
// the best any found, its wall time and evaluations. Prints the Markdown table that
// docs/SEARCH.md holds:  build/bench/search_comparison > table.md
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "platforms/gpu_order.h"
#include "strategies/search/gpu_orders.h"
#include "strategies/search/partition.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"
#include "sim/units.h"
#include "workloads/generator.h"

namespace {

using namespace dejavu;
namespace search = strategies::search;

struct Case {
  const char *label, *platform, *workload;
  int batch;
  std::vector<std::string> file_order = {};  // the servers listed in this order of GPU types
};

}  // namespace

int main() {
  bench::register_all();
  const std::vector<Case> cases = {
      {"GPT-3 1.3B, 8 A100, batch 32", "dgx-a100-1x8", "gpt3-1.3b", 32},
      {"GPT-3 1.3B, 64 A100, batch 512", "dgx-a100-8x8", "gpt3-1.3b", 512},
      {"GPT-3 13B, 32 A100, batch 128", "dgx-a100-4x8", "gpt3-13b", 128},
      {"Llama-3 70B, 64 H100 (rail), batch 256", "h100-rail-8x8", "llama3-70b", 256},
      {"GPT-3 175B, 1024 A100, batch 1536", "dgx-a100-128x8", "gpt3-175b", 1536},
      {"GPT-3 13B, 8 A100 + 8 H100 (mixed), batch 128", "mixed-a100-h100-2x8", "gpt3-13b", 128},
      {"Llama-3 8B at 64K tokens, 8 H100, batch 8", "dgx-h100-1x8", "llama3-8b-64k", 8},
      {"DLRM (Criteo), 8 A100, batch 16384", "dgx-a100-1x8", "dlrm-criteo", 16384},
      {"Mixtral 8x7B (MoE), 32 A100, batch 128", "dgx-a100-4x8", "mixtral-8x7b", 128},
      {"GPT-3 13B fp16, 8 A100 + 8 V100 listed A100-first, batch 128", "mixed-a100-v100-2x8", "gpt3-13b-fp16", 128},
      {"GPT-3 13B fp16, 8 A100 + 8 V100 listed V100-first, batch 128",
       "mixed-a100-v100-2x8",
       "gpt3-13b-fp16",
       128,
       {"V100-SXM2-32GB", "A100-SXM-80GB"}},
  };
  std::printf("| problem | searcher | best plan | iteration | vs best | wall | evaluations |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const auto cluster = platforms::ordered_by_gpu(
        platforms::load_cluster_file(bench::src(std::string("platforms/presets/") + c.platform + ".yaml")),
        c.file_order);
    const auto model =
        workloads::load_workload_file(bench::src(std::string("workloads/presets/") + c.workload + ".yaml"));
    const search::Problem problem{&model, &cluster, c.batch};
    std::vector<search::SearchResult> results;
    double best = 0;
    const search::GpuOrderProblems orders(problem);  // a mixed cluster: every order of its GPU types
    for (const std::string& name : search::searchers().names()) {
      search::SearchOptions options;
      options.seed = 1;
      results.push_back(orders.search(*search::searchers().make(name), options, 0));
      if (results.back().best() && (best == 0 || results.back().best()->score.iteration_time_s < best))
        best = results.back().best()->score.iteration_time_s;
    }
    for (const auto& r : results) {
      if (!r.best()) {
        std::printf("| %s | %s | none fits | | | %s | %ld |\n", c.label, r.algorithm.c_str(),
                    units::format_time(r.wall_s).c_str(), r.evaluations);
        continue;
      }
      std::printf(
          "| %s | %s | %s | %s | %+.2f%% | %s | %ld |\n", c.label, r.algorithm.c_str(),
          search::describe(r.best()->plan).c_str(), units::format_time(r.best()->score.iteration_time_s).c_str(),
          100 * (r.best()->score.iteration_time_s / best - 1), units::format_time(r.wall_s).c_str(), r.evaluations);
    }
    std::fflush(stdout);
  }

  // The question the project started from: stage partitioning alone, DARTS against DP.
  struct Cut {
    const char *label, *platform, *workload;
    int batch, tp, pp, mb;
  };
  const std::vector<Cut> cuts = {
      {"GPT-3 13B, mixed 8 A100 + 8 H100, tp1 pp2 dp8", "mixed-a100-h100-2x8", "gpt3-13b", 128, 1, 2, 1},
      {"GPT-3 13B, mixed 8 A100 + 8 H100, tp2 pp4 dp2", "mixed-a100-h100-2x8", "gpt3-13b", 128, 2, 4, 1},
      {"GPT-3 13B, mixed 8 A100 + 8 H100, tp1 pp8 dp2", "mixed-a100-h100-2x8", "gpt3-13b", 128, 1, 8, 1},
      {"GPT-3 175B, 1024 A100, tp8 pp16 dp8", "dgx-a100-128x8", "gpt3-175b", 1536, 8, 16, 1},
      {"GPT-3 175B, 1024 A100, tp4 pp32 dp8", "dgx-a100-128x8", "gpt3-175b", 1536, 4, 32, 1},
      {"Llama-3 70B, 64 H100, tp4 pp8 dp2", "h100-rail-8x8", "llama3-70b", 256, 4, 8, 1},
  };
  std::printf(
      "\n| partitioning problem | DP objective | DP time | diff objective | vs DP | diff time | DP cut | diff cut |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  auto sizes = [](const std::vector<int>& v) {
    std::string out;
    for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
    return "[" + out + "]";
  };
  for (const Cut& c : cuts) {
    const auto cluster =
        platforms::load_cluster_file(bench::src(std::string("platforms/presets/") + c.platform + ".yaml"));
    const auto model =
        workloads::load_workload_file(bench::src(std::string("workloads/presets/") + c.workload + ".yaml"));
    const search::Problem problem{&model, &cluster, c.batch};
    strategies::Plan plan;
    if (!search::make_plan(problem, c.tp, c.pp, c.mb, plan)) continue;
    plan.zero = 1;  // optimizer state sharded, selective recomputation: plans that can fit
    plan.recompute = "selective";
    plan.sequence_parallel = c.tp > 1;
    const search::PartitionProblem pr = search::partition_problem(problem, plan);
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const search::Partition dp = search::alpa_partition(pr);
    const auto t1 = clock::now();
    const search::Partition diff = search::differentiable_partition(pr);
    const auto t2 = clock::now();
    std::printf("| %s | %s | %s | %s | %+.2f%% | %s | %s | %s |\n", c.label, units::format_time(dp.objective_s).c_str(),
                units::format_time(std::chrono::duration<double>(t1 - t0).count()).c_str(),
                units::format_time(diff.objective_s).c_str(), 100 * (diff.objective_s / dp.objective_s - 1),
                units::format_time(std::chrono::duration<double>(t2 - t1).count()).c_str(),
                sizes(dp.layers_per_stage).c_str(), sizes(diff.layers_per_stage).c_str());
  }
  return 0;
}
