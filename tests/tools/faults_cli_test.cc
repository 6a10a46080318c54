// Faults from the command line: a scenario's report in the JSON, a run-horizon, and bad
// scenarios as one line with exit code 2 and no output file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

const std::string kJob = "--platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                         src("workloads/presets/gpt3-1.3b.yaml") + " --plan " + src("strategies/presets/dp8-pcie.yaml");

TEST(FaultsCli, ScenarioReportIsInTheJson) {
  const fs::path dir = scratch(), json = dir / "r.json", yaml = dir / "s.yaml";
  std::ofstream(yaml) << "seed: 3\nevents:\n  - {kind: straggler, device: 2, speed: 0.5}\n"
                         "  - {kind: byzantine, device: 6, mode: sign_flip}\n";
  const CliRun r = run_dejavu("simulate " + kJob + " --faults " + yaml.string() + " --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("delayed tasks"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_GT(j["faults"]["slowdown"].get<double>(), 1.5);
  EXPECT_EQ(j["faults"]["byzantine"][0]["gpu"].get<int>(), 6);
  EXPECT_EQ(j["faults"]["byzantine"][0]["mode"].get<std::string>(), "sign_flip");
  EXPECT_DOUBLE_EQ(j["iteration_time_s"].get<double>(), j["faults"]["iteration_s"].get<double>());
}

TEST(FaultsCli, RunHorizonReportsGoodputAndTheBestInterval) {
  const fs::path json = scratch() / "h.json";
  const CliRun r = run_dejavu("run-horizon " + kJob + " --faults " + src("strategies/presets/faults/mtbf.yaml") +
                              " --iterations 100000 --horizon-json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("goodput"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_GT(j["goodput"].get<double>(), 0.5);
  EXPECT_LE(j["goodput"].get<double>(), 1.0);
  EXPECT_EQ(j["iterations_done"].get<long>(), 100000);
  EXPECT_GT(j["best_checkpoint_interval_s"].get<double>(), 0);
}

TEST(FaultsCli, BadScenariosAreOneLineExitTwoNoOutput) {
  const fs::path dir = scratch(), json = dir / "never.json";
  struct Case {
    const char *yaml, *expected;
  };
  for (const Case& c : {Case{"events:\n  - {kind: gpu_fail, device: 99, at: 1 s}\n", "GPU 99 does not exist"},
                        Case{"events:\n  - {kind: link_down, link: nowhere}\n", "unknown link \"nowhere\""},
                        Case{"events:\n  - {kind: straggler, device: 0, speed: 0}\n", "expected a factor above 0"},
                        Case{"events:\n  - {kind: gpu_fail, device: 0, at: -1 s}\n", "a time in the past"}}) {
    const fs::path yaml = dir / "bad.yaml";
    std::ofstream(yaml) << c.yaml;
    fs::remove(json);
    const CliRun r = run_dejavu("simulate " + kJob + " --faults " + yaml.string() + " --json " + json.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bad.yaml:"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(json));
  }
}

}  // namespace

namespace {

TEST(ConvergeCli, ComparesStrategiesAndWritesTheCurves) {
  const fs::path dir = scratch(), csv = dir / "curve.csv", svg = dir / "curve.svg";
  const CliRun r =
      run_dejavu("converge --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                 src("workloads/presets/gpt3-1.3b.yaml") + " --compare " +
                 src("strategies/presets/convergence/sync-vs-gossip.yaml") +
                 " --data synthetic:classes=4,dim=16,samples=128 --target-loss 0.4 --max-steps 300 --csv " +
                 csv.string() + " --plot " + svg.string());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"all-reduce", "gossip-topk", "ps-sync", "ps-rolling", "ps-async"})
    EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
  EXPECT_NE(slurp(csv).find("strategy,time_s,step,loss,accuracy,consensus"), std::string::npos);
  EXPECT_NE(slurp(svg).find("<polyline"), std::string::npos);
  const CliRun bad = run_dejavu("converge --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                                src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                                src("strategies/presets/dp8-pcie.yaml") + " --data synthetic:classes=1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--data: classes"), std::string::npos) << bad.err;
}

TEST(ConvergeCli, FailStopsFollowTheRecoveryPolicyAndInitialisationsAreProbed) {
  const std::string common = "converge --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                             src("workloads/presets/gpt3-1.3b.yaml") + " --lr 0.2 ";
  // The preset fails GPU 4 (worker 4 of dp 8) at 25 s; checkpoints every 10 s, 30 s restart.
  const CliRun r =
      run_dejavu(common + "--target-loss 0.62 --compare " + src("strategies/presets/convergence/fail-stop.yaml") +
                 " --faults " + src("strategies/presets/faults/worker-fail.yaml"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("all-reduce: 1 fail-stop(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("30 s down, 8 workers left"), std::string::npos) << r.out;
  const CliRun p = run_dejavu(common + "--model mlp --target-loss 0.5 --compare " +
                              src("strategies/presets/convergence/parallel-init.yaml"));
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("best-of-8: 8 initialisations probed"), std::string::npos) << p.out;
  const CliRun bad = run_dejavu("converge --platform " + src("platforms/presets/single-a100.yaml") + " --workload " +
                                src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                                src("strategies/presets/single-gpu.yaml") + " --init-candidates 2");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("2 initialisations need as many data-parallel workers"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

}  // namespace
