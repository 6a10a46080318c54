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

TEST(GpuCatalog, KnowsTheIssueGpusAndRejectsOthers) {
  for (const char* n : {"A100-SXM-40GB", "A100-SXM-80GB", "H100-SXM-80GB", "V100-SXM2-32GB", "L4", "T4"})
    EXPECT_TRUE(has_gpu(n)) << n;
  EXPECT_DOUBLE_EQ(gpu_spec("A100-SXM-80GB").peak_bf16, 312e12);
  EXPECT_THROW(gpu_spec("A200"), Error);
}

}  // namespace dejavu::platforms
