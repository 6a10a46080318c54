#include "platforms/gpu_catalog.h"

#include "sim/error.h"

namespace dejavu::platforms {

double GpuSpec::peak_flops(sim::DType d) const {
  switch (d) {
    case sim::DType::FP32:
      return peak_fp32;
    case sim::DType::TF32:
      return peak_tf32;
    case sim::DType::FP16:
      return peak_fp16;
    case sim::DType::BF16:
      return peak_bf16;
    case sim::DType::FP8:
      return peak_fp8;
  }
  return 0;
}

const std::vector<GpuSpec>& gpu_catalog() {
  constexpr double GiB = 1073741824.0, GBps = 1e9, T = 1e12;
  // name, memory, HBM bandwidth, NVLink per direction, fp32, tf32, fp16, bf16, fp8, SMs
  static const std::vector<GpuSpec> catalog = {
      {"A100-SXM-40GB", 40 * GiB, 1555 * GBps, 300 * GBps, 19.5 * T, 156 * T, 312 * T, 312 * T, 0, 108},
      {"A100-SXM-80GB", 80 * GiB, 2039 * GBps, 300 * GBps, 19.5 * T, 156 * T, 312 * T, 312 * T, 0, 108},
      {"H100-SXM-80GB", 80 * GiB, 3350 * GBps, 450 * GBps, 67 * T, 494.5 * T, 989.4 * T, 989.4 * T, 1978.9 * T, 132},
      {"V100-SXM2-32GB", 32 * GiB, 900 * GBps, 150 * GBps, 15.7 * T, 0, 125 * T, 0, 0, 80},
      {"L4", 24 * GiB, 300 * GBps, 0, 30.3 * T, 60 * T, 121 * T, 121 * T, 242 * T, 58},
      {"T4", 16 * GiB, 320 * GBps, 0, 8.1 * T, 0, 65 * T, 0, 0, 40},
  };
  return catalog;
}

bool has_gpu(const std::string& name) {
  for (const auto& g : gpu_catalog())
    if (g.name == name) return true;
  return false;
}

std::string gpu_names() {
  std::string out;
  for (const auto& g : gpu_catalog()) out += (out.empty() ? "" : ", ") + g.name;
  return out;
}

const GpuSpec& gpu_spec(const std::string& name) {
  for (const auto& g : gpu_catalog())
    if (g.name == name) return g;
  throw Error("unknown GPU type \"" + name + "\"; valid: " + gpu_names());
}

}  // namespace dejavu::platforms
