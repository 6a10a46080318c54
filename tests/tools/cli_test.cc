// The command line as a user meets it: bad input gives one line naming the file, the
// place and what would be valid, exit code 2, and no output file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;

using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

struct BadCase {
  const char* name;
  const char* platform;
  const char* workload;
  const char* plan;
  const char* expected_prefix;  // file:line:col: key: ...
};

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, OneLineExitTwoNoOutputFile) {
  const BadCase& c = GetParam();
  const fs::path json = fs::temp_directory_path() / ("dejavu-bad-" + std::to_string(::getpid()) + ".json");
  fs::remove(json);
  const CliRun r = run_dejavu("simulate --platform " + src(c.platform) + " --workload " + src(c.workload) + " --plan " +
                              src(c.plan) + " --json " + json.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(c.expected_prefix), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(json));
  EXPECT_FALSE(fs::exists(json.string() + ".partial"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInput,
    ::testing::Values(
        BadCase{"UnknownKey", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
                "tests/fixtures/bad/unknown-key.plan.yaml",
                "unknown-key.plan.yaml:6:1: schedul: unknown key; valid keys here are: name, tp, pp, dp"},
        BadCase{"MissingUnit", "tests/fixtures/bad/missing-unit.platform.yaml", "workloads/presets/gpt3-13b.yaml",
                "strategies/presets/tp4-pp2-dp4-1f1b.yaml",
                "missing-unit.platform.yaml:6:40: servers[0].intra.bandwidth: expected a rate such as "
                "\"400 Gbps\" (the unit is missing), got \"300\""},
        BadCase{"WrongUnitKind", "tests/fixtures/bad/wrong-unit-kind.platform.yaml", "workloads/presets/gpt3-13b.yaml",
                "strategies/presets/tp4-pp2-dp4-1f1b.yaml",
                "wrong-unit-kind.platform.yaml:7:22: servers[0].nic.bandwidth: expected a rate"},
        BadCase{"UnknownGpu", "tests/fixtures/bad/unknown-gpu.platform.yaml", "workloads/presets/gpt3-13b.yaml",
                "strategies/presets/tp4-pp2-dp4-1f1b.yaml",
                "unknown-gpu.platform.yaml:4:10: servers[0].gpu: unknown GPU type \"A200-SXM\"; valid: "
                "A100-SXM-40GB"},
        BadCase{"TpNotDividingHeads", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
                "tests/fixtures/bad/tp3.plan.yaml", "tp3.plan.yaml:1:5: tp: 3 does not divide the 40 attention heads"},
        BadCase{"GpuCountMismatch", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
                "tests/fixtures/bad/wrong-gpu-count.plan.yaml",
                "wrong-gpu-count.plan.yaml:3:5: dp: tp x pp x dp = 4 x 2 x 2 = 16 GPUs"},
        BadCase{
            "ChimeraOddPp", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
            "tests/fixtures/bad/chimera-odd-pp.plan.yaml",
            "chimera-odd-pp.plan.yaml:2:5: pp: 1 stages; chimera pairs stage k with stage p-1-k: valid: an even pp"},
        BadCase{"ChimeraWithZero", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/gpt3-13b.yaml",
                "tests/fixtures/bad/chimera-zero.plan.yaml",
                "chimera-zero.plan.yaml:5:11: schedule: chimera runs here with plain all-reduce data parallelism"},
        BadCase{"MalformedYaml", "platforms/presets/dgx-a100-4x8.yaml", "tests/fixtures/bad/malformed.workload.yaml",
                "strategies/presets/tp4-pp2-dp4-1f1b.yaml", "malformed.workload.yaml:"},
        BadCase{"MissingFile", "platforms/presets/dgx-a100-4x8.yaml", "workloads/presets/no-such-file.yaml",
                "strategies/presets/tp4-pp2-dp4-1f1b.yaml", "no-such-file.yaml: cannot open the file"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(Cli, SimulateWritesReportAndTrace) {
  const fs::path dir = fs::temp_directory_path() / ("dejavu-ok-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const CliRun r = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                              src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                              src("strategies/presets/tp4-pp2-dp4-1f1b.yaml") + " --json " + (dir / "r.json").string() +
                              " --trace " + (dir / "t.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("iteration time"), std::string::npos);
  EXPECT_NE(r.out.find("busiest link"), std::string::npos);
  const std::string json = slurp(dir / "r.json");
  for (const char* key : {"\"iteration_time_s\"", "\"tflops_per_gpu\"", "\"mfu\"", "\"devices\"", "\"busy_s\"",
                          "\"communication_s\"", "\"idle_s\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
  const std::string trace = slurp(dir / "t.json");
  EXPECT_NE(trace.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(trace.find("\"thread_name\""), std::string::npos);
}

TEST(Cli, AnOutputThatIsASymbolicLinkIsWrittenThrough) {
  // The link stays a link; the file it names gets the report (and an existing one is
  // replaced whole).
  const fs::path dir = scratch() / "link";
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "r.json") << "old";
  fs::create_symlink(dir / "real" / "r.json", dir / "r.json");
  const CliRun r =
      run_dejavu("simulate --platform " + src("platforms/presets/single-a100.yaml") + " --workload " +
                 src("workloads/presets/gpt3-1.3b.yaml") + " --plan " + src("strategies/presets/single-gpu.yaml") +
                 " --quiet --json " + (dir / "r.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "r.json"));
  EXPECT_NE(slurp(dir / "real" / "r.json").find("\"iteration_time_s\""), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "real" / "r.json.partial"));
}

TEST(Cli, ListNamesGpusEnginesSchedulesAndPresets) {
  const CliRun r = run_dejavu("list");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name :
       {"H100-SXM-80GB", "analytic", "1f1b", "gpipe", "ring", "transformer", "platforms/presets/dgx-a100-4x8.yaml",
        "workloads/presets/gpt3-175b.yaml", "strategies/presets/tp8-pp16-dp8-1f1b.yaml"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  // Each GPU type with where its figures come from, and whether its kernels were measured.
  const auto line_after = [&](const std::string& gpu, int k) {
    size_t at = r.out.find("  " + gpu + " ");
    for (int i = 0; i < k && at != std::string::npos; ++i) at = r.out.find('\n', at) + 1;
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_NE(line_after("B200-SXM-180GB", 1).find("figures: NVIDIA DGX B200 datasheet"), std::string::npos) << r.out;
  EXPECT_NE(line_after("B200-SXM-180GB", 2).find("kernels measured: XLA's sm_100"), std::string::npos) << r.out;
  EXPECT_NE(line_after("L40S", 2).find("no public kernel measurement"), std::string::npos) << r.out;
}

TEST(Cli, UnknownEngineIsABadInput) {
  const CliRun r = run_dejavu("simulate --platform " + src("platforms/presets/single-a100.yaml") + " --workload " +
                              src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                              src("strategies/presets/single-gpu.yaml") + " --engine warp");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown engine \"warp\"; valid: analytic"), std::string::npos) << r.err;
}

TEST(Cli, CompareEnginesPrintsBothAndWritesBothReports) {
  const fs::path json = fs::temp_directory_path() / ("dejavu-compare-" + std::to_string(::getpid()) + ".json");
  const CliRun r = run_dejavu("compare-engines --platform " + src("platforms/presets/single-a100.yaml") +
                              " --workload " + src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                              src("strategies/presets/single-gpu.yaml") + " --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("analytic vs simgrid"), std::string::npos) << r.out;
  const std::string text = slurp(json);
  EXPECT_NE(text.find("\"analytic\""), std::string::npos);
  EXPECT_NE(text.find("\"engine\": \"simgrid\""), std::string::npos);
  fs::remove(json);
}

TEST(Cli, ExportPlatformWritesXmlOrRefusesWithOneLine) {
  const fs::path xml = fs::temp_directory_path() / ("dejavu-export-cli-" + std::to_string(::getpid()) + ".xml");
  CliRun r = run_dejavu("export-platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " -o " + xml.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(xml).find("routing=\"Full\""), std::string::npos);
  fs::remove(xml);
  // 1024 GPUs: one zone per leaf switch, in pods, routes growing with the GPUs.
  r = run_dejavu("export-platform " + src("platforms/presets/dgx-a100-128x8.yaml") + " -o " + xml.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1024 hosts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in 167 zones"), std::string::npos) << r.out;
  fs::remove(xml);
  // Rails have no leaves to group GPUs by: one route per GPU pair, refused past 256 GPUs.
  const fs::path rails = fs::temp_directory_path() / ("dejavu-rails-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(rails) << "servers:\n  - count: 40\n    gpu: H100-SXM-80GB\n    gpus_per_server: 8\n"
                          "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
                          "    nic: {bandwidth: 400 Gbps, latency: 2 us}\n"
                          "network: {kind: rail-optimized, latency: 1 us}\n";
  r = run_dejavu("export-platform " + rails.string() + " -o " + xml.string());
  fs::remove(rails);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("stops at 256"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(xml));
}

TEST(Cli, CollectivesSweepPrintsRowsWritesCsvAndValidates) {
  const fs::path csv = fs::temp_directory_path() / ("dejavu-sweep-" + std::to_string(::getpid()) + ".csv");
  const CliRun r = run_dejavu("collectives --platform " + src("platforms/presets/dgx-a100-1x8.yaml") +
                              " --op all_reduce --gpus 8 --min 1M --max 8G --csv " + csv.string() + " --validate " +
                              src("platforms/validation/nccl_allreduce_busbw.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("busbw(GB/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("7 sizes measured"), std::string::npos) << r.out;
  const std::string text = slurp(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 14);  // header + 1M..8G
  fs::remove(csv);
  const CliRun bad =
      run_dejavu("collectives --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --op gather");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown operation \"gather\"; valid: all_reduce"), std::string::npos) << bad.err;
}

TEST(Cli, InspectPrintsParametersAndWritesDot) {
  const fs::path dot = fs::temp_directory_path() / ("dejavu-inspect-" + std::to_string(::getpid()) + ".dot");
  const CliRun r =
      run_dejavu("inspect " + src("workloads/presets/llama3-8b.yaml") + " --batch 8 --dot " + dot.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("parameters"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm"), std::string::npos) << r.out;
  // The kernels' FLOPs beside Megatron's count, which takes causal attention's scores whole:
  // 8 samples of 3 x (kernel forward + 32 layers' causal attention 2 x 2 x s^2 h / 2 more).
  const double s = 8192, h = 4096;
  const size_t at = r.out.find("forward + backward (as the kernels run)");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double fb = std::stod(r.out.substr(r.out.rfind(", ", at) + 2));
  const size_t it = r.out.find("model FLOPs / iteration of 8 samples  ");
  ASSERT_NE(it, std::string::npos) << r.out;
  const double model = std::stod(r.out.substr(it + 38));
  EXPECT_NEAR(model, 8 * (fb + 3 * 32 * 2 * s * s * h), 1e-3 * model);
  EXPECT_NE(r.out.find("(Megatron's count, MFU's: attention over every score, causal or not)"), std::string::npos);
  const std::string text = slurp(dot);
  EXPECT_EQ(text.rfind("digraph G {", 0), 0u);
  EXPECT_NE(text.find("L31.down"), std::string::npos);
  fs::remove(dot);
}

TEST(Cli, ATraceWorkloadNeedsNoPlanAndAMissingTraceIsOneLine) {
  const CliRun missing = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-1x8.yaml") +
                                    " --workload trace:/nonexistent/run");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/run.0.et: no such trace"), std::string::npos) << missing.err;
  const CliRun no_plan = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-1x8.yaml") +
                                    " --workload " + src("workloads/presets/gpt3-1.3b.yaml"));
  EXPECT_EQ(no_plan.code, 2);
  EXPECT_NE(no_plan.err.find("--plan: missing"), std::string::npos) << no_plan.err;
}

}  // namespace
