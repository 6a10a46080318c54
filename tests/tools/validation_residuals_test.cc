// Error bars: the band is the 10th to 90th percentile of measured / predicted over the
// validated runs on the GPU type that nothing was fitted to, and a run using what none of
// them used is flagged.
#include "tools/validation_residuals.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/error.h"
#include "tests/tools/cli_run.h"

namespace dejavu::tools {
namespace {

Residual residual(const std::string& set, const std::string& gpu, double ratio, double params = 1e10) {
  Residual r;
  r.suite = "s";
  r.set = set;
  r.run.gpu = gpu;
  r.run.params = params;
  r.run.gpus = 64;
  r.run.tp = 8;
  r.run.pp = 2;
  r.run.dp = 4;
  r.run.zero = 1;
  r.predicted_s = 10;
  r.measured_s = 10 * ratio;
  return r;
}

RunShape like_them() {
  RunShape run;
  run.gpu = "A100-SXM-80GB";
  run.params = 1e10;
  run.gpus = 64, run.tp = 8, run.pp = 2, run.dp = 4, run.zero = 1;
  return run;
}

// Ratios 1.0, 1.1, ..., 1.9 held out (plus fit rows that must not count): the 10th
// percentile sits 0.9 of the way from 1.0 to 1.1, the 90th 0.1 of the way from 1.8 to 1.9.
TEST(ValidationBand, IsTheTenthToNinetiethPercentileOfHeldOutRatios) {
  std::vector<Residual> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(residual(i % 2 ? "held-out" : "all", "A100-SXM-80GB", 1.0 + 0.1 * i));
  rows.push_back(residual("fit", "A100-SXM-80GB", 5.0));
  rows.push_back(residual("held-out", "H100-SXM-80GB", 0.5));
  const strategies::ValidationBand b = band_for(rows, like_them(), 20);
  ASSERT_TRUE(b.has_band);
  EXPECT_EQ(b.runs, 10);
  EXPECT_NEAR(b.ratio_low, 1.09, 1e-12);
  EXPECT_NEAR(b.ratio_high, 1.81, 1e-12);
  EXPECT_NEAR(b.low_s, 21.8, 1e-9);
  EXPECT_NEAR(b.high_s, 36.2, 1e-9);
  EXPECT_TRUE(b.outside.empty());
}

TEST(ValidationBand, TooFewRunsOnTheGpuTypeGiveNoBandAndSaySo) {
  std::vector<Residual> rows;
  for (int i = 0; i < kMinBandRuns - 1; ++i) rows.push_back(residual("held-out", "A100-SXM-80GB", 1.2));
  for (int i = 0; i < 10; ++i) rows.push_back(residual("fit", "A100-SXM-80GB", 1.2));
  const strategies::ValidationBand b = band_for(rows, like_them(), 20);
  EXPECT_FALSE(b.has_band);
  ASSERT_EQ(b.outside.size(), 1u);
  EXPECT_EQ(b.outside[0], "GPU type A100-SXM-80GB (4 validated runs)");
}

TEST(ValidationBand, AGpuTypeWithoutKernelMeasurementsSaysSo) {
  // No run on an L40S was validated and no public kernel measurement of it was found; a
  // B200's GEMMs were measured (XLA's sm_100 table), its training runs were not.
  RunShape l40s = like_them(), b200 = like_them();
  l40s.gpu = "L40S";
  b200.gpu = "B200-SXM-180GB";
  EXPECT_EQ(band_for({}, l40s, 20).outside,
            (std::vector<std::string>{"GPU type L40S (0 validated runs)",
                                      "kernels of L40S (no public measurement: default efficiencies)"}));
  EXPECT_EQ(band_for({}, b200, 20).outside, std::vector<std::string>{"GPU type B200-SXM-180GB (0 validated runs)"});
}

TEST(ValidationBand, FlagsWhatNoValidatedRunDid) {
  std::vector<Residual> rows;
  for (int i = 0; i < 6; ++i) rows.push_back(residual("held-out", "A100-SXM-80GB", 1.2, 1e10 * (i + 1)));
  RunShape run = like_them();
  run.cp = 2, run.ep = 4, run.zero = 3, run.params = 1e12, run.gpus = 8;
  const strategies::ValidationBand b = band_for(rows, run, 20);
  EXPECT_TRUE(b.has_band);  // still a band: the GPU type has runs, the rest is flagged
  const std::vector<std::string> expected = {"context parallelism (cp 2)", "expert parallelism (ep 4)", "ZeRO stage 3",
                                             "model size (1e+12 parameters; validated 1e+10 to 6e+10)",
                                             "GPU count (8; validated 64 to 64)"};
  EXPECT_EQ(b.outside, expected);
  // Offload: what no validated run kept in the host's memory, part by part.
  run = like_them();
  run.offload = "optimizer+activation-layers";
  rows[0].run.offload = "activation-layers";
  EXPECT_EQ(band_for(rows, run, 20).outside, std::vector<std::string>{"the optimizer offloaded"});
  rows[0].run.offload.clear();
  EXPECT_EQ(band_for(rows, run, 20).outside,
            (std::vector<std::string>{"the optimizer offloaded", "activations offloaded layer by layer"}));
  run = like_them();
  run.language_model = false;
  EXPECT_FALSE(band_for(rows, run, 20).has_band);
  run = like_them();
  run.gpu = "mixed";
  EXPECT_EQ(band_for(rows, run, 20).outside, std::vector<std::string>{"a cluster of several GPU types"});
}

// A run's band comes from runs whose GEMMs ran in its precision: fp8 runs' ratios for an fp8
// run, never the 16-bit ones beside them; a precision no run trained in gets none.
TEST(ValidationBand, ComesFromRunsInTheSamePrecision) {
  std::vector<Residual> rows;
  for (int i = 0; i < 6; ++i) rows.push_back(residual("held-out", "A100-SXM-80GB", 1.0));
  for (int i = 0; i < 6; ++i) {
    rows.push_back(residual("held-out", "A100-SXM-80GB", 1.5));
    rows.back().run.precision = "fp8";
  }
  RunShape run = like_them();
  strategies::ValidationBand b = band_for(rows, run, 20);
  EXPECT_EQ(b.runs, 6);
  EXPECT_NEAR(b.low_s, 20, 1e-9);
  run.precision = "fp8";
  b = band_for(rows, run, 20);
  ASSERT_TRUE(b.has_band);
  EXPECT_EQ(b.runs, 6);
  EXPECT_NEAR(b.low_s, 30, 1e-9);
  EXPECT_EQ(b.runs_text(), "6 A100-SXM-80GB fp8 runs");
  run.precision = "fp4";
  b = band_for(rows, run, 20);
  EXPECT_FALSE(b.has_band);
  EXPECT_EQ(b.outside,
            std::vector<std::string>{"GPU type A100-SXM-80GB in fp4 (0 validated runs; 6 in 16-bit, 6 in fp8)"});
  // Where only other precisions were validated, a 16-bit run says so too.
  rows.erase(rows.begin(), rows.begin() + 6);
  run.precision = "16-bit";
  EXPECT_EQ(band_for(rows, run, 20).outside,
            std::vector<std::string>{"GPU type A100-SXM-80GB in 16-bit (0 validated runs; 6 in fp8)"});
}

TEST(ValidationResiduals, AnOffloadIsWhatThePlanKeepsInTheHostsMemory) {
  strategies::Plan plan;
  EXPECT_EQ(offload_of(plan), "");
  plan.offload_activations = "cpu";
  EXPECT_EQ(offload_of(plan), "activations");
  plan.offload_activation_layers = 4;
  plan.offload_optimizer = "nvme";
  EXPECT_EQ(offload_of(plan), "optimizer+activation-layers");
  plan.offload_parameters = "cpu";
  EXPECT_EQ(offload_of(plan), "optimizer+parameters+activation-layers");
}

TEST(ValidationResiduals, APrecisionIsHowValidationGroupsAModelsDtype) {
  EXPECT_EQ(precision_of(sim::DType::BF16), "16-bit");
  EXPECT_EQ(precision_of(sim::DType::FP16), "16-bit");
  EXPECT_EQ(precision_of(sim::DType::FP8), "fp8");
  EXPECT_EQ(precision_of(sim::DType::FP4), "fp4");
  EXPECT_EQ(precision_of(sim::DType::FP32), "fp32");
}

TEST(ValidationResiduals, WriteThenParseGivesTheSameRowsAndBadRowsNameTheLine) {
  std::vector<Residual> rows = {residual("held-out", "A100-SXM-80GB", 1.25), residual("fit", "H100-SXM-80GB", 0.8)};
  rows[1].run.precision = "fp8";
  rows[1].run.offload = "optimizer+activation-layers";
  std::ostringstream out;
  write_residuals(out, rows);
  const std::vector<Residual> back = parse_residuals(out.str(), "r.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].run.gpu, "H100-SXM-80GB");
  EXPECT_EQ(back[0].set, "held-out");
  EXPECT_DOUBLE_EQ(back[0].measured_s, 12.5);
  EXPECT_EQ(back[0].run.tp, 8);
  EXPECT_EQ(back[0].run.precision, "16-bit");
  EXPECT_EQ(back[1].run.precision, "fp8");
  EXPECT_EQ(back[0].run.offload, "");
  EXPECT_EQ(back[1].run.offload, "optimizer+activation-layers");
  for (const char* bad : {"s,maybe,A100-SXM-80GB,1e9,8,1,1,8,1,1,0,fitted,16-bit,1,1,\n",
                          "s,fit,A100-SXM-80GB,1e9,8,1,1,8,1,1,0,fitted,int4,1,1,\n",
                          "s,fit,A100-SXM-80GB,1e9,8,1,1,8,1,1,0,fitted,16-bit,1,1,gpu\n",
                          "s,fit,A100-SXM-80GB,1e9,8,1,1,8,1,1,0,fitted,16-bit,1,1,activations+optimizer\n",
                          "s,fit,A100-SXM-80GB,1e9,8,1,1,8,1,1,0,1,16-bit,1,1,\n"})
    try {
      parse_residuals(out.str() + bad, "r.csv");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("r.csv:4"), std::string::npos) << e.what();
    }
}

// The shipped residuals (make validate) cover both GPU types the public suites ran on, and
// the H100's fp8 runs.
TEST(ValidationResiduals, ShippedRowsCoverA100AndH100) {
  int a100 = 0, h100 = 0, h100_fp8 = 0;
  for (const Residual& r : shipped_residuals()) {
    if (r.set == "fit") continue;
    const bool bf = r.run.precision == "16-bit";
    a100 += bf && r.run.gpu == "A100-SXM-80GB";
    h100 += bf && r.run.gpu == "H100-SXM-80GB";
    h100_fp8 += r.run.precision == "fp8" && r.run.gpu == "H100-SXM-80GB";
  }
  EXPECT_GE(a100, kMinBandRuns);
  EXPECT_GE(h100, kMinBandRuns);
  EXPECT_GE(h100_fp8, kMinBandRuns);
}

TEST(ValidationBandCli, SimulatePrintsTheBandAndTheJsonCarriesIt) {
  using namespace dejavu::testing;
  const auto dir = scratch();
  const std::string json = (dir / "r.json").string();
  const CliRun r = run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                              src("workloads/presets/gpt3-13b.yaml") + " --plan " +
                              src("strategies/presets/tp4-pp2-dp4-1f1b.yaml") + " --json " + json);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  validated band     "), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  const double t = j["iteration_time_s"].get<double>();
  const auto band = j["validation"]["band_s"];
  ASSERT_EQ(band.size(), 2u);
  EXPECT_LT(band[0].get<double>(), band[1].get<double>());
  EXPECT_NEAR(band[0].get<double>() / t, j["validation"]["measured_over_predicted"][0].get<double>(), 1e-9);
  const CliRun resnet =
      run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                 src("workloads/presets/resnet50.yaml") + " --plan " + src("strategies/presets/dp8-mb128.yaml"));
  ASSERT_EQ(resnet.code, 0) << resnet.err;
  EXPECT_NE(resnet.out.find("outside validation a workload other than a transformer language model"), std::string::npos)
      << resnet.out;
  EXPECT_EQ(resnet.out.find("validated band"), std::string::npos);
  // fp8 GEMMs: the H100's band comes from its fp8 runs.
  const CliRun fp8 = run_dejavu("simulate --platform " + src("platforms/presets/dgx-h100-1x8.yaml") + " --workload " +
                                src("workloads/presets/llama3-8b-fp8.yaml") + " --plan " +
                                src("strategies/presets/tp2-dp4-sp-zero1.yaml"));
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  EXPECT_NE(fp8.out.find(" H100-SXM-80GB fp8 runs not fitted to)"), std::string::npos) << fp8.out;
}

// An uncalibrated prediction with a band says how to centre it; a calibrated one, or one with
// no band (ResNet-50), does not.
TEST(ValidationBandCli, AnUncalibratedPredictionNamesTheCalibrationsThatCentreItsBand) {
  using namespace dejavu::testing;
  const std::string problem = "simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                              src("workloads/presets/gpt3-13b.yaml") + " --plan " +
                              src("strategies/presets/tp4-pp2-dp4-1f1b.yaml");
  const std::string hint = "  calibration        none (kernels at their speed alone): --calibration NAME";
  const CliRun plain = run_dejavu(problem);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find(hint), std::string::npos) << plain.out;
  const CliRun typical = run_dejavu(problem + " --calibration typical");
  ASSERT_EQ(typical.code, 0) << typical.err;
  EXPECT_EQ(typical.out.find(hint), std::string::npos) << typical.out;
  EXPECT_NE(typical.out.find("  calibration        A100-SXM-80GB: typical_any.yaml"), std::string::npos) << typical.out;
  const CliRun resnet =
      run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-1x8.yaml") + " --workload " +
                 src("workloads/presets/resnet50.yaml") + " --plan " + src("strategies/presets/dp8-mb128.yaml"));
  ASSERT_EQ(resnet.code, 0) << resnet.err;
  EXPECT_EQ(resnet.out.find(hint), std::string::npos) << resnet.out;
}

}  // namespace
}  // namespace dejavu::tools
