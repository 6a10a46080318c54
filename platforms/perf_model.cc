#include "platforms/perf_model.h"

#include <algorithm>

#include "sim/error.h"

namespace dejavu::platforms {

Efficiency Efficiency::defaults() {
  Efficiency e;
  using C = sim::OpClass;
  auto at = [&](C c) -> OpEfficiency& { return e.per_class[static_cast<size_t>(c)]; };
  at(C::Gemm) = {0.80, 5e-6, 0.80, 2e-6};
  // Unfused attention: batched matmuls plus softmax over the score matrix.
  at(C::Attention) = {0.60, 5e-6, 0.70, 2e-6};
  at(C::Elementwise) = {0.50, 5e-6, 0.80, 2e-6};
  at(C::Norm) = {0.50, 5e-6, 0.70, 2e-6};
  at(C::Embedding) = {0.50, 5e-6, 0.60, 2e-6};
  at(C::Optimizer) = {0.50, 5e-6, 0.80, 2e-6};
  // FlashAttention-2, fitted to its published A100 forward + backward throughput
  // (`dejavu calibrate --gpu A100-SXM-80GB --measurements
  // platforms/calibration/flash_attention_a100.csv`: e_max 0.618, 6.1% error on held-out
  // rows). Each row times a forward and a backward call, so one call's t_half is half the
  // fitted intercept's 388 us.
  at(C::FlashAttention) = {0.618, 194e-6, 0.80, 2e-6};
  return e;
}

PerfModel::PerfModel(const GpuSpec& gpu, Efficiency eff) : gpu_(gpu), eff_(eff) {}

double PerfModel::time_s(const sim::Kernel& k) const {
  const OpEfficiency& e = eff_.per_class.at(static_cast<size_t>(k.op_class));
  double compute = 0;
  if (k.flops > 0) {
    const double peak = gpu_.peak_flops(k.dtype);
    if (peak <= 0)
      throw ModelError("GPU " + gpu_.name + " has no " + sim::to_string(k.dtype) +
                       " support; choose a dtype it has (for example fp16)");
    const double eff = e.compute_max * k.flops / (k.flops + peak * e.half_time_s);
    compute = k.flops / (peak * eff);
  }
  const double memory = k.bytes > 0 ? k.bytes / (gpu_.memory_bandwidth_Bps * e.memory) : 0;
  return e.launch_s + std::max(compute, memory);
}

}  // namespace dejavu::platforms
