// Step calibrations: the efficiency a framework's kernels reach inside a step, fitted to a
// public suite's fit rows and judged on its held-out rows.
#include "tools/step_calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "sim/error.h"
#include "tests/tools/cli_run.h"
#include "tools/public_training.h"
#include "tools/validation_residuals.h"

namespace dejavu::tools {
namespace {

using testing::run_dejavu;
using testing::scratch;
using testing::src;

const char* const kHeader =
    "row_id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,gpu,gpus,framework,"
    "precision,tp,pp,vp,cp,dp,sharding,micro_batch,global_batch,recompute,measured_step_s,attention,held_out\n";

// Single-GPU runs of three GPT sizes (no collective in their steps), every third row held
// out, each step `measured` seconds.
std::string one_gpu_rows(const std::vector<double>& measured) {
  std::string rows = kHeader;
  const int hidden[] = {1024, 1536, 2048, 1024};
  for (size_t i = 0; i < measured.size(); ++i) {
    const int id = static_cast<int>(i) + 1;
    rows += std::to_string(id) + ",s,GPT,8," + std::to_string(hidden[i]) + ",16,16," + std::to_string(4 * hidden[i]) +
            ",50257,2048,A100-SXM-80GB,1,Megatron-LM,bf16,1,1,,1,1,none,2,16,none," + std::to_string(measured[i]) +
            ",flash," + (id % 3 == 0 ? "1" : "0") + "\n";
  }
  return rows;
}

std::string write_suite(const std::string& name, const std::string& rows) {
  const auto dir = scratch();
  std::ofstream(dir / (name + ".csv")) << rows;
  std::ofstream(dir / (name + ".yaml")) << "name: " << name << "\nkind: public\nmeasurements: " << name
                                        << ".csv\nsource: s\nplatforms: " << src("platforms/presets") << "\n";
  return (dir / (name + ".yaml")).string();
}

// A step with no communication is its kernels end to end, so runs measured at exactly 1 / s
// of the uncalibrated prediction give a step efficiency of s and no error left, on the
// held-out row too; for a stack slower (0.8) and faster (1.2) than the kernels measured alone.
TEST(StepCalibration, RecoversTheEfficiencyOfKernelOnlySteps) {
  const std::string probe = write_suite("probe", one_gpu_rows({1, 1, 1, 1}));
  const auto uncalibrated = run_public_training((scratch() / "probe.csv").string(), "s", src("platforms/presets")).runs;
  ASSERT_EQ(uncalibrated.size(), 4u);
  for (double s : {0.8, 1.2}) {
    SCOPED_TRACE(s);
    std::vector<double> measured;
    for (const PublicRun& r : uncalibrated) measured.push_back(r.predicted_s / s);
    const StepFit fit = fit_step_efficiency(write_suite("kernels", one_gpu_rows(measured)), "A100-SXM-80GB");
    EXPECT_NEAR(fit.step_efficiency, s, s * 1e-3);
    EXPECT_EQ(fit.fit.rows, 3);
    EXPECT_EQ(fit.held_out.rows, 1);
    EXPECT_NEAR(fit.fit.before, std::fabs(s - 1), 1e-3);  // predicted / measured - 1 = s - 1
    EXPECT_NEAR(fit.held_out.before, std::fabs(s - 1), 1e-3);
    EXPECT_LT(fit.fit.after, 2e-3);
    EXPECT_LT(fit.held_out.after, 2e-3);
  }
}

TEST(StepCalibration, TooFewFitRowsOnTheGpuIsAConfigError) {
  const std::string suite = write_suite("few", one_gpu_rows({1, 1, 1}));
  EXPECT_THROW(fit_step_efficiency(suite, "H100-SXM-80GB"), ConfigError);  // none on this GPU
}

// What `make validate` measured (strategies/validation/residuals.csv, kept current by the
// validation_residuals_current test): on every public suite the step calibration makes the
// held-out rows better than uncalibrated, never worse, and within the bounds below.
TEST(StepCalibration, CalibratedSuitesBeatUncalibratedOnTheirHeldOutRows) {
  struct Sums {
    double log_abs[2] = {0, 0};
    int rows[2] = {0, 0};
  };
  std::map<std::string, Sums> by_suite;
  for (const Residual& r : shipped_residuals())
    if (r.set == "held-out") {
      Sums& s = by_suite[r.suite];
      const int c = r.run.step_calibrated ? 1 : 0;
      s.log_abs[c] += std::log(std::max(std::fabs(r.predicted_s / r.measured_s - 1), 1e-6));
      ++s.rows[c];
    }
  // Held-out geometric-mean |error| each calibrated suite must stay within (issue 20: 5%).
  const std::map<std::string, double> bound = {{"bigscience_bloom_prequel", 0.05},
                                               {"bigscience_bloom", 0.05},
                                               {"dgxc_benchmarking", 0.03},
                                               {"llmfoundry_mpt_bench", 0.05},
                                               {"mtnlg_via_llm_analysis", 0.03}};
  for (const auto& [suite, b] : bound) {
    SCOPED_TRACE(suite);
    const Sums& s = by_suite[suite];
    ASSERT_GT(s.rows[0], 0);
    ASSERT_EQ(s.rows[0], s.rows[1]);
    const double before = std::exp(s.log_abs[0] / s.rows[0]), after = std::exp(s.log_abs[1] / s.rows[1]);
    EXPECT_LT(after, before);
    EXPECT_LT(after, b);
  }
}

// fp8 out of sample: NeMo's H100 step efficiency, fitted to its 16-bit fit rows, on the
// held-out fp8 rows of the same source (Transformer Engine fp8 GEMMs; docs/HARDWARE.md).
// Measured 12.3% uncalibrated and 4.8% calibrated (make validate-fp8; 10.2% and 4.2% before
// FlashAttention was priced by head size).
TEST(StepCalibration, NemoFp8RowsOutOfSample) {
  PublicOptions o;
  o.precision = "fp8";
  o.held_out_only = true;
  o.calibrations = {src("platforms/calibration/steps/nemo_h100-sxm-80gb.yaml")};
  const PublicSuite suite = run_public_training(src("strategies/validation/public/training.csv"), "dgxc_benchmarking",
                                                src("platforms/presets"), o);
  ASSERT_GE(suite.runs.size(), 20u);
  double log_abs = 0;
  for (const PublicRun& r : suite.runs) log_abs += std::log(std::fabs(r.predicted_s / r.measured_s - 1) + 1e-6);
  EXPECT_LT(std::exp(log_abs / static_cast<double>(suite.runs.size())), 0.05);
}

TEST(StepCalibrationCli, FitsWritesAndRefusesBadInput) {
  const std::string suite = write_suite("cli", one_gpu_rows({1, 1, 1, 1}));
  const auto out = scratch() / "step.yaml";
  const testing::CliRun ok = run_dejavu("calibrate --gpu A100-SXM-80GB --suite " + suite + " -o " + out.string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("held-out"), std::string::npos) << ok.out;
  EXPECT_NE(testing::slurp(out).find("step_efficiency: "), std::string::npos);
  // The fitted file is a calibration simulate reads.
  const testing::CliRun sim = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-1x8.yaml") +
                                         " --workload " + src("workloads/presets/gpt3-1.3b.yaml") + " --plan " +
                                         src("strategies/presets/dp8-mb128.yaml") + " --calibration " + out.string());
  EXPECT_EQ(sim.code, 0) << sim.err;
  const testing::CliRun megatron = run_dejavu("calibrate --gpu A100-SXM-80GB --suite " +
                                              src("strategies/validation/megatron_seqpar_selective_a100.yaml"));
  EXPECT_EQ(megatron.code, 2);
  EXPECT_NE(megatron.err.find("kind"), std::string::npos) << megatron.err;
  const testing::CliRun neither = run_dejavu("calibrate --gpu A100-SXM-80GB");
  EXPECT_EQ(neither.code, 2);
}

}  // namespace
}  // namespace dejavu::tools
