// Prices one kernel on one GPU type: a roofline with an efficiency per op class.
//
//   time = launch + max(flops / (peak(dtype) * e(flops)), bytes / (hbm_bw * e_mem))
//   e(flops) = e_max * flops / (flops + peak(dtype) * t_half)
//
// e(flops) is a saturating curve: large GEMMs approach e_max (about 80% of peak for bf16
// on A100), a GEMM that would take t_half at peak reaches half of it. Memory-bound
// kernels reach e_mem of the HBM bandwidth.
//
// A GEMM whose shape is known (rows x cols outputs, each a dot product of depth terms) is
// priced by its shape instead, product by product:
//
//   compute = t_half / e_max + 2 b rows cols (depth + k_fill) / (peak e_max occupancy)
//   bytes   = b (rows depth + depth cols + rows cols) dtype    (fp8/fp4: the output in bf16)
//   occupancy = min(1, tiles / SMs), tiles = b ceil(rows / 64) ceil(cols / 64)
//
// k_fill is the per-output cost of filling and draining a tile's pipeline, in terms of
// depth: a narrow reduction (a row-parallel layer's h / tp) runs below e_max. A product
// with fewer 64 x 64 output tiles than the GPU has SMs leaves SMs idle. Per-GPU defaults
// are fitted to public GEMM measurements (Efficiency::defaults_for); fp8 and fp4 GEMMs by their
// own fit where one was measured apart (Efficiency::gemm_fp8: the H100's; gemm_fp4: the GB300's);
// MXFP8's block-scaled ones take Efficiency::mxfp8_gemm_time times the per-tensor ones' time.
// An fp8 or fp4 GEMM's input casts (Kernel::cast_bytes) move at the quantization's memory share
// where it was measured (Efficiency::quantize_fp8 per scaling recipe, quantize_fp4: Hopper's and
// Blackwell's), else the element-wise class's. A kernel's default fp8 recipe is Transformer
// Engine's for the GPU (sim::resolve_fp8_recipe).
//
// A fused attention kernel (FlashAttention, Triton) whose head size d is known is priced by
// it when its class was fitted that way (causal_extra >= 0):
//
//   time = launch + (t_half + flops (1 + k_fill / d) / peak) / e_max
//               + bytes (1 + causal_extra [causal]) / (hbm_bw e_mem)
//
// Each score costs the tile products' 2d terms plus k_fill more (the softmax's exponentials
// and rescaling, which do not shrink with d: a 64-wide head runs further below peak than a
// 128-wide one); the passes over Q, K, V, O and their gradients add to the matrix work
// rather than hide under it (they happen between a tile's products), and a causal mask
// makes them longer by causal_extra (the diagonal tiles computed whole and masked, scaling
// with tokens like the passes do).
#pragma once

#include <array>
#include <optional>

#include "platforms/gpu_catalog.h"
#include "sim/kernel.h"

namespace dejavu::platforms {

struct OpEfficiency {
  double compute_max = 0.8;   // e_max
  double half_time_s = 5e-6;  // t_half
  double memory = 0.8;        // e_mem
  double launch_s = 2e-6;     // per kernel
  double k_fill = 0;          // a shaped GEMM's pipeline fill, in reduction elements; fused
                              // attention by head size: a score's softmax, in head-size terms
  double causal_extra = -1;   // fused attention: < 0 a roofline; >= 0 priced by head size
};

// The output tile whose count, against the GPU's SMs, gives a shaped GEMM's occupancy.
constexpr double kOccupancyTile = 64;
// A product's work at e_max: 2 b rows cols (depth + k_fill) / occupancy.
double gemm_work(const sim::GemmShape& p, const GpuSpec& gpu, double k_fill);
double gemm_bytes(const sim::GemmShape& p, sim::DType dtype);

struct Efficiency {
  std::array<OpEfficiency, sim::kOpClasses> per_class;  // indexed by sim::OpClass
  // The share of their isolated speed a software stack's kernels reach inside a training
  // step (host launch gaps, SMs lent to NCCL, the allocator): every kernel's time is divided
  // by it. 1 unless a step calibration (`dejavu calibrate --suite`) fitted it to a
  // framework's measured steps.
  double step = 1;
  // The attention kernels' own share beside it (unfused, FlashAttention, Triton): their time
  // is divided by step * attention_step. 1 unless a step calibration fitted the two apart.
  double attention_step = 1;
  // Host time a software stack spends once an iteration outside its kernels (the loss read
  // back for logging, gradient clipping's norm, callbacks, the next batch), seconds: run on
  // each GPU after its optimizer step. 0 unless a step calibration fitted it to a
  // framework's measured steps, where short steps tell it apart from the step efficiency.
  double step_overhead_s = 0;
  // The three step factors above came from a step calibration of no one framework or GPU type
  // (`gpu: any`, `--calibration typical`), not from the stack's own fit.
  bool step_typical = false;
  // GEMMs in a narrow precision by shape, where measured apart: an H100 runs fp8 GEMMs at a
  // smaller share of its fp8 peak than bf16 GEMMs reach of theirs, a Blackwell Ultra fp4 GEMMs at
  // a smaller share still. Without one they take the GEMM class at their precision's peak.
  // gemm_fp8 is the per-tensor scaled kernels' (delayed, tensorwise); MXFP8's block-scaled
  // kernels take mxfp8_gemm_time times as long (GpuSpec::mxfp8_gemm_time where measured).
  std::optional<OpEfficiency> gemm_fp8, gemm_fp4;
  double mxfp8_gemm_time = 1;
  // Transformer Engine's quantization of a narrow GEMM's inputs (amax, scales; for fp4 also the
  // Hadamard transforms and stochastic rounding), where measured: the casts' bytes (read 16-bit,
  // write narrow) at its memory share, plus its launch. Without one, the element-wise class's.
  // fp8's per scaling recipe, in sim::fp8_recipes() order.
  std::array<std::optional<OpEfficiency>, sim::kFp8Recipes> quantize_fp8;
  std::optional<OpEfficiency> quantize_fp4;
  // The fit of fp8 or fp4 (`d`) under a named fp8 `recipe` (ignored for fp4): its GEMMs', or
  // with `cast` its quantization's.
  std::optional<OpEfficiency>& narrow(sim::DType d, bool cast, sim::Fp8Recipe recipe);
  const std::optional<OpEfficiency>& narrow(sim::DType d, bool cast, sim::Fp8Recipe recipe) const;
  static Efficiency defaults();
  // The defaults with what was measured on this GPU type (its GEMMs) in place.
  static Efficiency defaults_for(const GpuSpec& gpu);
};

// A GEMM in fp8 or fp4: priced by Efficiency::gemm_fp8 or gemm_fp4 where there is one, fitted
// apart by calibrate.
bool narrow_gemm(sim::OpClass c, sim::DType d);
// Any attention kernel: unfused or fused (sim::fused_attention: FlashAttention, Triton, cuDNN).
bool attention_class(sim::OpClass c);

class PerfModel {
 public:
  explicit PerfModel(const GpuSpec& gpu);
  PerfModel(const GpuSpec& gpu, Efficiency eff);
  // Throws ModelError if the GPU has no support for the kernel's data type.
  double time_s(const sim::Kernel& k) const;
  const GpuSpec& gpu() const { return gpu_; }
  double step_overhead_s() const { return eff_.step_overhead_s; }

 private:
  double kernel_s(const sim::Kernel& k) const;
  const OpEfficiency& efficiency_of(const sim::Kernel& k) const;
  double product_s(const sim::GemmShape& p, const OpEfficiency& e, double peak, sim::DType dtype) const;
  double attention_s(const sim::Kernel& k, const OpEfficiency& e) const;
  double cast_s(const sim::Kernel& k, sim::Fp8Recipe recipe) const;  // a narrow GEMM's input casts
  // An fp8 kernel's recipe on this GPU (its default resolved); throws ModelError for MXFP8 on a
  // GPU without MX formats.
  sim::Fp8Recipe recipe_of(const sim::Kernel& k) const;
  double peak_of(sim::DType dtype) const;

  GpuSpec gpu_;
  Efficiency eff_;
};

}  // namespace dejavu::platforms
