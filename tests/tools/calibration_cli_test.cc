// Calibration and validation from the command line: the shipped suites stay within their
// recorded error, a calibration file changes a prediction, bad measurement files are one
// line with exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "platforms/calibration.h"
#include "sim/config_node.h"
#include "tests/tools/cli_run.h"
#include "tools/platform_input.h"
#include "tools/validation_suite.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

TEST(Validation, ShippedSuitesStayWithinTheirRecordedError) {
  // The bounds live here, not in the suites they check: the geometric mean of |error| each
  // suite reached when it was last measured (README), which a change may only improve.
  // Raised once, 4.32% -> 4.60% and 4.40% -> 4.69%, when sequence-parallel pipeline sends
  // took Megatron-Core's size (a tensor rank's s / tp tokens, not all s): a defect fixed,
  // and these A100 rows are all too fast already. Lowered, 4.60% -> 3.60% and 4.69% ->
  // 3.68%, when communication kernels took their SMs from the compute beside them, and
  // 3.60% -> 2.64% and 3.68% -> 2.78% when the LM head's backward reduced its input gradient
  // over the tensor-parallel group (the rows up to 0.7% slower, all of them too fast). NCCL's
  // raised once, 1.73% -> 2.39%, when the DGX H100's all-reduce ran in the NVSwitch (NVLS,
  // fitted for the smallest largest error: 6.2% -> 3.2% on its rows) and its rings took the
  // efficiency nccl-tests' ring all-gather and reduce-scatter measure (they had been priced
  // at all of NVLink, 25% fast).
  struct Bound {
    const char* suite;
    double geomean_abs_error;
  };
  for (const Bound& b : {Bound{"strategies/validation/megatron_seqpar_selective_a100.yaml", 0.0264},
                         Bound{"strategies/validation/megatron_seqpar_selective_a100_calibrated.yaml", 0.0278},
                         Bound{"platforms/validation/nccl_allreduce_busbw.yaml", 0.0239},
                         // Out of sample (nothing fitted to these servers' rows): 5.04%.
                         Bound{"platforms/validation/nccl_allreduce_multinode.yaml", 0.0505}}) {
    SCOPED_TRACE(b.suite);
    const dejavu::tools::ValidationReport r = dejavu::tools::run_validation_suite(src(b.suite));
    EXPECT_GT(r.rows.size(), 7u);
    EXPECT_LE(r.geomean_abs_error, b.geomean_abs_error);
  }
}

TEST(Validation, TheCommandPrintsRowsAndTheGeometricMean) {
  const CliRun r = run_dejavu("validate " + src("platforms/validation/nccl_allreduce_busbw.yaml"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("H100-SXM-80GB x8 all_reduce 1024 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geometric mean of |error| over 11 rows"), std::string::npos) << r.out;
}

TEST(CalibrationCli, AFittedCalibrationChangesThePrediction) {
  const fs::path dir = scratch(), a = dir / "a.json", b = dir / "b.json";
  // GEMMs measured at 80% and at 40% of peak: the fit writes each, simulate reads it.
  auto fit_at = [&](double efficiency, const std::string& name) {
    std::ofstream csv(dir / (name + ".csv"));
    csv << "op_class,flops,bytes,dtype,seconds\n";
    for (double m : {2048.0, 4096.0, 8192.0, 16384.0, 32768.0})
      csv << "matmul," << 2 * m * m * m << "," << 6 * m * m << ",bf16," << 2e-6 + 2 * m * m * m / (efficiency * 312e12)
          << "\n";
    csv.close();
    const fs::path yaml = dir / (name + ".yaml");
    const CliRun fit = run_dejavu("calibrate --gpu A100-SXM-80GB --measurements " + (dir / (name + ".csv")).string() +
                                  " -o " + yaml.string());
    EXPECT_EQ(fit.code, 0) << fit.err;
    return yaml;
  };
  const fs::path fast = fit_at(0.8, "fast"), slow = fit_at(0.4, "slow");
  EXPECT_NE(slurp(slow).find("compute_efficiency: 0.4"), std::string::npos) << slurp(slow);
  const std::string job = "--platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                          src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                          src("strategies/presets/dp8-pcie.yaml");
  ASSERT_EQ(run_dejavu("simulate " + job + " --quiet --json " + a.string() + " --calibration " + fast.string()).code,
            0);
  const CliRun run =
      run_dejavu("simulate " + job + " --quiet --json " + b.string() + " --calibration " + slow.string());
  ASSERT_EQ(run.code, 0) << run.err;
  const double ta = nlohmann::json::parse(slurp(a))["iteration_time_s"].get<double>();
  const double tb = nlohmann::json::parse(slurp(b))["iteration_time_s"].get<double>();
  EXPECT_GT(tb, 1.5 * ta);  // GEMMs dominate a GPT step: half their speed, most of the time
  EXPECT_LT(tb, 2.1 * ta);
}

TEST(CalibrationCli, BadMeasurementsAreOneLineExitTwo) {
  const fs::path dir = scratch(), out = dir / "never.yaml";
  struct Case {
    const char *csv, *expected;
  };
  for (const Case& c : {Case{"op_class,flops,bytes,seconds\nmatmul,1,1,1\n", "bad.csv:1:1: dtype: missing column"},
                        Case{"op_class,flops,bytes,dtype,seconds\nmatmul,1e9,1e6,bf16,-0.5\n", "bad.csv:2:5: seconds:"},
                        Case{"op_class,flops,bytes,dtype,seconds\nfft,1e9,1e6,bf16,0.5\n",
                             "bad.csv:2:1: op_class: unknown op class"}}) {
    std::ofstream(dir / "bad.csv") << c.csv;
    fs::remove(out);
    const CliRun r = run_dejavu("calibrate --gpu A100-SXM-80GB --measurements " + (dir / "bad.csv").string() + " -o " +
                                out.string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

// --k-fill on GEMM rows without their shape would fix nothing: refused, not ignored.
TEST(CalibrationCli, AKFillWithoutShapedGemmsIsRefused) {
  const fs::path dir = scratch(), csv = dir / "flat.csv";
  std::ofstream(csv) << "op_class,flops,bytes,dtype,seconds\nmatmul,1e12,1e8,bf16,0.005\nmatmul,2e12,2e8,bf16,0.009\n";
  const CliRun r = run_dejavu("calibrate --gpu A100-SXM-80GB --k-fill 64 --measurements " + csv.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--k-fill applies to GEMM rows with their shape"), std::string::npos) << r.err;
}

}  // namespace

// `--calibration <framework>` applies that framework's shipped step calibration of each of
// the platform's GPU types: the same prediction, to the byte, as its file by path; on a
// cluster of two GPU types, both files. Every shipped file is listed under the GPU type its
// own `gpu:` names.
TEST(CalibrationCli, AFrameworkNameAppliesItsShippedStepCalibrations) {
  const std::vector<dejavu::tools::ShippedStepCalibration> shipped = dejavu::tools::shipped_step_calibrations();
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(src("platforms/calibration/steps")))
    files += e.path().extension() == ".yaml";
  ASSERT_EQ(shipped.size(), files);
  for (const auto& s : shipped) EXPECT_EQ(dejavu::ConfigNode::load_file(s.path).get_string("gpu"), s.gpu) << s.path;

  const fs::path dir = scratch();
  const std::string run = "simulate --platform " + src("platforms/presets/dgx-h100-1x8.yaml") + " --workload " +
                          src("workloads/presets/llama3-8b.yaml") + " --plan " +
                          src("strategies/presets/tp2-dp4-sp-zero1.yaml") + " --quiet --json ";
  const CliRun by_name = run_dejavu(run + (dir / "name.json").string() + " --calibration nemo");
  const CliRun by_path = run_dejavu(run + (dir / "path.json").string() + " --calibration " +
                                    src("platforms/calibration/steps/nemo_h100-sxm-80gb.yaml"));
  const CliRun plain = run_dejavu(run + (dir / "plain.json").string());
  ASSERT_EQ(by_name.code, 0) << by_name.err;
  ASSERT_EQ(by_path.code, 0) << by_path.err;
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(slurp(dir / "name.json"), slurp(dir / "path.json"));
  EXPECT_NE(slurp(dir / "name.json"), slurp(dir / "plain.json"));
  // The report says which files it ran with and the step calibration's factors.
  const nlohmann::json used = nlohmann::json::parse(slurp(dir / "name.json"))["calibrations"];
  const dejavu::platforms::Calibration nemo =
      dejavu::platforms::load_calibration_file(src("platforms/calibration/steps/nemo_h100-sxm-80gb.yaml"));
  ASSERT_EQ(used.size(), 1u) << used;
  EXPECT_EQ(used[0]["gpu"], "H100-SXM-80GB");
  EXPECT_EQ(used[0]["files"], nlohmann::json::array({"nemo_h100-sxm-80gb.yaml"}));
  EXPECT_EQ(used[0]["step_efficiency"].get<double>(), nemo.efficiency.step);
  EXPECT_EQ(used[0]["attention_step_efficiency"].get<double>(), nemo.efficiency.attention_step);
  EXPECT_FALSE(nlohmann::json::parse(slurp(dir / "plain.json")).contains("calibrations"));

  // llm-foundry was fitted on both GPU types of the mixed A100/H100 preset.
  const dejavu::platforms::Cluster mixed =
      dejavu::tools::load_platform(src("platforms/presets/mixed-a100-h100-2x8.yaml"), {"llm-foundry"});
  EXPECT_TRUE(dejavu::platforms::step_calibrated(mixed, "A100-SXM-80GB"));
  EXPECT_TRUE(dejavu::platforms::step_calibrated(mixed, "H100-SXM-80GB"));
}

// `--calibration typical` applies the shipped step calibration fitted across frameworks
// (typical_any.yaml, gpu: any) to every GPU type a platform has, those no framework was fitted
// on too: the A100/V100 preset's V100s take its step efficiency as its A100s do, the same as a
// file of each GPU type with that factor, and the report names the file for both.
TEST(CalibrationCli, TypicalAppliesTheCrossFrameworkStepCalibrationToEveryGpuType) {
  const std::string typical = src("platforms/calibration/steps/typical_any.yaml");
  const double step = dejavu::ConfigNode::load_file(typical).get_double("step_efficiency", 0, 0.05, 1.5);
  const fs::path dir = scratch();
  for (const char* gpu : {"A100-SXM-80GB", "V100-SXM2-32GB"})
    std::ofstream(dir / (std::string(gpu) + ".yaml")) << "gpu: " << gpu << "\nstep_efficiency: " << step << "\n";
  const std::string run = "simulate --platform " + src("platforms/presets/mixed-a100-v100-2x8.yaml") + " --workload " +
                          src("workloads/presets/gpt3-13b-fp16.yaml") + " --plan " +
                          src("strategies/presets/tp4-pp2-dp2-1f1b.yaml") + " --engine analytic --quiet --json ";
  const CliRun by_name = run_dejavu(run + (dir / "typical.json").string() + " --calibration typical");
  const CliRun by_files =
      run_dejavu(run + (dir / "files.json").string() + " --calibration " + (dir / "A100-SXM-80GB.yaml").string() +
                 " --calibration " + (dir / "V100-SXM2-32GB.yaml").string());
  ASSERT_EQ(by_name.code, 0) << by_name.err;
  ASSERT_EQ(by_files.code, 0) << by_files.err;
  const nlohmann::json a = nlohmann::json::parse(slurp(dir / "typical.json"));
  const nlohmann::json b = nlohmann::json::parse(slurp(dir / "files.json"));
  EXPECT_EQ(a["iteration_time_s"], b["iteration_time_s"]);
  ASSERT_EQ(a["calibrations"].size(), 2u) << a["calibrations"];
  for (const auto& used : a["calibrations"]) {
    EXPECT_EQ(used["files"], nlohmann::json::array({"typical_any.yaml"}));
    EXPECT_EQ(used["step_efficiency"].get<double>(), step);
  }
}
