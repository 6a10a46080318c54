// `dejavu validate --row N --export DIR`: one validated row as the files simulate reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/error.h"
#include "strategies/plan.h"
#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"
#include "strategies/simulate.h"
#include "tests/source_dir.h"
#include "tests/tools/cli_run.h"
#include "tools/platform_input.h"
#include "tools/validation_suite.h"
#include "workloads/generator.h"

namespace dejavu::tools {
namespace {

using dejavu::testing::run_dejavu;
using dejavu::testing::src;
namespace fs = std::filesystem;

const std::string kSuites = "strategies/validation/public/";

// The exported files, loaded as simulate loads them, predict the step validate predicts for
// the row, to the last bit: the platform (its preset resized, on Jean Zay's servers for BLOOM),
// the model (GPT, tied or untied, Llama with GQA, Nemotron's squared ReLU, a name with a colon), the plan
// (FSDP with Composer's post-backward prefetch and early-stopping recomputation, NeMo's overlaps
// and fp8 weights, BLOOM's pipeline split and fp32 gradients, sequence parallelism off) and the
// suite's calibration of the row's GPU type (or its typical one, `gpu: any`: torchtitan's H200
// row). A row simulate fills to 90% of the GPU or more
// says how full in validate's note (MPT-30B at 8K tokens on 8 H100s, row 21: 95%).
TEST(PublicRowExport, TheFilesRerunTheRowAsValidateRunsIt) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"calibrated/llmfoundry_mpt_bench.yaml", "149"},
      {"calibrated/llmfoundry_mpt_bench.yaml", "21"},
      {"calibrated/dgxc_benchmarking.yaml", "390"},
      {"fp8/calibrated/dgxc_benchmarking.yaml", "385"},
      {"dgxc_benchmarking.yaml", "474"},
      {"calibrated/nemo_megatron_launcher_a100_2207.yaml", "616"},
      {"calibrated/megatron_core_h100.yaml", "626"},
      {"bigscience_bloom_prequel.yaml", "584"},
      {"fp8/typical/torchtitan_benchmarks.yaml", "248"}};
  for (const auto& [suite, row] : rows) {
    SCOPED_TRACE(suite + " row " + row);
    const ValidationReport report = run_validation_suite(src(kSuites + suite), 1, row);
    ASSERT_EQ(report.rows.size(), 1u);
    const RowExport e = export_validation_row(src(kSuites + suite), row);
    EXPECT_EQ(e.run.predicted_s, report.rows[0].predicted);
    EXPECT_EQ(e.run.label, report.rows[0].label);
    const fs::path dir = fs::path(::testing::TempDir()) / ("export-" + row);
    fs::create_directories(dir);
    std::vector<std::string> calibrations;
    for (const auto& [name, text] : e.files) {
      std::ofstream(dir / name) << text;
      if (name == "calibration.yaml") calibrations.push_back(dir / name);
    }
    const bool calibrated =
        suite.find("calibrated/") != std::string::npos || suite.find("typical/") != std::string::npos;
    EXPECT_EQ(calibrations.size(), calibrated ? 1u : 0u);
    // As `dejavu simulate` loads its inputs (tools/commands/options.cc).
    const strategies::Plan plan = strategies::load_plan_file(dir / "plan.yaml");
    const strategies::Simulation s = strategies::simulate(
        strategies::model_for_plan(workloads::load_workload_file(dir / "workload.yaml"), plan),
        strategies::cluster_for_plan(load_platform(dir / "platform.yaml", calibrations), plan), plan);
    EXPECT_EQ(s.report.iteration_time_s, report.rows[0].predicted);
    const double share = s.report.peak_memory_bytes / s.report.capacity_bytes;
    char note[48];
    std::snprintf(note, sizeof note, "peak %.0f%% of memory", 100 * share);
    EXPECT_EQ(report.rows[0].note, share >= 0.9 ? note : "");
    if (row == "21") {
      EXPECT_EQ(report.rows[0].note, "peak 95% of memory");
    }
  }
}

std::string refusal(const std::string& suite, const std::string& row) {
  try {
    export_validation_row(src(kSuites + suite), row);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A row the suite does not have (no such row_id, another source's row, the other precision's)
// or cannot simulate is refused naming --row and why; so is --row on a suite of another kind.
TEST(PublicRowExport, ARowTheSuiteCannotRunIsRefusedNamingTheOption) {
  EXPECT_NE(refusal("dgxc_benchmarking.yaml", "999999").find("--row: no row 999999 of dgxc_benchmarking"),
            std::string::npos);
  EXPECT_NE(refusal("dgxc_benchmarking.yaml", "149").find("no row 149"), std::string::npos);  // MPT's
  EXPECT_NE(refusal("dgxc_benchmarking.yaml", "385").find("no row 385"), std::string::npos);  // fp8
  EXPECT_NE(refusal("dgxc_benchmarking.yaml", "437").find("row 437 is not simulated: JAX on XLA"), std::string::npos);
  EXPECT_NE(refusal("dgxc_benchmarking.yaml", "416").find("no row 416"), std::string::npos);  // dgxc_maxtext's
  EXPECT_THROW(run_validation_suite(src(kSuites + "dgxc_benchmarking.yaml"), 1, "999999"), ConfigError);
  EXPECT_THROW(run_validation_suite(src("strategies/validation/megatron_seqpar_selective_a100.yaml"), 1, "1"),
               ConfigError);
}

// From the command line: the row's report, the files and the command that reruns it; --export
// without --row, or into a folder that cannot be made, is one line and exit code 2, nothing written.
TEST(PublicRowExport, TheCommandWritesTheFilesAndTheSimulateLine) {
  const fs::path dir = fs::path(::testing::TempDir()) / "cli-export-390";
  fs::remove_all(dir);
  const std::string suite = src(kSuites + "calibrated/dgxc_benchmarking.yaml");
  const auto ok = run_dejavu("validate " + suite + " --row 390 --export " + dir.string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\n390 Nemotron-4 15B"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("dejavu simulate --platform " + dir.string() + "/platform.yaml"), std::string::npos);
  for (const char* name : {"platform.yaml", "workload.yaml", "plan.yaml", "calibration.yaml"})
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  const auto no_row = run_dejavu("validate " + suite + " --export " + dir.string() + "-x");
  EXPECT_EQ(no_row.code, 2);
  EXPECT_NE(no_row.err.find("--row"), std::string::npos) << no_row.err;
  const auto no_parent = run_dejavu("validate " + suite + " --row 390 --export " + dir.string() + "/no/such");
  EXPECT_EQ(no_parent.code, 2);
  EXPECT_EQ(std::count(no_parent.err.begin(), no_parent.err.end(), '\n'), 1) << no_parent.err;
  EXPECT_FALSE(fs::exists(dir / "no"));
  const auto two = run_dejavu("validate " + suite + " " + suite + " --row 390");
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.err.find("one suite"), std::string::npos) << two.err;
}

}  // namespace
}  // namespace dejavu::tools
