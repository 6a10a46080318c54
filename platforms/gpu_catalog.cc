#include "platforms/gpu_catalog.h"

#include "sim/error.h"

// Peak figures are dense (no sparsity) tensor-core rates, as the vendor publishes them; fp16
// and bf16 with fp32 accumulation. Memory sizes are the datasheet's "GB", read as GiB (HBM
// stacks are binary-sized: an "80GB" H100 shows 79.6 GiB to CUDA). Where a figure came from
// is each entry's `source`; the measured kernel speeds and their fits are in docs/HARDWARE.md.
// ml-engineering is stas00/ml-engineering at commit 744d01e1, which gathers the vendors'
// figures with a link to each (compute/accelerator/README.md: the TFLOPS and memory tables;
// network/README.md: NVLink and xGMI per generation).

namespace dejavu::platforms {

namespace {

constexpr double GiB = 1073741824.0, GBps = 1e9, T = 1e12;
using C = sim::OpClass;

// Another attention implementation priced as `m` was measured, where no figure times it.
constexpr MeasuredKernel priced_as(MeasuredKernel m, sim::OpClass c) {
  m.op_class = c;
  return m;
}

// GEMMs by shape and FlashAttention-2, fitted by `dejavu calibrate` to public measurements
// (tools/public_gemms.py and tools/public_attention.py write the CSVs; docs/CALIBRATION.md
// gives each fit's rows and held-out error).
// H100: platforms/calibration/gemm_h100.csv, XLA's sm_90 bf16 table (375 shapes) and MAMF's
// best shape; 3.3% mean |error| on 75 held-out rows.
const MeasuredKernel kH100Gemm{C::Gemm, 0.844838, 1.15852e-07, 0.93095, 5.27425e-06, 144};
// fp8 GEMMs on the H100 reach a smaller share of their peak than bf16 ones (MAMF's best
// shape: 71% against 80%): platforms/calibration/gemm_h100_fp8.csv, Azure's cuBLASLt fp8 sizes
// and MAMF's fp8 row, fitted for the compute line alone (`--k-fill 144`, the bf16 fit's: ten
// rows cannot tell the fill from e_max; memory and launch the bf16 fit's); 4.9% mean |error|
// on the 8 fitted rows, 10.9% on the 2 held out; the H200's 10 rows (same die, not fitted) in
// docs/CALIBRATION.md.
const MeasuredKernel kH100GemmFp8{C::Gemm, 0.713768, 6.68422e-07, 0.93095, 5.27425e-06, 144, -1, sim::DType::FP8};
// FlashAttention-2 reaches 42% of the H100's peak at its best, not the 76% it reaches on an
// A100 (it does not use Hopper's asynchronous tensor-core instructions): fitted by head size
// to its published H100 forward + backward throughput (platforms/calibration/
// flash_attention_h100.csv, causal and not, heads of 64 and 128): e_max 0.418, a score's
// softmax 26.4 head-size terms, passes at 91% of HBM, x1.58 under a causal mask; 1.6% mean
// |error| on the 4 held-out rows (6.6% as a roofline on the compute line alone).
const MeasuredKernel kH100Flash{C::FlashAttention, 0.418146, 0, 0.913756, 2e-6, 26.3937, 0.580341};
// No public figure times the Triton kernel of 2023 on an H100 (the FlashAttention-3 README's
// "Triton" is a later, Hopper-aware kernel): priced as FlashAttention-2, which like it issues
// Ampere's tensor-core instructions there.
const MeasuredKernel kH100Triton = priced_as(kH100Flash, C::TritonAttention);
// cuDNN's fused attention (Transformer Engine's FusedAttention) runs 1.6x FlashAttention-2's
// forward on the H100 at heads of 128 and 1.3x at 64 (the FlashAttention-3 README's figure):
// fitted by head size to that forward carried to forward + backward by FlashAttention-2's
// measured ratio (platforms/calibration/cudnn_attention_h100.csv). Unconstrained, the tile
// products would run at 1.37 of the peak, so they are held at the peak and the rest refitted: a
// score's softmax 102.4 head-size terms (FlashAttention-2's 26.4: cuDNN's 64-wide heads gain
// least), passes at HBM's full rate, x1.14 under a causal mask; 4.6% mean |error| on the 17
// fitted rows, 1.9% on the 4 held out.
const MeasuredKernel kH100Cudnn{C::CudnnAttention, 1.0, 0, 1.0, 2e-6, 102.426, 0.144813};
// A100: platforms/calibration/gemm_a100.csv, Azure's cuBLASLt fp16 sizes and MAMF's best bf16
// shape (`--k-fill 144`, the H100's: its 9 rows all reduce over k >= 768, too few to tell the
// pipeline fill from e_max); 9.0% on the eight fitted rows, 3.5% on the held-out one.
const MeasuredKernel kA100Gemm{C::Gemm, 0.801147, 5.66581e-06, 0.80, 2e-6, 144};
// B200: platforms/calibration/gemm_b200.csv, XLA's sm_100 bf16 table (375 shapes) and MAMF's
// best shape; 3.6% on 75 held-out rows. GB200: the same table (no public shape table times a
// GB200) with the GB200's own MAMF row; 3.5%.
const MeasuredKernel kB200Gemm{C::Gemm, 0.708346, 0, 0.760798, 5.8508e-06, 192};
const MeasuredKernel kGB200Gemm{C::Gemm, 0.631326, 0, 0.784792, 5.99414e-06, 192};
// FlashAttention on Blackwell: one public figure, FlashAttention-4 (4.0.0b22 beta) timed inside
// a Llama-3.1-8B training step on B200 at 8k tokens, heads of 128, causal (platforms/
// calibration/flash_attention_b200.csv): 1.978 ms a layer forward + backward. One row cannot
// tell the softmax's cost or the mask's from the peak share, so those are FlashAttention-2's
// (the A100's fit; the H100's agrees within 15%) and e_max solves the row: 1.978 ms less the
// launch and the passes (0.163 ms at 93% of 8 TB/s, x1.50 causal) leaves 1.813 ms for
// 1.924e12 flops x (1 + 23.1/128) at 2250 TFLOP/s: 0.557 of peak. The GB200 runs the same
// kernel at the same share of its own peak (no public figure times one).
const MeasuredKernel kBlackwellFlash{C::FlashAttention, 0.556903, 0, 0.926871, 2e-6, 23.0985, 0.499342};
// No public figure times cuDNN's attention on Blackwell: it takes FlashAttention-4's in-step
// figure above, the one Blackwell attention kernel timed.
const MeasuredKernel kBlackwellCudnn = priced_as(kBlackwellFlash, C::CudnnAttention);
// Transformer Engine's quantization of a narrow GEMM's inputs, timed on a B300 and an H200
// (platforms/calibration/te_gemm_layer.csv: a layer's 12 GEMMs under autocast less the same
// kernels on inputs quantized beforehand; tools/te_gemm_layer.py fits on Fprop and Dgrad, holds
// out Wgrad): the casts' bytes (read 16-bit, write narrow) move, after a launch, at a share of
// HBM that depends on the fp8 scaling recipe (sim/fp8_recipe.h). On the B300: delayed scaling
// 0.896 (one pass; against current scaling's kernel-only time; Fprop -14%, Dgrad +16%, Wgrad held
// out +20%), current scaling (tensorwise) 0.376 (an amax pass first; -8%, +8%, +19%), MXFP8 0.486
// (+7%, -5%, +17%), NVFP4 0.292, whose amax pass, 2D weight scales, Hadamard transforms and
// stochastic rounding cost more (+5%, -4%, -0.3%); the element-wise class's 0.8 before. The
// kernels are memory-bound, so every Blackwell type (8 TB/s of HBM3e, as the B300) takes them.
// On the H200 (the H100's GH100 die): delayed 0.727 (-6%, +6%, -4%), tensorwise 0.441 (+1%, -1%,
// +3%).
constexpr MeasuredKernel quantize_fp8(double memory, sim::Fp8Recipe recipe) {
  return {.op_class = C::Elementwise, .memory = memory, .narrow = sim::DType::FP8, .cast = true, .recipe = recipe};
}
const MeasuredKernel kBlackwellQuantizeDelayed = quantize_fp8(0.8958, sim::Fp8Recipe::Delayed);
const MeasuredKernel kBlackwellQuantizeTensorwise = quantize_fp8(0.3760, sim::Fp8Recipe::Tensorwise);
const MeasuredKernel kBlackwellQuantizeMxfp8 = quantize_fp8(0.4857, sim::Fp8Recipe::Mxfp8);
const MeasuredKernel kHopperQuantizeDelayed = quantize_fp8(0.7272, sim::Fp8Recipe::Delayed);
const MeasuredKernel kHopperQuantizeTensorwise = quantize_fp8(0.4412, sim::Fp8Recipe::Tensorwise);
const MeasuredKernel kBlackwellQuantizeFp4{
    .op_class = C::Elementwise, .memory = 0.2916, .narrow = sim::DType::FP4, .cast = true};
// MXFP8's block-scaled GEMM kernels on the B300 take 1.061x the per-tensor scaled fp8 kernels'
// time on the same 8 shapes (Fprop and Dgrad, prequantized; 1.032x on the held-out Wgrad shapes,
// +2.8%; tools/te_gemm_layer.py): every Blackwell type's (GpuSpec::mxfp8_gemm_time).
constexpr double kBlackwellMxfp8GemmTime = 1.0613;
// NVFP4 GEMM kernels on a B300 run 3.39x as fast as bf16 ones on the same 8 shapes (Fprop and
// Dgrad, prequantized; 3.67x on the 4 held-out Wgrad shapes, which reduce over 15,872 tokens)
// where the peaks differ 6x. A tile's fill and drain take the time they take in bf16, so in
// fp4's faster depth terms the fill is longer (192 x the speed-up): the GB300's fp4 GEMMs are
// its bf16 fit with e_max 0.386 and k_fill 704, within 0.8% on the fitted passes and 3.1% on
// Wgrad (tools/te_gemm_layer.py; 7.4% with bf16's fill).
constexpr double kB300Fp4Share = 0.385936, kB300Fp4Fill = 704.2, kB300Fp4PerBf16Peak = 6;
const MeasuredKernel kGB300GemmFp4{.op_class = C::Gemm,
                                   .compute_max = kB300Fp4Share,
                                   .half_time_s = 0,
                                   .memory = kGB200Gemm.memory,
                                   .launch_s = kGB200Gemm.launch_s,
                                   .k_fill = kB300Fp4Fill,
                                   .narrow = sim::DType::FP4};
// No public figure times fp4 GEMMs on a B200 or GB200, whose fp4 peak is 4x bf16's. They run at
// the B300's speed-up over their own bf16 GEMMs (the GB200's fp4 GEMMs as fast as the GB300's),
// not at its share of their lower fp4 peak: Megatron-Bridge's NVFP4 steps over its FP8 steps of
// the same layout are as short on GB200 (0.69 on Llama 3.1 405B, 0.78 on Llama 3 70B; its fit
// rows) as on GB300 (0.72, 0.69), whose fp4 tensor cores are 1.5x faster, so the tensor rate is
// not what bounds these kernels. (At the bf16 fit's share of the fp4 peak, as before, a GB200's
// fp4 GEMMs were priced 1.3x faster than a GB300's.)
MeasuredKernel blackwell_gemm_fp4(const MeasuredKernel& bf16, double fp4_per_bf16_peak) {
  MeasuredKernel k = kGB300GemmFp4;
  k.compute_max = kB300Fp4Share * kB300Fp4PerBf16Peak / fp4_per_bf16_peak * bf16.compute_max / kGB200Gemm.compute_max;
  k.memory = bf16.memory;
  k.launch_s = bf16.launch_s;
  return k;
}
const MeasuredKernel kB200GemmFp4 = blackwell_gemm_fp4(kB200Gemm, 4);
const MeasuredKernel kGB200GemmFp4 = blackwell_gemm_fp4(kGB200Gemm, 4);
// MI300X and MI325X: the ROCm fork of XLA's table for gfx942 (bf16, 375 shapes) and each
// part's MAMF row. XLA's ROCm GEMMs reach 44% of peak at best and the fit is loose: 17.9%
// on 75 held-out rows, for both (docs/HARDWARE.md).
const MeasuredKernel kMI300XGemm{C::Gemm, 0.394108, 0, 0.296649, 5.67007e-06, 192};
const MeasuredKernel kMI325XGemm{C::Gemm, 0.399047, 0, 0.26204, 5.67007e-06, 192};

void add_nvidia_ampere_hopper(std::vector<GpuSpec>& out) {
  const std::string a100 = "nvidia.com/en-us/data-center/a100 (via ml-engineering)";
  const std::string h100 = "nvidia.com/en-us/data-center/h100 (via ml-engineering)";
  const std::string h100_measured =
      "XLA's sm_90 GEMM table, MAMF; Azure's fp8 cuBLASLt GEMMs; FlashAttention-2's H100 figure, FlashAttention-3's "
      "(cuDNN); "
      "Transformer Engine's H200 quantization";
  out.push_back({.name = "A100-SXM-40GB",
                 .memory_bytes = 40 * GiB,
                 .memory_bandwidth_Bps = 1555 * GBps,
                 .gpu_link_bandwidth_Bps = 300 * GBps,
                 .peak_fp32 = 19.5 * T,
                 .peak_tf32 = 156 * T,
                 .peak_fp16 = 312 * T,
                 .peak_bf16 = 312 * T,
                 .sms = 108,
                 .gpu_link = "NVLink 3",
                 .source = a100,
                 .measured = {kA100Gemm},
                 .measured_from = "the A100 SXM 80GB's (same die): Azure cuBLASLt, MAMF"});
  out.push_back({.name = "A100-SXM-80GB",
                 .memory_bytes = 80 * GiB,
                 .memory_bandwidth_Bps = 2039 * GBps,
                 .gpu_link_bandwidth_Bps = 300 * GBps,
                 .peak_fp32 = 19.5 * T,
                 .peak_tf32 = 156 * T,
                 .peak_fp16 = 312 * T,
                 .peak_bf16 = 312 * T,
                 .sms = 108,
                 .gpu_link = "NVLink 3",
                 .source = a100,
                 .measured = {kA100Gemm},
                 .measured_from = "Azure cuBLASLt GEMMs, MAMF; FlashAttention-2's A100 figure"});
  out.push_back({.name = "H100-SXM-80GB",
                 .memory_bytes = 80 * GiB,
                 .memory_bandwidth_Bps = 3350 * GBps,
                 .gpu_link_bandwidth_Bps = 450 * GBps,
                 .peak_fp32 = 67 * T,
                 .peak_tf32 = 494.5 * T,
                 .peak_fp16 = 989.4 * T,
                 .peak_bf16 = 989.4 * T,
                 .peak_fp8 = 1978.9 * T,
                 .sms = 132,
                 .gpu_link = "NVLink 4",
                 .source = h100,
                 .measured = {kH100Gemm, kH100GemmFp8, kH100Flash, kH100Triton, kH100Cudnn, kHopperQuantizeDelayed,
                              kHopperQuantizeTensorwise},
                 .measured_from = h100_measured});
  // The H100's GH100 die at the same clocks with HBM3e: its GEMMs are the H100's measured ones.
  GpuSpec h200 = out.back();  // the H100 SXM
  h200.name = "H200-SXM-141GB";
  h200.memory_bytes = 141 * GiB;
  h200.memory_bandwidth_Bps = 4800 * GBps;
  h200.source = "nvidia.com/en-us/data-center/h200 (via ml-engineering)";
  h200.measured_from = "the H100's (same GH100 die): " + h100_measured;
  out.push_back(h200);
  // The PCIe card: a pair joined by an NVLink bridge, 600 GB/s both directions.
  out.push_back({.name = "H100-PCIe-80GB",
                 .memory_bytes = 80 * GiB,
                 .memory_bandwidth_Bps = 2000 * GBps,
                 .gpu_link_bandwidth_Bps = 300 * GBps,
                 .peak_fp32 = 51 * T,
                 .peak_tf32 = 378 * T,
                 .peak_fp16 = 756 * T,
                 .peak_bf16 = 756 * T,
                 .peak_fp8 = 1513 * T,
                 .sms = 114,
                 .gpu_link = "NVLink bridge (pairs)",
                 .source = h100 + "; 114 SMs: NVIDIA H100 Tensor Core GPU Architecture whitepaper"});
}

void add_nvidia_blackwell(std::vector<GpuSpec>& out) {
  // SM counts are not in the cited product specifications (ml-engineering: "not disclosed").
  out.push_back({.name = "B200-SXM-180GB",
                 .memory_bytes = 180 * GiB,
                 .memory_bandwidth_Bps = 8000 * GBps,
                 .gpu_link_bandwidth_Bps = 900 * GBps,
                 .peak_fp32 = 80 * T,
                 .peak_tf32 = 1125 * T,
                 .peak_fp16 = 2250 * T,
                 .peak_bf16 = 2250 * T,
                 .peak_fp8 = 4500 * T,
                 .peak_fp4 = 9000 * T,
                 .mx_formats = true,
                 .mxfp8_gemm_time = kBlackwellMxfp8GemmTime,
                 .gpu_link = "NVLink 5",
                 .source = "NVIDIA DGX B200 datasheet (via ml-engineering)",
                 .measured = {kB200Gemm, kB200GemmFp4, kBlackwellFlash, kBlackwellCudnn, kBlackwellQuantizeDelayed,
                              kBlackwellQuantizeTensorwise, kBlackwellQuantizeMxfp8, kBlackwellQuantizeFp4},
                 .measured_from = "XLA's sm_100 GEMM table, MAMF; FlashAttention-4 in a training step; Transformer "
                                  "Engine's B300 quantization and NVFP4 GEMMs' speed-up"});
  // One Blackwell GPU of a GB200 superchip (two to a Grace CPU), clocked above the B200.
  out.push_back({.name = "GB200-186GB",
                 .memory_bytes = 186 * GiB,
                 .memory_bandwidth_Bps = 8000 * GBps,
                 .gpu_link_bandwidth_Bps = 900 * GBps,
                 .peak_fp32 = 80 * T,
                 .peak_tf32 = 1250 * T,
                 .peak_fp16 = 2500 * T,
                 .peak_bf16 = 2500 * T,
                 .peak_fp8 = 5000 * T,
                 .peak_fp4 = 10000 * T,
                 .mx_formats = true,
                 .mxfp8_gemm_time = kBlackwellMxfp8GemmTime,
                 .gpu_link = "NVLink 5",
                 .source = "nvidia.com/en-us/data-center/gb200-nvl72, per GPU (via ml-engineering)",
                 .measured = {kGB200Gemm, kGB200GemmFp4, kBlackwellFlash, kBlackwellCudnn, kBlackwellQuantizeDelayed,
                              kBlackwellQuantizeTensorwise, kBlackwellQuantizeMxfp8, kBlackwellQuantizeFp4},
                 .measured_from = "the B200's XLA sm_100 GEMM table, the GB200's MAMF; the B200's FlashAttention-4; "
                                  "Transformer Engine's B300 quantization and NVFP4 GEMMs' speed-up"});
  // One Blackwell Ultra GPU of a GB300 superchip: the GB200's rates but fp4 at three times fp8
  // (1.5x the GB200's), and the B300's 288 GB of HBM3e at 8 TB/s (ml-engineering's memory table).
  // No public GEMM or attention timing of a GB300: its kernels are priced as the GB200's, but
  // for fp4 GEMMs, at the share of the bf16 speed the B300 (Blackwell Ultra too) reaches.
  GpuSpec gb300 = out.back();  // the GB200
  gb300.name = "GB300-288GB";
  gb300.memory_bytes = 288 * GiB;
  gb300.peak_fp4 = 15000 * T;
  gb300.source = "nvidia.com/en-us/data-center/gb300-nvl72, per GPU (via ml-engineering)";
  for (MeasuredKernel& m : gb300.measured)
    if (m.narrow == sim::DType::FP4 && !m.cast) m = kGB300GemmFp4;  // the B300's own share
  gb300.measured_from =
      "the GB200's (none times a GB300): the B200's XLA sm_100 GEMM table, the GB200's MAMF; "
      "the B200's FlashAttention-4; Transformer Engine's B300 quantization and NVFP4 timing";
  out.push_back(gb300);
}

void add_nvidia_pcie(std::vector<GpuSpec>& out) {
  out.push_back({.name = "V100-SXM2-32GB",
                 .memory_bytes = 32 * GiB,
                 .memory_bandwidth_Bps = 900 * GBps,
                 .gpu_link_bandwidth_Bps = 150 * GBps,
                 .peak_fp32 = 15.7 * T,
                 .peak_fp16 = 125 * T,
                 .sms = 80,
                 .gpu_link = "NVLink 2",
                 .source = "NVIDIA V100 Tensor Core GPU datasheet"});
  out.push_back({.name = "L40S",
                 .memory_bytes = 48 * GiB,
                 .memory_bandwidth_Bps = 864 * GBps,
                 .peak_fp32 = 91.6 * T,
                 .peak_tf32 = 183 * T,
                 .peak_fp16 = 362 * T,
                 .peak_bf16 = 362 * T,
                 .peak_fp8 = 733 * T,
                 .sms = 142,
                 .gpu_link = "PCIe 4.0",
                 .source = "nvidia.com/en-us/data-center/l40s (via ml-engineering); NVIDIA L40S datasheet"});
  out.push_back({.name = "A10",
                 .memory_bytes = 24 * GiB,
                 .memory_bandwidth_Bps = 600 * GBps,
                 .peak_fp32 = 31.2 * T,
                 .peak_tf32 = 62.5 * T,
                 .peak_fp16 = 125 * T,
                 .peak_bf16 = 125 * T,
                 .sms = 72,
                 .gpu_link = "PCIe 4.0",
                 .source = "NVIDIA A10 Tensor Core GPU datasheet"});
  out.push_back({.name = "L4",
                 .memory_bytes = 24 * GiB,
                 .memory_bandwidth_Bps = 300 * GBps,
                 .peak_fp32 = 30.3 * T,
                 .peak_tf32 = 60 * T,
                 .peak_fp16 = 121 * T,
                 .peak_bf16 = 121 * T,
                 .peak_fp8 = 242 * T,
                 .sms = 58,
                 .gpu_link = "PCIe 4.0",
                 .source = "NVIDIA L4 Tensor Core GPU datasheet"});
  out.push_back({.name = "T4",
                 .memory_bytes = 16 * GiB,
                 .memory_bandwidth_Bps = 320 * GBps,
                 .peak_fp32 = 8.1 * T,
                 .peak_fp16 = 65 * T,
                 .sms = 40,
                 .gpu_link = "PCIe 3.0",
                 .source = "NVIDIA T4 Tensor Core GPU datasheet"});
  // A laptop playground's card. GeForce tensor cores run fp16 and bf16 at half rate when
  // they accumulate in fp32, as training does: 165.2, not the 330.3 of fp16 accumulation.
  out.push_back({.name = "RTX-4090",
                 .memory_bytes = 24 * GiB,
                 .memory_bandwidth_Bps = 1008 * GBps,
                 .peak_fp32 = 82.6 * T,
                 .peak_tf32 = 82.6 * T,
                 .peak_fp16 = 165.2 * T,
                 .peak_bf16 = 165.2 * T,
                 .peak_fp8 = 330.3 * T,
                 .sms = 128,
                 .gpu_link = "PCIe 4.0",
                 .source = "NVIDIA Ada GPU Architecture whitepaper, appendix A (GeForce RTX 4090)"});
}

void add_amd_instinct(std::vector<GpuSpec>& out) {
  // 304 compute units: 1216 matrix cores, 4 per CU (ml-engineering). xGMI: seven 64 GB/s links
  // a GPU, one to each peer of an 8-GPU server.
  out.push_back({.name = "MI300X-192GB",
                 .memory_bytes = 192 * GiB,
                 .memory_bandwidth_Bps = 5300 * GBps,
                 .gpu_link_bandwidth_Bps = 448 * GBps,
                 .peak_fp32 = 163.4 * T,
                 .peak_tf32 = 653.7 * T,
                 .peak_fp16 = 1307.4 * T,
                 .peak_bf16 = 1307.4 * T,
                 .peak_fp8 = 2614.9 * T,
                 .sms = 304,
                 .gpu_link = "xGMI",
                 .source = "amd.com Instinct MI300X specifications (via ml-engineering)",
                 .measured = {kMI300XGemm},
                 .measured_from = "XLA's ROCm gfx942 GEMM table, MAMF (GEMMs only)"});
  // The MI300X's compute at a higher power limit, with HBM3e.
  GpuSpec mi325x = out.back();
  mi325x.name = "MI325X-256GB";
  mi325x.memory_bytes = 256 * GiB;
  mi325x.memory_bandwidth_Bps = 6000 * GBps;
  mi325x.source = "amd.com Instinct MI325X specifications (via ml-engineering)";
  mi325x.measured = {kMI325XGemm};
  out.push_back(mi325x);
}

}  // namespace

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
    case sim::DType::FP4:
      return peak_fp4;
  }
  return 0;
}

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = [] {
    std::vector<GpuSpec> out;
    add_nvidia_ampere_hopper(out);
    add_nvidia_blackwell(out);
    add_nvidia_pcie(out);
    add_amd_instinct(out);
    return out;
  }();
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
