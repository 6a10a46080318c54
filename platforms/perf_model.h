// Prices one kernel on one GPU type: a roofline with an efficiency per op class.
//
//   time = launch + max(flops / (peak(dtype) * e(flops)), bytes / (hbm_bw * e_mem))
//   e(flops) = e_max * flops / (flops + peak(dtype) * t_half)
//
// e(flops) is a saturating curve: large GEMMs approach e_max (about 80% of peak for bf16
// on A100), a GEMM that would take t_half at peak reaches half of it. Memory-bound
// kernels reach e_mem of the HBM bandwidth. Defaults are public, order-of-magnitude
// figures; the calibration issue fits them per GPU from measurements.
#pragma once

#include <array>

#include "platforms/gpu_catalog.h"
#include "sim/kernel.h"

namespace dejavu::platforms {

struct OpEfficiency {
  double compute_max = 0.8;   // e_max
  double half_time_s = 5e-6;  // t_half
  double memory = 0.8;        // e_mem
  double launch_s = 2e-6;     // per kernel
};

struct Efficiency {
  std::array<OpEfficiency, sim::kOpClasses> per_class;  // indexed by sim::OpClass
  static Efficiency defaults();
};

class PerfModel {
 public:
  PerfModel(const GpuSpec& gpu, Efficiency eff = Efficiency::defaults());
  // Throws ModelError if the GPU has no support for the kernel's data type.
  double time_s(const sim::Kernel& k) const;
  const GpuSpec& gpu() const { return gpu_; }

 private:
  GpuSpec gpu_;
  Efficiency eff_;
};

}  // namespace dejavu::platforms
