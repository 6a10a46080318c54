// `dejavu search` as a user meets it: the winning plan comes out as a YAML that
// `dejavu simulate` accepts and predicts the same for; bad arguments are one line, exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

const std::string kProblem = "--platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                             src("workloads/presets/gpt3-1.3b.yaml");

TEST(SearchCli, WinningPlanSimulatesToTheSameTime) {
  const fs::path dir = scratch();
  const fs::path plan = dir / "best.yaml", json = dir / "search.json", sim = dir / "sim.json";
  const CliRun r = run_dejavu("search " + kProblem + " --global-batch 32 --algo dp --json " + json.string() + " -o " +
                              plan.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("dp:"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  const double predicted = j["best"]["iteration_time_s"].get<double>();
  EXPECT_EQ(j["best"]["plan"]["global_batch_size"].get<int>(), 32);
  const CliRun s = run_dejavu("simulate " + kProblem + " --plan " + plan.string() + " --quiet --json " + sim.string());
  ASSERT_EQ(s.code, 0) << s.err;
  const double simulated = nlohmann::json::parse(slurp(sim))["iteration_time_s"].get<double>();
  EXPECT_NEAR(simulated, predicted, 1e-9 * predicted);
}

// `--recompute` is the framework's set of modes: with torchtitan's op-level policy and full
// recomputation, no listed plan recomputes as Megatron's selective does, and none keeps
// every activation in every stage unless it offloads them instead.
TEST(SearchCli, PlansTryTheRecomputationModesTheFrameworkOffers) {
  const fs::path json = scratch() / "search.json";
  const CliRun r = run_dejavu("search " + kProblem + " --global-batch 32 --algo grid --top 5 --recompute " +
                              "selective-op,full --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  int listed = 0;
  for (const nlohmann::json& c : j["searches"][0]["top"]) {
    const nlohmann::json& plan = c["plan"];
    if (plan["recompute"].is_array()) {  // per stage: the last ones may keep everything
      for (const std::string& m : plan["recompute"].get<std::vector<std::string>>()) EXPECT_NE(m, "selective");
    } else {
      const std::string m = plan["recompute"].get<std::string>();
      EXPECT_NE(m, "selective") << plan.dump();
      if (m == "none") {
        EXPECT_TRUE(plan.contains("offload")) << plan.dump();
      }
    }
    ++listed;
  }
  EXPECT_EQ(listed, 5);
}

TEST(SearchCli, AllSearchersOneTable) {
  const fs::path html = scratch() / "search.html";
  const CliRun r = run_dejavu("search " + kProblem +
                              " --global-batch 16 --algo all --iterations 200 --top 2 --report " + html.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(html);
  for (const char* part : {"<h2>grid</h2>", "<h2>dp</h2>", "<h2>mcmc</h2>", "<h2>diff</h2>", "class=\"best\""})
    EXPECT_NE(page.find(part), std::string::npos) << part;
  for (const char* name : {"grid:", "dp:", "mcmc:", "diff:", "searcher  best iteration"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
}

TEST(SearchCli, GlobalBatchFromTheWorkloadYaml) {
  const fs::path dir = scratch();
  std::ofstream(dir / "w.yaml") << "kind: transformer\nname: small\nlayers: 4\nhidden: 1024\nheads: 8\n"
                                   "seq_len: 1024\nvocab: 32000\nglobal_batch_size: 16\n";
  const CliRun r = run_dejavu("search --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                              (dir / "w.yaml").string() + " --algo grid --top 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("global batch 16"), std::string::npos) << r.out;
}

// Two servers of two A100s behind one 100 Gb/s NIC each (the contention suite's platform):
// plans whose data-parallel traffic shares the NIC slow down there. Ranked with links
// shared, the listed plans are priced as SimGrid prices them (within 1%) and in its order;
// ranked as if every transfer had its links to itself (--rerank 0), the list of ten is wrong
// by more than 5% on some plan and its winner is no faster on SimGrid than the shared
// ranking's. (The refined plans on top overlap their gradient all-reduce with the backward,
// which hides most of the contention; the plans below them do not.)
TEST(SearchCli, RankedWithLinksSharedAsSimGridRanks) {
  const std::string problem = "search --platform " + src("tests/fixtures/contention/servers-2x2-shared-nic.yaml") +
                              " --workload " + src("workloads/presets/gpt3-1.3b.yaml") +
                              " --global-batch 32 --algo grid --top 10 --verify simgrid --quiet --json ";
  auto listed = [&](const std::string& extra) {
    const fs::path json = scratch() / "ranked.json";
    const CliRun r = run_dejavu(problem + json.string() + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::pair<double, double>> times;  // (search's time, SimGrid's)
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    for (const auto& c : j["searches"][0]["top"])
      times.emplace_back(c["iteration_time_s"].get<double>(), c["verified"]["iteration_time_s"].get<double>());
    return times;
  };
  const auto shared = listed(""), alone = listed(" --rerank 0");
  ASSERT_EQ(shared.size(), 10u);
  ASSERT_EQ(alone.size(), 10u);
  for (size_t k = 0; k < shared.size(); ++k) {
    EXPECT_NEAR(shared[k].first, shared[k].second, 0.01 * shared[k].second) << k;
    if (k > 0) {
      EXPECT_LE(shared[k - 1].second, shared[k].second * (1 + 1e-3)) << k;
    }
  }
  double worst = 0;
  for (const auto& [search, simgrid] : alone) worst = std::max(worst, std::abs(search / simgrid - 1));
  EXPECT_GT(worst, 0.05);
  EXPECT_LE(shared[0].second, alone[0].second);
}

// A mixed cluster's best plan does not depend on how its platform file lists the servers:
// the search tries both orders of its GPU types. Listed H100-first, it used to find only the
// plans that put the first stages on the H100s (GPT-3 13B, batch 64: 3.33 s against 3.2 s).
// The winning plan carries its gpu_order, and simulate on either file predicts its time.
TEST(SearchCli, AMixedClustersBestPlanDoesNotDependOnTheServerOrder) {
  const fs::path dir = scratch();
  const std::string yaml = slurp(src("platforms/presets/mixed-a100-h100-2x8.yaml"));
  const size_t a = yaml.find("  - count: 1\n    gpu: A100"), h = yaml.find("  - count: 1\n    gpu: H100"),
               n = yaml.find("network:");
  ASSERT_TRUE(a < h && h < n);
  std::ofstream(dir / "h100-first.yaml") << yaml.substr(0, a) + yaml.substr(h, n - h) + yaml.substr(a, h - a) +
                                                yaml.substr(n);
  std::vector<double> best;
  std::vector<std::string> order;
  for (const std::string& platform :
       {src("platforms/presets/mixed-a100-h100-2x8.yaml"), (dir / "h100-first.yaml").string()}) {
    const std::string tag = std::to_string(best.size());
    const fs::path json = dir / ("s" + tag + ".json"), plan = dir / ("p" + tag + ".yaml"),
                   sim = dir / ("r" + tag + ".json");
    const std::string problem = "--platform " + platform + " --workload " + src("workloads/presets/gpt3-13b.yaml");
    const CliRun r =
        run_dejavu("search " + problem + " --global-batch 64 --algo mcmc --iterations 100 --top 1 --json " +
                   json.string() + " -o " + plan.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("best of 2 GPU orders"), std::string::npos) << r.out;
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    best.push_back(j["best"]["iteration_time_s"].get<double>());
    order.push_back(j["best"]["plan"]["gpu_order"].dump());
    const CliRun s = run_dejavu("simulate " + problem + " --plan " + plan.string() + " --quiet --json " + sim.string());
    ASSERT_EQ(s.code, 0) << s.err;
    EXPECT_NEAR(nlohmann::json::parse(slurp(sim))["iteration_time_s"].get<double>(), best.back(), 1e-9 * best.back());
  }
  EXPECT_EQ(best[0], best[1]);
  EXPECT_EQ(order[0], order[1]);
  // The best even split was 3.2 s; with layers by the stages' GPU speed (stage_balance.h)
  // the search finds 1.87 s (11 of 40 layers on the A100s).
  EXPECT_LT(best[1], 2.0);
}

// --objective cost on four DGX A100s: every part of the cluster searched, plans ranked by
// GPU-hours (with 3600 iterations, GPU-seconds of one: iteration x GPUs). GPT-3 1.3B fits on
// one GPU, and the same FLOPs on fewer GPUs cross fewer links, so the cheapest plan leaves
// servers idle; its YAML (`gpus: N`) simulates to the time the search printed.
// --objective cost with prices (GPT-3 1.3B in fp16 on a DGX A100 at $2 a GPU-hour beside a
// DGX-1 V100 at $0.5): with 3600 iterations a plan's dollars are its iteration in seconds
// times the hourly price of the GPUs it uses, the first n in its GPU-type order: 8 x 2 +
// 8 x 0.5 = $20 an hour for all 16, n x the first type's price for a part of one server. The
// best plan is the part best with the fewest dollars.
TEST(SearchCli, CostWithPricesRanksByDollars) {
  const fs::path json = scratch() / "dollars.json", workload = scratch() / "gpt3-1.3b-fp16.yaml";
  std::ofstream(workload) << "kind: transformer\nname: gpt3-1.3b-fp16\nlayers: 24\nhidden: 2048\nheads: 16\n"
                             "seq_len: 2048\nvocab: 51200\ndtype: fp16\n";
  const CliRun r = run_dejavu("search --platform " + src("platforms/presets/mixed-a100-v100-2x8.yaml") +
                              " --workload " + workload.string() +
                              " --global-batch 32 --algo mcmc --iterations 100 --objective cost --steps 3600 --price "
                              "A100-SXM-80GB=2 --price V100-SXM2-32GB=0.5 --json " +
                              json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU-hours and dollars"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  const std::map<std::string, double> price = {{"A100-SXM-80GB", 2}, {"V100-SXM2-32GB", 0.5}};
  double cheapest = std::numeric_limits<double>::infinity();
  int parts = 0;
  for (const auto& part : j["parts"]) {
    if (part["best"].is_null()) continue;
    const int n = part["gpus"].get<int>();
    if (n == 16) {
      EXPECT_EQ(part["best"]["plan"]["gpu_order"].size(), 2u);
    }
    const auto& plan = part["best"]["plan"];
    ASSERT_TRUE(plan.contains("gpu_order")) << plan.dump();
    const double hourly = n == 16 ? 20 : n * price.at(plan["gpu_order"][0].get<std::string>());
    EXPECT_NEAR(part["best"]["dollars"].get<double>(), hourly * part["best"]["iteration_time_s"].get<double>(),
                1e-9 * hourly);
    cheapest = std::min(cheapest, part["best"]["dollars"].get<double>());
    ++parts;
  }
  EXPECT_GE(parts, 3);
  EXPECT_DOUBLE_EQ(j["best"]["dollars"].get<double>(), cheapest);
  EXPECT_EQ(j["prices_per_gpu_hour"]["V100-SXM2-32GB"].get<double>(), 0.5);
}

TEST(SearchCli, CostRanksPlansOnPartsOfTheClusterByGpuHours) {
  const fs::path dir = scratch();
  const fs::path plan = dir / "cheap.yaml", json = dir / "cost.json", sim = dir / "sim.json";
  const std::string problem = "--platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                              src("workloads/presets/gpt3-1.3b.yaml") + " --global-batch 64 --algo grid";
  const fs::path html = dir / "cost.html";
  const CliRun r = run_dejavu("search " + problem + " --objective cost --steps 3600 --json " + json.string() + " -o " +
                              plan.string() + " --report " + html.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("by cluster part"), std::string::npos) << r.out;
  EXPECT_NE(slurp(html).find("<th>GPU-hours (3600 iterations)</th>"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  const nlohmann::json& best = j["best"];
  const auto& p = best["plan"];
  const int gpus = p["tp"].get<int>() * p["pp"].get<int>() * p["dp"].get<int>() * p.value("cp", 1);
  EXPECT_LT(gpus, 32);
  EXPECT_EQ(p["gpus"].get<int>(), gpus);
  EXPECT_NEAR(best["gpu_hours"].get<double>(), best["iteration_time_s"].get<double>() * gpus, 1e-9 * gpus);
  std::vector<int> sizes;
  for (const auto& part : j["parts"]) {
    sizes.push_back(part["gpus"].get<int>());
    if (part["best"].is_null()) continue;
    EXPECT_GE(part["best"]["gpu_hours"].get<double>(), best["gpu_hours"].get<double>());
  }
  EXPECT_EQ(sizes, (std::vector<int>{32, 16, 8, 4, 2, 1}));
  // The whole cluster's fastest plan costs more GPU-hours.
  const fs::path fast = dir / "fast.json";
  ASSERT_EQ(run_dejavu("search " + problem + " --json " + fast.string()).code, 0);
  const double whole = nlohmann::json::parse(slurp(fast))["best"]["iteration_time_s"].get<double>();
  EXPECT_GT(whole * 32, best["gpu_hours"].get<double>());
  const CliRun s = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                              src("workloads/presets/gpt3-1.3b.yaml") + " --plan " + plan.string() +
                              " --quiet --json " + sim.string());
  ASSERT_EQ(s.code, 0) << s.err;
  const double t = best["iteration_time_s"].get<double>();
  EXPECT_NEAR(nlohmann::json::parse(slurp(sim))["iteration_time_s"].get<double>(), t, 1e-9 * t);
}

TEST(SearchCli, BadArgumentsAreOneLineExitTwo) {
  const fs::path out = scratch() / "never.yaml";
  fs::remove(out);
  struct Case {
    std::string args, expected;
  };
  for (const Case& c : {Case{"--global-batch 32 --algo annealing",
                             "--algo: unknown searcher \"annealing\"; valid: bo, diff, dp, grid, mcmc, rl, all"},
                        Case{"", "global_batch_size: the training job's global batch is not set"},
                        Case{"--global-batch 32 --budget 3", "--budget:"},
                        Case{"--global-batch 32 --verify ns3", "--verify: unknown engine \"ns3\""},
                        Case{"--global-batch 32 --rerank -1", "--rerank:"}}) {
    const CliRun r = run_dejavu("search " + kProblem + " " + c.args + " -o " + out.string());
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
