#include "platforms/perf_model.h"

#include <gtest/gtest.h>

#include "sim/error.h"

namespace dejavu::platforms {

TEST(PerfModel, LargeGemmIsComputeBoundOnTheSaturatingCurve) {
  const GpuSpec& a100 = gpu_spec("A100-SXM-80GB");
  const Efficiency e = Efficiency::defaults();
  const PerfModel pm(a100, e);
  const double F = 2.0 * 8192 * 8192 * 8192;  // 1.1 TFLOP
  const sim::Kernel k{sim::OpClass::Gemm, F, 3 * 8192.0 * 8192 * 2, sim::DType::BF16};
  // time = launch + F / (peak * e_max * F / (F + peak * t_half))
  const auto& g = e.per_class[0];
  const double expected = g.launch_s + (F + 312e12 * g.half_time_s) / (312e12 * g.compute_max);
  EXPECT_NEAR(pm.time_s(k), expected, 1e-15);
  // and large GEMMs approach e_max of peak
  EXPECT_NEAR(F / (pm.time_s(k) - g.launch_s) / 312e12, g.compute_max, 0.01);
}

TEST(PerfModel, ElementwiseIsMemoryBound) {
  const GpuSpec& h100 = gpu_spec("H100-SXM-80GB");
  const Efficiency e = Efficiency::defaults();
  const PerfModel pm(h100, e);
  const double bytes = 1e9;
  const sim::Kernel k{sim::OpClass::Elementwise, 1e6, bytes, sim::DType::BF16};
  const auto& c = e.per_class[static_cast<size_t>(sim::OpClass::Elementwise)];
  EXPECT_NEAR(pm.time_s(k), c.launch_s + bytes / (3350e9 * c.memory), 1e-15);
}

TEST(PerfModel, DataTypeTheGpuLacksIsAnError) {
  const PerfModel pm(gpu_spec("V100-SXM2-32GB"));
  EXPECT_THROW(pm.time_s({sim::OpClass::Gemm, 1e9, 0, sim::DType::BF16}), ModelError);
  EXPECT_GT(pm.time_s({sim::OpClass::Gemm, 1e9, 0, sim::DType::FP16}), 0);
}

// A shaped GEMM whose 64 x 64 output tiles are fewer than the GPU's SMs leaves SMs idle:
// 640 x 640 outputs are 100 tiles on the H100's 132 SMs, 640 x 1280 are 200, so twice the
// work takes 200 / 132 as long (both compute-bound: about 320 FLOP per byte, above the
// ridge), not twice as long; without the k_fill term, the compute time is the work at
// e_max plus t_half / e_max.
TEST(PerfModel, AGemmWithFewerTilesThanSmsRunsAtTheirShareOfTheGpu) {
  const GpuSpec& h100 = gpu_spec("H100-SXM-80GB");
  Efficiency e = Efficiency::defaults();
  OpEfficiency& g = e.per_class[0];
  g = {0.8, 0, 0.9, 0, 0};
  const PerfModel pm(h100, e);
  auto shaped = [](double rows, double cols, double depth) {
    sim::Kernel k;
    k.products[0] = {rows, cols, depth, 1};
    k.product_count = 1;
    k.flops = k.products[0].flops();
    return k;
  };
  const double narrow = pm.time_s(shaped(640, 640, 16384)), wide = pm.time_s(shaped(640, 1280, 16384));
  EXPECT_NEAR(narrow, 2 * 640.0 * 640 * 16384 / (989.4e12 * 0.8 * 100 / 132), 1e-12);
  EXPECT_NEAR(wide / narrow, 200.0 / 132, 1e-9);
  // A GEMM filling the GPU: the work at e_max; its batch counts its tiles.
  EXPECT_NEAR(pm.time_s(shaped(8192, 8192, 8192)), 2 * 8192.0 * 8192 * 8192 / (989.4e12 * 0.8), 1e-12);
  sim::Kernel batched = shaped(640, 640, 16384);
  batched.products[0].batch = 2;
  EXPECT_NEAR(pm.time_s(batched) / narrow, 200.0 / 132, 1e-9);
  // k_fill: a reduction of depth d costs as one of d + k_fill.
  g.k_fill = 512;
  EXPECT_NEAR(PerfModel(h100, e).time_s(shaped(8192, 8192, 1024)), 2 * 8192.0 * 8192 * 1536 / (989.4e12 * 0.8), 1e-12);
}

// An fp8 GEMM takes the fp8 fit where there is one, the GEMM class at the fp8 peak where
// not; it reads its operands at a byte an element and writes its output in bf16. Hand-worked
// on the H100 (no launch, no half time): 8192^3 at e_max 0.7 of 1978.9 TFLOP/s, against 0.8
// of it; a 2 x 3 output over a depth of 4 moves (2 x 4 + 4 x 3) x 1 + 2 x 3 x 2 = 32 bytes
// in fp8, (8 + 12 + 6) x 2 = 52 in bf16.
TEST(PerfModel, Fp8GemmsTakeTheirOwnFitAndWriteBf16) {
  const GpuSpec& h100 = gpu_spec("H100-SXM-80GB");
  Efficiency e = Efficiency::defaults();
  e.per_class[0] = {0.8, 0, 0.9, 0, 0};
  sim::Kernel k;
  k.products[0] = {8192, 8192, 8192, 1};
  k.product_count = 1;
  k.dtype = sim::DType::FP8;
  const double work = 2 * 8192.0 * 8192 * 8192;
  EXPECT_NEAR(PerfModel(h100, e).time_s(k), work / (1978.9e12 * 0.8), 1e-12);
  e.gemm_fp8 = OpEfficiency{0.7, 0, 0.9, 0, 0};
  EXPECT_NEAR(PerfModel(h100, e).time_s(k), work / (1978.9e12 * 0.7), 1e-12);
  k.dtype = sim::DType::BF16;  // a 16-bit GEMM keeps its class
  EXPECT_NEAR(PerfModel(h100, e).time_s(k), work / (989.4e12 * 0.8), 1e-12);
  EXPECT_DOUBLE_EQ(gemm_bytes({2, 3, 4, 1}, sim::DType::FP8), 32);
  EXPECT_DOUBLE_EQ(gemm_bytes({2, 3, 4, 1}, sim::DType::BF16), 52);
  // The shipped H100 and H200 carry the H100's fp8 fit; the A100 (no fp8) none.
  EXPECT_TRUE(Efficiency::defaults_for(h100).gemm_fp8.has_value());
  EXPECT_TRUE(Efficiency::defaults_for(gpu_spec("H200-SXM-141GB")).gemm_fp8.has_value());
  EXPECT_FALSE(Efficiency::defaults_for(gpu_spec("A100-SXM-80GB")).gemm_fp8.has_value());
}

TEST(GpuCatalog, KnowsTheIssueGpusAndRejectsOthers) {
  for (const char* n : {"A100-SXM-40GB", "A100-SXM-80GB", "H100-SXM-80GB", "V100-SXM2-32GB", "L4", "T4"})
    EXPECT_TRUE(has_gpu(n)) << n;
  EXPECT_DOUBLE_EQ(gpu_spec("A100-SXM-80GB").peak_bf16, 312e12);
  EXPECT_THROW(gpu_spec("A200"), Error);
}

TEST(GpuCatalog, TodaysGpusWithTheirDatasheetRelations) {
  for (const char* n : {"H100-PCIe-80GB", "H200-SXM-141GB", "B200-SXM-180GB", "GB200-186GB", "GB300-288GB",
                        "MI300X-192GB", "MI325X-256GB", "L40S", "A10", "RTX-4090"})
    EXPECT_TRUE(has_gpu(n)) << n;
  for (const GpuSpec& g : gpu_catalog()) {
    EXPECT_FALSE(g.source.empty()) << g.name;
    EXPECT_FALSE(g.gpu_link.empty()) << g.name;
    EXPECT_GT(g.memory_bytes, 0) << g.name;
    EXPECT_GT(g.memory_bandwidth_Bps, 0) << g.name;
    // Dense tensor-core rates double as the precision halves, bf16 -> fp8 -> fp4, on every
    // part that has them (the vendors' tables, to their rounding: the L40S lists bf16 at
    // 362.05 and fp8 at 733 TFLOPS).
    if (g.peak_fp8 > 0) {
      EXPECT_NEAR(g.peak_fp8 / g.peak_fp16, 2.0, 0.03) << g.name;
    }
    // Blackwell Ultra's fp4 runs at three times its fp8 (ml-engineering's table, from NVIDIA's
    // GB300 NVL72 page: 15,000 against 5,000 dense TFLOPS a GPU).
    if (g.peak_fp4 > 0) {
      EXPECT_NEAR(g.peak_fp4 / g.peak_fp8, g.name.rfind("GB300", 0) == 0 ? 3.0 : 2.0, 0.03) << g.name;
    }
    // A measured kernel never runs above the datasheet.
    for (const MeasuredKernel& m : g.measured) {
      EXPECT_GT(m.compute_max, 0) << g.name;
      EXPECT_LE(m.compute_max, 1) << g.name;
      EXPECT_LE(m.memory, 1) << g.name;
    }
    EXPECT_EQ(g.has_measurements(), !g.measured_from.empty()) << g.name;
  }
  // fp4 exists only from Blackwell on; the H100 has none.
  EXPECT_EQ(gpu_spec("H100-SXM-80GB").peak_flops(sim::DType::FP4), 0);
  EXPECT_DOUBLE_EQ(gpu_spec("B200-SXM-180GB").peak_flops(sim::DType::FP4), 9000e12);
  EXPECT_DOUBLE_EQ(sim::dtype_bytes(sim::DType::FP4), 0.5);
}

TEST(GpuCatalog, MeasuredKernelsReplaceTheDefaultsClassByClass) {
  // The B200's GEMMs were fitted (XLA's sm_100 table) and its FlashAttention solved from one
  // in-step figure; its Triton attention was not measured.
  const Efficiency b200 = Efficiency::defaults_for(gpu_spec("B200-SXM-180GB"));
  const Efficiency none = Efficiency::defaults();
  const auto gemm = static_cast<size_t>(sim::OpClass::Gemm), flash = static_cast<size_t>(sim::OpClass::FlashAttention),
             triton = static_cast<size_t>(sim::OpClass::TritonAttention);
  EXPECT_NEAR(b200.per_class[gemm].compute_max, 0.708, 0.001);
  EXPECT_NEAR(b200.per_class[flash].compute_max, 0.557, 0.001);
  EXPECT_EQ(b200.per_class[triton].compute_max, none.per_class[triton].compute_max);
  EXPECT_EQ(Efficiency::defaults_for(gpu_spec("L40S")).per_class[gemm].compute_max, none.per_class[gemm].compute_max);
}

TEST(PerfModel, FusedAttentionByHeadSizeHandWorked) {
  // e_max 0.5, a score's softmax 32 head-size terms, passes at half of HBM, doubled under a
  // causal mask, no launch. A100: 312 TFLOP/s bf16, 2039 GB/s. 1 TFLOP over heads of 64:
  // 1e12 x 1.5 / 156e12 = 9.615 ms; of 128: 1e12 x 1.25 / 156e12 = 8.013 ms. 1 GB of
  // passes: 1e9 / 1019.5e9 = 0.981 ms, 1.962 ms causal.
  Efficiency eff = Efficiency::defaults();
  eff.per_class[static_cast<size_t>(sim::OpClass::FlashAttention)] = {0.5, 0, 0.5, 0, 32, 1};
  const PerfModel pm(gpu_spec("A100-SXM-80GB"), eff);
  sim::Kernel k{sim::OpClass::FlashAttention, 1e12, 1e9, sim::DType::BF16};
  k.head_dim = 64;
  EXPECT_NEAR(pm.time_s(k), 9.615e-3 + 0.981e-3, 2e-6);
  k.head_dim = 128;
  EXPECT_NEAR(pm.time_s(k), 8.013e-3 + 0.981e-3, 2e-6);
  k.causal = true;
  EXPECT_NEAR(pm.time_s(k), 8.013e-3 + 1.962e-3, 2e-6);
  // Without a head size (a kernel from elsewhere), the roofline: max, not sum.
  k.head_dim = 0;
  EXPECT_NEAR(pm.time_s(k), 1e12 / 156e12, 1e-6);
}

// A step calibration's factors: every kernel's time over step, attention kernels' (unfused,
// FlashAttention, Triton) over step x attention_step. Elementwise 1 GB at 80% of 2039 GB/s,
// no launch: 0.6130 ms, / 0.5 = 1.226 ms. FlashAttention as above (heads of 128): 8.994 ms,
// / (0.5 x 0.8) = 22.49 ms.
TEST(PerfModel, StepFactorsDivideKernelsAndAttentionApart) {
  Efficiency eff = Efficiency::defaults();
  eff.per_class[static_cast<size_t>(sim::OpClass::FlashAttention)] = {0.5, 0, 0.5, 0, 32, 1};
  eff.per_class[static_cast<size_t>(sim::OpClass::Elementwise)] = {0.5, 5e-6, 0.8, 0};
  eff.step = 0.5;
  eff.attention_step = 0.8;
  const PerfModel pm(gpu_spec("A100-SXM-80GB"), eff);
  EXPECT_NEAR(pm.time_s({sim::OpClass::Elementwise, 0, 1e9, sim::DType::BF16}), 1.226e-3, 1e-6);
  sim::Kernel k{sim::OpClass::FlashAttention, 1e12, 1e9, sim::DType::BF16};
  k.head_dim = 128;
  EXPECT_NEAR(pm.time_s(k), 22.49e-3, 1e-5);
  // Unfused attention is an attention kernel too; a GEMM is not.
  EXPECT_TRUE(attention_class(sim::OpClass::Attention));
  EXPECT_TRUE(attention_class(sim::OpClass::TritonAttention));
  EXPECT_TRUE(attention_class(sim::OpClass::CudnnAttention));
  EXPECT_FALSE(attention_class(sim::OpClass::Gemm));
}

}  // namespace dejavu::platforms
