#include "platforms/perf_model.h"

#include <algorithm>
#include <cmath>

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
  // FlashAttention-2, fitted by head size to its published A100 forward + backward
  // throughput, causal and not, heads of 64 and 128 (`dejavu calibrate --gpu A100-SXM-80GB
  // --measurements platforms/calibration/flash_attention_a100.csv`): e_max 0.764, a score's
  // softmax 23.1 head-size terms, passes at 93% of HBM, x1.50 under a causal mask; 2.2% mean
  // |error| on the 4 held-out rows (6.1% as a roofline).
  at(C::FlashAttention) = {0.763977, 0, 0.926871, 2e-6, 23.0985, 0.499342};
  // FlashAttention in Triton (HazyResearch's flash_attn_triton), fitted to its published A100
  // causal forward + backward throughput beside FlashAttention-2's (`dejavu calibrate --gpu
  // A100-SXM-80GB --measurements platforms/calibration/triton_attention_a100.csv`: e_max
  // 0.262, 2.3% error on held-out rows): well under half FlashAttention-2's speed.
  at(C::TritonAttention) = {0.262, 87.5e-6, 0.80, 2e-6};
  // cuDNN's fused attention where no figure times it: FlashAttention-2's (Transformer Engine
  // runs FlashAttention-2 rather than cuDNN before Hopper, and no public figure times cuDNN's
  // kernel on an A100).
  at(C::CudnnAttention) = at(C::FlashAttention);
  return e;
}

// What was measured on this GPU type (gpu_catalog.cc: GEMMs by shape, attention kernels)
// replaces the defaults class by class.
Efficiency Efficiency::defaults_for(const GpuSpec& gpu) {
  Efficiency e = defaults();
  e.mxfp8_gemm_time = gpu.mxfp8_gemm_time;
  for (const MeasuredKernel& m : gpu.measured) {
    const OpEfficiency fitted{m.compute_max, m.half_time_s, m.memory, m.launch_s, m.k_fill, m.causal_extra};
    if (!sim::narrow_gemm(m.narrow)) {
      e.per_class[static_cast<size_t>(m.op_class)] = fitted;
    } else if (m.narrow == sim::DType::FP8 && m.cast && m.recipe == sim::Fp8Recipe::Default) {
      for (const sim::Fp8RecipeEntry& r : sim::fp8_recipes()) e.narrow(m.narrow, true, r.recipe) = fitted;
    } else {
      e.narrow(m.narrow, m.cast, m.recipe) = fitted;  // a GEMM fit, or one recipe's casts
    }
  }
  return e;
}

std::optional<OpEfficiency>& Efficiency::narrow(sim::DType d, bool cast, sim::Fp8Recipe recipe) {
  if (d == sim::DType::FP4) return cast ? quantize_fp4 : gemm_fp4;
  if (d != sim::DType::FP8)
    throw ModelError(std::string("no narrow-precision fit for ") + sim::to_string(d) + "; fp8 and fp4 have one");
  return cast ? quantize_fp8.at(sim::fp8_recipe_index(recipe)) : gemm_fp8;
}

const std::optional<OpEfficiency>& Efficiency::narrow(sim::DType d, bool cast, sim::Fp8Recipe recipe) const {
  return const_cast<Efficiency*>(this)->narrow(d, cast, recipe);
}

double gemm_work(const sim::GemmShape& p, const GpuSpec& gpu, double k_fill) {
  const double work = 2 * p.batch * p.rows * p.cols * (p.depth + k_fill);
  if (gpu.sms <= 0) return work;
  const double tiles = p.batch * std::ceil(p.rows / kOccupancyTile) * std::ceil(p.cols / kOccupancyTile);
  return work / std::min(1.0, tiles / gpu.sms);
}

// An fp8 or fp4 GEMM reads its operands narrow and writes its output in bf16 (cuBLASLt's
// fp8 GEMMs as Transformer Engine calls them: the output in the activations' dtype).
double gemm_bytes(const sim::GemmShape& p, sim::DType dtype) {
  const double in = sim::dtype_bytes(dtype), out = sim::dtype_bytes(sim::storage_of(dtype));
  return p.batch * ((p.rows * p.depth + p.depth * p.cols) * in + p.rows * p.cols * out);
}

PerfModel::PerfModel(const GpuSpec& gpu) : PerfModel(gpu, Efficiency::defaults_for(gpu)) {}

PerfModel::PerfModel(const GpuSpec& gpu, Efficiency eff) : gpu_(gpu), eff_(eff) {}

double PerfModel::peak_of(sim::DType dtype) const {
  const double peak = gpu_.peak_flops(dtype);
  if (peak <= 0)
    throw ModelError("GPU " + gpu_.name + " has no " + sim::to_string(dtype) +
                     " support; choose a dtype it has (for example fp16)");
  return peak;
}

double PerfModel::product_s(const sim::GemmShape& p, const OpEfficiency& e, double peak, sim::DType dtype) const {
  const double compute = (e.half_time_s + gemm_work(p, gpu_, e.k_fill) / peak) / e.compute_max;
  const double memory = gemm_bytes(p, dtype) / (gpu_.memory_bandwidth_Bps * e.memory);
  return e.launch_s + std::max(compute, memory);
}

double PerfModel::attention_s(const sim::Kernel& k, const OpEfficiency& e) const {
  const double compute = (e.half_time_s + k.flops * (1 + e.k_fill / k.head_dim) / peak_of(k.dtype)) / e.compute_max;
  const double passes = k.bytes * (1 + (k.causal ? e.causal_extra : 0)) / (gpu_.memory_bandwidth_Bps * e.memory);
  return e.launch_s + compute + passes;
}

bool narrow_gemm(sim::OpClass c, sim::DType d) { return c == sim::OpClass::Gemm && sim::narrow_gemm(d); }

bool attention_class(sim::OpClass c) { return c == sim::OpClass::Attention || sim::fused_attention(c); }

double PerfModel::time_s(const sim::Kernel& k) const {
  return kernel_s(k) / (eff_.step * (attention_class(k.op_class) ? eff_.attention_step : 1));
}

sim::Fp8Recipe PerfModel::recipe_of(const sim::Kernel& k) const {
  if (k.dtype == sim::DType::FP8 && !sim::runs_on(k.fp8_recipe, gpu_.mx_formats))
    throw ModelError("GPU " + gpu_.name + " has no MX formats for fp8_recipe " + sim::to_string(k.fp8_recipe) +
                     " (Blackwell's tensor cores have); valid on it: " + sim::fp8_recipe_names_on(false));
  return sim::resolve_fp8_recipe(k.fp8_recipe, gpu_.mx_formats);
}

double PerfModel::cast_s(const sim::Kernel& k, sim::Fp8Recipe recipe) const {
  if (k.cast_bytes <= 0) return 0;
  const std::optional<OpEfficiency>* measured =
      sim::narrow_gemm(k.dtype) ? &eff_.narrow(k.dtype, true, recipe) : nullptr;
  const OpEfficiency& cast =
      measured && *measured ? **measured : eff_.per_class.at(static_cast<size_t>(sim::OpClass::Elementwise));
  return cast.launch_s + k.cast_bytes / (gpu_.memory_bandwidth_Bps * cast.memory);
}

const OpEfficiency& PerfModel::efficiency_of(const sim::Kernel& k) const {
  if (narrow_gemm(k.op_class, k.dtype)) {  // fp8's GEMM fit is every recipe's (MXFP8 scaled after)
    if (const auto& own = eff_.narrow(k.dtype, false, k.fp8_recipe)) return *own;
  }
  return eff_.per_class.at(static_cast<size_t>(k.op_class));
}

double PerfModel::kernel_s(const sim::Kernel& k) const {
  const OpEfficiency& e = efficiency_of(k);
  if (k.op_class == sim::OpClass::Gemm && k.product_count > 0) {
    const double peak = peak_of(k.dtype);
    double t = 0;
    for (int i = 0; i < k.product_count; ++i) t += product_s(k.products[i], e, peak, k.dtype);
    const sim::Fp8Recipe recipe = recipe_of(k);
    const bool block_scaled = k.dtype == sim::DType::FP8 && sim::block_scaled(recipe);
    return t * (block_scaled ? eff_.mxfp8_gemm_time : 1) + cast_s(k, recipe);
  }
  if (sim::fused_attention(k.op_class) && k.head_dim > 0 && e.causal_extra >= 0) return attention_s(k, e);
  double compute = 0;
  if (k.flops > 0) {
    const double peak = peak_of(k.dtype);
    const double eff = e.compute_max * k.flops / (k.flops + peak * e.half_time_s);
    compute = k.flops / (peak * eff);
  }
  const double memory = k.bytes > 0 ? k.bytes / (gpu_.memory_bandwidth_Bps * e.memory) : 0;
  return e.launch_s + std::max(compute, memory);
}

}  // namespace dejavu::platforms
