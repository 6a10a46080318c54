// GPU types the build knows: peak dense throughput per data type, memory, the GPU-to-GPU
// link, and the kernel speeds public measurements give (docs/HARDWARE.md lists them with
// their sources; `dejavu list` prints them).
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

// One kernel class's speed on a GPU type, fitted by `dejavu calibrate` to public kernel
// measurements (the parameters of perf_model.h's OpEfficiency).
struct MeasuredKernel {
  sim::OpClass op_class = sim::OpClass::Gemm;
  double compute_max = 0.8, half_time_s = 5e-6, memory = 0.8, launch_s = 2e-6, k_fill = 0;
  double causal_extra = -1;  // fused attention priced by head size when >= 0 (perf_model.h)
  // FP8 or FP4: a fit for that precision only, of its GEMMs (op_class Gemm) or, with `cast`,
  // of the quantization feeding them (Efficiency::quantize_fp8, quantize_fp4). BF16: the class's.
  sim::DType narrow = sim::DType::BF16;
  bool cast = false;
  // An fp8 cast fit's scaling recipe (Default: every recipe's).
  sim::Fp8Recipe recipe = sim::Fp8Recipe::Default;
};

struct GpuSpec {
  std::string name;
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  double gpu_link_bandwidth_Bps = 0;  // NVLink / xGMI per GPU, per direction; 0: PCIe only
  double peak_fp32 = 0, peak_tf32 = 0, peak_fp16 = 0, peak_bf16 = 0, peak_fp8 = 0, peak_fp4 = 0;  // FLOP/s
  int sms = 0;                 // streaming multiprocessors (CUs on AMD; 0: not published, occupancy not modelled)
  bool mx_formats = false;     // block-scaled MX formats (MXFP8, NVFP4) in its tensor cores: Blackwell
  double mxfp8_gemm_time = 1;  // MXFP8 GEMM kernels' time over per-tensor fp8 ones' (where measured)
  std::string gpu_link{};      // "NVLink 4", "xGMI", "PCIe 4.0"
  std::string source{};        // where the figures above come from
  std::vector<MeasuredKernel> measured{};         // kernel classes fitted to measurements
  std::string measured_from{};                    // those measurements; empty when there are none
  double cuda_context_bytes = kCudaContextBytes;  // CUDA context and loaded kernels
  double nccl_buffers_bytes = kNcclBuffersBytes;  // NCCL communicators

  double peak_flops(sim::DType d) const;  // 0 when the GPU has no fast path for `d`
  bool has_measurements() const { return !measured.empty(); }
};

const std::vector<GpuSpec>& gpu_catalog();
// Throws Error listing the valid names when `name` is unknown.
const GpuSpec& gpu_spec(const std::string& name);
bool has_gpu(const std::string& name);
std::string gpu_names();

}  // namespace dejavu::platforms
