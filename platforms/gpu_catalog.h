// GPU types the build knows: peak dense throughput per data type, memory, NVLink.
// Figures are the vendors' published datasheet numbers (dense, no sparsity).
#pragma once

#include <string>
#include <vector>

#include "sim/kernel.h"

namespace dejavu::platforms {

struct GpuSpec {
  std::string name;
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  double nvlink_bandwidth_Bps = 0;  // per GPU, per direction; 0 without NVLink
  double peak_fp32 = 0, peak_tf32 = 0, peak_fp16 = 0, peak_bf16 = 0, peak_fp8 = 0;  // FLOP/s
  int sms = 0;  // streaming multiprocessors (0: unknown; a GEMM's occupancy is then not modelled)

  double peak_flops(sim::DType d) const;  // 0 when the GPU has no fast path for `d`
};

const std::vector<GpuSpec>& gpu_catalog();
// Throws Error listing the valid names when `name` is unknown.
const GpuSpec& gpu_spec(const std::string& name);
bool has_gpu(const std::string& name);
std::string gpu_names();

}  // namespace dejavu::platforms
