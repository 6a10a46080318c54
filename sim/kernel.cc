#include "sim/kernel.h"

namespace dejavu::sim {

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::Gemm:
      return "gemm";
    case OpClass::Attention:
      return "attention";
    case OpClass::Elementwise:
      return "elementwise";
    case OpClass::Norm:
      return "norm";
    case OpClass::Embedding:
      return "embedding";
    case OpClass::Optimizer:
      return "optimizer";
    case OpClass::FlashAttention:
      return "flash_attention";
    case OpClass::TritonAttention:
      return "triton_attention";
    case OpClass::CudnnAttention:
      return "cudnn_attention";
  }
  return "?";
}

const char* to_string(DType d) {
  switch (d) {
    case DType::FP32:
      return "fp32";
    case DType::TF32:
      return "tf32";
    case DType::FP16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::FP8:
      return "fp8";
    case DType::FP4:
      return "fp4";
  }
  return "?";
}

double dtype_bytes(DType d) {
  switch (d) {
    case DType::FP32:
    case DType::TF32:
      return 4;
    case DType::FP16:
    case DType::BF16:
      return 2;
    case DType::FP8:
      return 1;
    case DType::FP4:
      return 0.5;
  }
  return 4;
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = {DType::FP32, DType::TF32, DType::FP16, DType::BF16, DType::FP8, DType::FP4};
  return all;
}

bool parse_dtype(const std::string& name, DType* out) {
  for (DType d : all_dtypes()) {
    if (name == to_string(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

bool narrow_gemm(DType d) { return d == DType::FP8 || d == DType::FP4; }

DType storage_of(DType d) { return narrow_gemm(d) ? DType::BF16 : d; }

const char* dtype_names() { return "fp32, tf32, fp16, bf16, fp8, fp4"; }

}  // namespace dejavu::sim
