// fp8 and fp4 GEMMs and the quantization feeding them, against Transformer Engine's published
// per-layer GEMM times on a B300 (platforms/calibration/te_gemm_layer.csv cites them): one
// layer's 12 GEMMs (hidden 4096, MLP 16384, 15,872 tokens), each timed as a te.Linear forward,
// autocast (quantizing its input and weight each call) and on inputs quantized beforehand.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/error.h"

namespace dejavu::platforms {
namespace {

struct Call {
  double m, k, n;
};
constexpr double kTokens = 15872, kHidden = 4096, kMlp = 16384;
// The tutorial's Fprop, Dgrad and Wgrad shapes, (m, k, n) each: A[m, k] @ B[k, n].
const std::array<std::vector<Call>, 3> kPasses = {std::vector<Call>{{kTokens, kHidden, 3 * kHidden},
                                                                    {kTokens, kHidden, kHidden},
                                                                    {kTokens, kHidden, kMlp},
                                                                    {kTokens, kMlp, kHidden}},
                                                  std::vector<Call>{{kTokens, 3 * kHidden, kHidden},
                                                                    {kTokens, kHidden, kHidden},
                                                                    {kTokens, kMlp, kHidden},
                                                                    {kTokens, kHidden, kMlp}},
                                                  std::vector<Call>{{kHidden, kTokens, 3 * kHidden},
                                                                    {kHidden, kTokens, kHidden},
                                                                    {kHidden, kTokens, kMlp},
                                                                    {kMlp, kTokens, kHidden}}};

sim::Kernel gemm(const Call& c, sim::DType dtype, sim::Fp8Recipe recipe = sim::Fp8Recipe::Default) {
  sim::Kernel k;
  k.dtype = dtype;
  k.fp8_recipe = recipe;
  k.products[0] = {c.m, c.n, c.k, 1};  // rows, cols, depth, batch
  k.product_count = 1;
  k.flops = k.products[0].flops();
  return k;
}

// What a pass's quantization costs in dejavu: its four calls' GEMMs with the casts of input
// and weight (read 16-bit, write narrow) against the same GEMMs alone.
double quantize_s(const PerfModel& pm, int pass, sim::DType dtype, sim::Fp8Recipe recipe = sim::Fp8Recipe::Default) {
  double t = 0;
  for (const Call& c : kPasses[pass]) {
    sim::Kernel k = gemm(c, dtype, recipe);
    const double alone = pm.time_s(k);
    k.cast_bytes = (c.m * c.k + c.k * c.n) * (sim::dtype_bytes(sim::DType::BF16) + sim::dtype_bytes(dtype));
    t += pm.time_s(k) - alone;
  }
  return t;
}

double gemms_s(const PerfModel& pm, int pass, sim::DType dtype, sim::Fp8Recipe recipe = sim::Fp8Recipe::Default) {
  double t = 0;
  for (const Call& c : kPasses[pass]) t += pm.time_s(gemm(c, dtype, recipe));
  return t;
}

constexpr sim::Fp8Recipe kDelayed = sim::Fp8Recipe::Delayed, kTensorwise = sim::Fp8Recipe::Tensorwise,
                         kMxfp8 = sim::Fp8Recipe::Mxfp8;

}  // namespace

// Autocast less prequantized, ms a layer pass (Fprop, Dgrad, Wgrad) on a B300: NVFP4 0.678 /
// 0.884 / 1.126; fp8 by scaling recipe, MXFP8 0.482 / 0.648 / 0.692, current scaling (tensorwise)
// 0.721 / 0.734 / 0.880, delayed scaling 0.328 / 0.292 / 0.370 (its autocast time less current
// scaling's prequantized one: the same per-tensor GEMM kernel). The fits read Fprop and Dgrad;
// Wgrad is held out. The GB300 has the B300's 8 TB/s.
TEST(NarrowPrecision, BlackwellQuantizationCostsWhatTransformerEngineMeasuredOnB300) {
  const PerfModel pm(gpu_spec("GB300-288GB"));
  const double nvfp4[] = {0.678e-3, 0.884e-3, 1.126e-3};
  const double mxfp8[] = {0.482e-3, 0.648e-3, 0.692e-3}, current[] = {0.721e-3, 0.734e-3, 0.880e-3},
               delayed[] = {0.328e-3, 0.292e-3, 0.370e-3};
  for (int pass = 0; pass < 3; ++pass) {
    // one share of HBM a recipe: its passes spread 8-16% about it, the held-out pass 18-21%
    const double fitted = pass < 2 ? 1 : 0;
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP4) / nvfp4[pass], 1, 0.06) << pass;
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP8, kMxfp8) / mxfp8[pass], 1, fitted ? 0.08 : 0.19) << pass;
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP8, kTensorwise) / current[pass], 1, fitted ? 0.09 : 0.20) << pass;
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP8, kDelayed) / delayed[pass], 1, fitted ? 0.17 : 0.22) << pass;
    // as measured on every pass: delayed scaling the cheapest, current scaling the dearest
    EXPECT_LT(quantize_s(pm, pass, sim::DType::FP8, kDelayed), quantize_s(pm, pass, sim::DType::FP8, kMxfp8));
    EXPECT_LT(quantize_s(pm, pass, sim::DType::FP8, kMxfp8), quantize_s(pm, pass, sim::DType::FP8, kTensorwise));
  }
  // Without a recipe, Transformer Engine's default on Blackwell: MXFP8.
  EXPECT_DOUBLE_EQ(quantize_s(pm, 0, sim::DType::FP8), quantize_s(pm, 0, sim::DType::FP8, kMxfp8));
  // Before, at the element-wise class's share of HBM: NVFP4's Fprop casts in under half the time.
  Efficiency plain = Efficiency::defaults_for(gpu_spec("GB300-288GB"));
  plain.quantize_fp4.reset();
  EXPECT_LT(quantize_s(PerfModel(gpu_spec("GB300-288GB"), plain), 0, sim::DType::FP4), 0.5 * nvfp4[0]);
  // Every Blackwell type takes the B300's quantization.
  for (const char* gpu : {"B200-SXM-180GB", "GB200-186GB"})
    EXPECT_NEAR(quantize_s(PerfModel(gpu_spec(gpu)), 0, sim::DType::FP4) / nvfp4[0], 1, 0.06) << gpu;
}

// The same tables on an H200 (HBM 4.8 TB/s), ms: current scaling 0.926 / 1.134 / 1.440, delayed
// scaling 0.611 / 0.645 / 0.937 (against current scaling's kernels). The H200 runs them so, and
// a recipe-less fp8 GEMM takes delayed scaling, Transformer Engine's default before Blackwell.
// MXFP8 needs Blackwell's MX formats.
TEST(NarrowPrecision, HopperQuantizationCostsWhatTransformerEngineMeasuredOnH200) {
  const PerfModel pm(gpu_spec("H200-SXM-141GB"));
  const double current[] = {0.926e-3, 1.134e-3, 1.440e-3}, delayed[] = {0.611e-3, 0.645e-3, 0.937e-3};
  for (int pass = 0; pass < 3; ++pass) {
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP8, kTensorwise) / current[pass], 1, 0.04) << pass;
    EXPECT_NEAR(quantize_s(pm, pass, sim::DType::FP8, kDelayed) / delayed[pass], 1, 0.07) << pass;
  }
  EXPECT_DOUBLE_EQ(quantize_s(pm, 0, sim::DType::FP8), quantize_s(pm, 0, sim::DType::FP8, kDelayed));
  EXPECT_THROW(quantize_s(pm, 0, sim::DType::FP8, kMxfp8), ModelError);
}

// MXFP8's block-scaled GEMM kernels against the per-tensor scaled ones on a B300, prequantized,
// ms: Fprop 2.365 / 2.158, Dgrad 2.397 / 2.329 (fitted), Wgrad 2.400 / 2.325 (held out). Delayed
// and current scaling run the same per-tensor kernel.
TEST(NarrowPrecision, Mxfp8GemmsRunAtTheB300sMeasuredShareOfPerTensorFp8) {
  const PerfModel pm(gpu_spec("GB200-186GB"));
  const double slower[] = {2.365 / 2.158, 2.397 / 2.329, 2.400 / 2.325};
  for (int pass = 0; pass < 3; ++pass) {
    const double fp8 = gemms_s(pm, pass, sim::DType::FP8, kTensorwise);
    EXPECT_NEAR(gemms_s(pm, pass, sim::DType::FP8, kMxfp8) / fp8 / slower[pass], 1, 0.035) << pass;
    EXPECT_DOUBLE_EQ(gemms_s(pm, pass, sim::DType::FP8, kDelayed), fp8);
  }
}

// NVFP4 GEMM kernels against bf16 on the same shapes, prequantized, ms: Fprop 4.250 / 1.254,
// Dgrad 4.434 / 1.305 (fitted), Wgrad 4.418 / 1.205 (held out): 3.39x, 3.40x, 3.67x, on the
// same Blackwell Ultra die as the GB300's. The GB300 (fp4 peak 6x bf16's) prices them so;
// before, at the bf16 fit's share of the fp4 peak, they ran 6x bf16.
TEST(NarrowPrecision, Gb300Fp4GemmsRunAtTheB300sMeasuredSpeedUpOverBf16) {
  const PerfModel pm(gpu_spec("GB300-288GB"));
  const double speedup[] = {4.250 / 1.254, 4.434 / 1.305, 4.418 / 1.205};
  // The fitted passes within 3%, the held-out one within 5% (its speed-up is 8% above theirs).
  for (int pass = 0; pass < 3; ++pass)
    EXPECT_NEAR(gemms_s(pm, pass, sim::DType::BF16) / gemms_s(pm, pass, sim::DType::FP4) / speedup[pass], 1,
                pass < 2 ? 0.03 : 0.05)
        << pass;
  Efficiency plain = Efficiency::defaults_for(gpu_spec("GB300-288GB"));
  plain.gemm_fp4.reset();
  const PerfModel before(gpu_spec("GB300-288GB"), plain);
  EXPECT_GT(gemms_s(before, 0, sim::DType::BF16) / gemms_s(before, 0, sim::DType::FP4), 5);
}

// No figure times NVFP4 GEMMs on a B200 or GB200 (fp4 peak 4x bf16's, the B300's 6x): they run
// at the B300's measured speed-up over their own bf16 GEMMs, so the GB200's take the GB300's
// time though its fp4 peak is two thirds of it. Before, at the bf16 fit's share of their fp4
// peak, they ran 4x bf16 and a GB200 priced them 1.3x faster than a GB300.
TEST(NarrowPrecision, B200AndGb200Fp4GemmsRunAtTheB300sMeasuredSpeedUpOverBf16) {
  const double speedup[] = {4.250 / 1.254, 4.434 / 1.305, 4.418 / 1.205};
  const PerfModel gb300(gpu_spec("GB300-288GB"));
  for (const char* name : {"B200-SXM-180GB", "GB200-186GB"}) {
    const PerfModel pm(gpu_spec(name));
    EXPECT_DOUBLE_EQ(gpu_spec(name).peak_flops(sim::DType::FP4), 4 * gpu_spec(name).peak_flops(sim::DType::BF16));
    for (int pass = 0; pass < 3; ++pass)
      EXPECT_NEAR(gemms_s(pm, pass, sim::DType::BF16) / gemms_s(pm, pass, sim::DType::FP4) / speedup[pass], 1,
                  pass < 2 ? 0.03 : 0.05)
          << name << " " << pass;
  }
  const PerfModel gb200(gpu_spec("GB200-186GB"));
  for (int pass = 0; pass < 3; ++pass)
    EXPECT_NEAR(gemms_s(gb200, pass, sim::DType::FP4) / gemms_s(gb300, pass, sim::DType::FP4), 1, 1e-9) << pass;
}

// A calibration file sets the narrow fits: gemm_fp4 as a GEMM entry, quantize_fp8 and
// quantize_fp4 as the casts' memory share; a share outside (0, 1] is refused at its key.
TEST(NarrowPrecision, CalibrationFilesSetTheNarrowFits) {
  const Calibration c = load_calibration(ConfigNode::load_string(
      "gpu: GB200-186GB\ngemm_fp4: {compute_efficiency: 0.4}\nquantize_fp8: {memory_efficiency: 0.5}\n"
      "quantize_fp4: {memory_efficiency: 0.25, launch: 0 s}\n",
      "narrow.yaml"));
  ASSERT_TRUE(c.efficiency.gemm_fp4 && c.efficiency.quantize_fp4);
  EXPECT_DOUBLE_EQ(c.efficiency.gemm_fp4->compute_max, 0.4);
  EXPECT_DOUBLE_EQ(c.efficiency.gemm_fp4->k_fill, 704.2);  // the rest from the GB200's fp4 fit in place
  for (const sim::Fp8RecipeEntry& r : sim::fp8_recipes())  // quantize_fp8: every recipe's
    EXPECT_DOUBLE_EQ(c.efficiency.narrow(sim::DType::FP8, true, r.recipe)->memory, 0.5) << r.name;
  // One recipe's key over the shared one; gemm_mxfp8 starts from gemm_fp8.
  const Calibration one = load_calibration(
      ConfigNode::load_string("gpu: H100-SXM-80GB\nquantize_fp8: {memory_efficiency: 0.5}\n"
                              "quantize_fp8_tensorwise: {memory_efficiency: 0.4}\nmxfp8_gemm_time: 1.2\n",
                              "recipe.yaml"));
  EXPECT_DOUBLE_EQ(one.efficiency.narrow(sim::DType::FP8, true, kTensorwise)->memory, 0.4);
  EXPECT_DOUBLE_EQ(one.efficiency.narrow(sim::DType::FP8, true, kDelayed)->memory, 0.5);
  EXPECT_DOUBLE_EQ(one.efficiency.mxfp8_gemm_time, 1.2);
  // 1 GB of casts at a quarter of 8 TB/s, no launch: 0.5 ms beside the GEMM.
  sim::Kernel k = gemm({8192, 8192, 8192}, sim::DType::FP4);
  const PerfModel pm(gpu_spec("GB200-186GB"), c.efficiency);
  const double alone = pm.time_s(k);
  k.cast_bytes = 1e9;
  EXPECT_NEAR(pm.time_s(k) - alone, 0.5e-3, 1e-12);
  try {
    load_calibration(ConfigNode::load_string("gpu: GB200-186GB\nquantize_fp4: {memory_efficiency: 1.5}\n", "bad.yaml"));
    FAIL() << "a share above 1 was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:2"), std::string::npos) << e.what();
  }
}

// `dejavu calibrate` fits fp4 GEMM rows apart from 16-bit and fp8 ones, as gemm_fp4: rows made
// from a known model on a GB200 (bf16 at 0.6 of its peak, fp8 at 0.55, fp4 at 0.35; compute-
// bound square products of 1e10 to 1e13 FLOPs, 3 us launch, pipeline fill 192), 0.1% noise,
// seeded. Each fit recovers its share; written and read back, the file prices each so.
TEST(NarrowPrecision, CalibrateFitsFp4GemmRowsApart) {
  const GpuSpec& gb200 = gpu_spec("GB200-186GB");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> decades(0, 3), noise(-0.001, 0.001);
  const char* names[] = {"bf16", "fp8", "fp4"};
  const double peak[] = {2500e12, 5000e12, 10000e12}, share[] = {0.6, 0.55, 0.35};
  std::string csv = "op_class,flops,bytes,dtype,seconds,m,n,k\n";
  char line[200];
  for (int i = 0; i < 120; ++i) {
    const int d = i % 3;
    const double n = std::round(std::cbrt(1e10 * std::pow(10, decades(rng)) / 2) / 64) * 64;
    const double seconds = (3e-6 + 2 * n * n * (n + 192) / (peak[d] * share[d])) * (1 + noise(rng));
    std::snprintf(line, sizeof line, "gemm,%.17g,0,%s,%.17g,%d,%d,%d\n", 2 * n * n * n, names[d], seconds,
                  static_cast<int>(n), static_cast<int>(n), static_cast<int>(n));
    csv += line;
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dejavu-narrow-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path) << csv;
  const std::vector<ClassFit> fits = fit_measurements(load_measurements(path.string()), gb200, 192);
  std::filesystem::remove(path);
  ASSERT_EQ(fits.size(), 3u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_STREQ(fit_name(fits[d]), d == 0 ? "gemm" : d == 1 ? "gemm_fp8" : "gemm_fp4");
    EXPECT_NEAR(fits[d].efficiency.compute_max / share[d], 1, 0.01) << names[d];
  }
  std::ostringstream yaml;
  write_calibration(yaml, gb200.name, fits, "narrow.csv");
  const Calibration c = load_calibration(ConfigNode::load_string(yaml.str(), "fitted.yaml"));
  const PerfModel pm(gb200, c.efficiency);
  const double work = 2 * 8192.0 * 8192 * (8192 + 192);
  // fp8 rows are per-tensor scaled kernels' (cuBLASLt's): a recipe of that scaling runs at the fit
  for (int d = 0; d < 3; ++d) {
    sim::Kernel k = gemm({8192, 8192, 8192},
                         d == 0   ? sim::DType::BF16
                         : d == 1 ? sim::DType::FP8
                                  : sim::DType::FP4,
                         d == 1 ? kTensorwise : sim::Fp8Recipe::Default);
    EXPECT_NEAR(pm.time_s(k) / (3e-6 + work / (peak[d] * share[d])), 1, 0.01) << names[d];
  }
  // and the GB200's default, MXFP8, at the B300's measured 1.0613 times that
  const sim::Kernel mx = gemm({8192, 8192, 8192}, sim::DType::FP8);
  EXPECT_NEAR(pm.time_s(mx) / (3e-6 + work / (peak[1] * share[1])), 1.0613, 0.01);
}

}  // namespace dejavu::platforms
