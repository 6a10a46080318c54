// GPU types the build knows: peak dense throughput per data type, memory, NVLink.
// Figures are the vendors' published datasheet numbers (dense, no sparsity).
#pragma once

#include <string>
#include <vector>

#include "sim/kernel.h"

namespace dejavu::platforms {

// Memory a training process holds on a GPU before the model's first byte, when the platform
// does not say (its `reserved_memory`). Measured on an A100 80GB by stas00/ml-engineering
// (training/performance/README.md@744d01e1, "Additional GPU memory usage"): the CUDA context
// with every kernel PyTorch 2.1.1 loads, 0.92 GiB; torch.distributed's NCCL initialisation,
// 1.45 GiB more (0.55 to 2.00 GiB on the first barrier; "the more GPUs the higher"). No
// public figure for another GPU type: every catalog entry uses these.
constexpr double kCudaContextBytes = 0.92 * 1073741824.0;
constexpr double kNcclBuffersBytes = 1.45 * 1073741824.0;

struct GpuSpec {
  std::string name;
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  double nvlink_bandwidth_Bps = 0;  // per GPU, per direction; 0 without NVLink
  double peak_fp32 = 0, peak_tf32 = 0, peak_fp16 = 0, peak_bf16 = 0, peak_fp8 = 0;  // FLOP/s
  int sms = 0;  // streaming multiprocessors (0: unknown; a GEMM's occupancy is then not modelled)
  double cuda_context_bytes = kCudaContextBytes;  // CUDA context and loaded kernels
  double nccl_buffers_bytes = kNcclBuffersBytes;  // NCCL communicators

  double peak_flops(sim::DType d) const;  // 0 when the GPU has no fast path for `d`
};

const std::vector<GpuSpec>& gpu_catalog();
// Throws Error listing the valid names when `name` is unknown.
const GpuSpec& gpu_spec(const std::string& name);
bool has_gpu(const std::string& name);
std::string gpu_names();

}  // namespace dejavu::platforms
