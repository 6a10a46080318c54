// A generic kernel description: what platforms/ prices and workloads/ produce, so the
// performance model needs no workload types.
#pragma once

#include <string>

namespace dejavu::sim {

// Attention: unfused (batched matmuls, softmax over the stored score matrix);
// FlashAttention: one fused, compute-bound kernel that keeps no score matrix.
enum class OpClass { Gemm, Attention, Elementwise, Norm, Embedding, Optimizer, FlashAttention };
constexpr int kOpClasses = 7;
enum class DType { FP32, TF32, FP16, BF16, FP8 };

const char* to_string(OpClass c);
const char* to_string(DType d);
double dtype_bytes(DType d);
// Parses "bf16", "fp16", ...; returns false for an unknown name.
bool parse_dtype(const std::string& name, DType* out);
const char* dtype_names();  // "fp32, tf32, fp16, bf16, fp8"

struct Kernel {
  OpClass op_class = OpClass::Gemm;
  double flops = 0;  // floating-point operations
  double bytes = 0;  // bytes moved to and from device memory
  DType dtype = DType::BF16;
};

}  // namespace dejavu::sim
