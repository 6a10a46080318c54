// A generic kernel description: what platforms/ prices and workloads/ produce, so the
// performance model needs no workload types.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sim/fp8_recipe.h"

namespace dejavu::sim {

// Attention: unfused (batched matmuls, softmax over the stored score matrix);
// FlashAttention: one fused, compute-bound kernel that keeps no score matrix (CUDA,
// FlashAttention-2 and its kin); TritonAttention: the same algorithm in Triton (HazyResearch's
// flash_attn_triton, MosaicML llm-foundry's `attn_impl: triton`), under half as fast on A100;
// CudnnAttention: cuDNN's fused kernel of the same algorithm (Transformer Engine's
// FusedAttention, which it picks over FlashAttention on Hopper and later), 1.6x
// FlashAttention-2's forward on an H100 at heads of 128.
enum class OpClass {
  Gemm,
  Attention,
  Elementwise,
  Norm,
  Embedding,
  Optimizer,
  FlashAttention,
  TritonAttention,
  CudnnAttention
};
constexpr int kOpClasses = 9;
// A fused attention kernel's class (FlashAttention's algorithm, in any of its implementations).
constexpr bool fused_attention(OpClass c) {
  return c == OpClass::FlashAttention || c == OpClass::TritonAttention || c == OpClass::CudnnAttention;
}
enum class DType { FP32, TF32, FP16, BF16, FP8, FP4 };

const char* to_string(OpClass c);
const char* to_string(DType d);
double dtype_bytes(DType d);
// Parses "bf16", "fp16", ...; returns false for an unknown name.
bool parse_dtype(const std::string& name, DType* out);
const char* dtype_names();  // "fp32, tf32, fp16, bf16, fp8, fp4"

// One matrix product of a GEMM kernel: `batch` products whose output is rows x cols, each
// element a dot product of `depth` terms (A[rows, depth] @ B[depth, cols]).
struct GemmShape {
  double rows = 0, cols = 0, depth = 0, batch = 1;
  double flops() const { return 2 * batch * rows * cols * depth; }
};

struct Kernel {
  OpClass op_class = OpClass::Gemm;
  double flops = 0;  // floating-point operations
  double bytes = 0;  // bytes moved to and from device memory
  DType dtype = DType::BF16;
  // A GEMM's products when their shapes are known (a forward: one; a whole backward: the
  // input gradient and the weight gradient); the performance model then prices each by its
  // shape and `flops` and `bytes` are the sums. None: priced by flops and bytes alone.
  std::array<GemmShape, 2> products{};
  int product_count = 0;
  // An fp8 or fp4 GEMM's quantisation: bytes the casts of its inputs move (read 16-bit, write
  // narrow), priced as an element-wise kernel beside it.
  double cast_bytes = 0;
  // An fp8 GEMM's scaling recipe: what its casts cost, and under MXFP8 its kernel.
  Fp8Recipe fp8_recipe = Fp8Recipe::Default;
  // A fused attention kernel's head size and mask (0: unknown): with them it is priced by
  // head size (perf_model.h).
  double head_dim = 0;
  bool causal = false;
};

// fp8 and fp4 are GEMM precisions, as Transformer Engine runs them: GEMM inputs are cast to
// them and GEMMs run at their peak, while activations, weights and gradients are kept in
// bf16 (and the optimizer's master weights in fp32). storage_of gives what tensors are kept
// in: bf16 for those two, the dtype itself otherwise.
bool narrow_gemm(DType d);
const std::vector<DType>& all_dtypes();  // fp32, tf32, fp16, bf16, fp8, fp4
DType storage_of(DType d);

}  // namespace dejavu::sim
