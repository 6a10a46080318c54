// Calibration: fitting the performance model to kernel measurements, per GPU and op class.
//
// Measurements (CSV, a header naming the columns, in any order; `#` lines are comments):
//   op_class,flops,bytes,dtype,seconds
//   matmul,68719476736,50331648,bf16,0.000268
// A GEMM row may give its shape in optional columns m, n, k (and batch, default 1): A[m, k]
// @ B[k, n], k the reduction. When every GEMM row has one, the GEMM fit is by shape (the
// shaped model of perf_model.h: the pipeline fill k_fill is chosen from 0 to 512 in steps
// of 16 by the training rows' error, the two lines fitted for each).
// A fused attention row (flash_attention, triton_attention) may give its head size and mask
// in optional columns head_dim and causal (true/false); when every row of its class does,
// the class is fitted by head size (perf_model.h): weighted least squares of the time on
// flops, flops / head_dim, bytes and causal x bytes (launch at its default), giving e_max,
// k_fill, e_mem and causal_extra.
// GEMM rows in fp8 or fp4 are fitted apart from the others (gemm_fp8, gemm_fp4: an H100's fp8
// GEMMs reach a smaller share of their peak than its bf16 GEMMs do of theirs): their compute
// line only, the memory line and launch being the GPU's 16-bit GEMM class's.
// op_class: gemm (or matmul, conv), attention, elementwise (or softmax, dropout, gelu),
// norm (or layernorm, rmsnorm), embedding, optimizer, flash_attention, triton_attention. flops and
// bytes are the kernel's work and its device-memory traffic (a GEMM m x k x n: 2mkn flops, (mk + kn + mn) x
// dtype bytes), seconds its measured time. Collectives are not kernels here: their
// bandwidth efficiency and step latency are fitted per server type (`dejavu collectives
// --validate`).
//
// The fit, per op class: the roofline of perf_model.h is two lines, compute
// (launch + t_half / e_max + flops / (peak e_max)) and memory (launch + bytes / (hbm e_mem)),
// the time their maximum. Rows are assigned to the line that predicts more, each line is
// fitted by least squares on its rows (weighted by 1 / time^2, so relative errors count), and that repeats until the
// assignment settles. Every fifth row is held out and the fit's error on those is reported.
//
// Calibration YAML (what `dejavu calibrate` writes and `--calibration` reads):
//   gpu: A100-SXM-80GB
//   gemm: {compute_efficiency: 0.82, half_time: 4 us, memory_efficiency: 0.8, launch: 3 us}
//   gemm_fp8: {compute_efficiency: 0.7, k_fill: 144}   # fp8 GEMMs (default: the gemm entry's)
//   gemm_fp4: {compute_efficiency: 0.37}       # fp4 GEMMs (default: the gemm entry's)
//   mxfp8_gemm_time: 1.06                      # MXFP8 GEMMs' time over gemm_fp8's (default 1)
//   quantize_fp8: {memory_efficiency: 0.44}    # the casts feeding fp8 GEMMs, every recipe
//                                              # (default: elementwise's)
//   quantize_fp8_mxfp8: {memory_efficiency: 0.48}   # one recipe's (delayed, tensorwise, mxfp8)
//   quantize_fp4: {memory_efficiency: 0.29}    # and fp4 GEMMs (Hadamard transforms, rounding)
//   elementwise: {memory_efficiency: 0.83}     # what is not given keeps its default
//   step_efficiency: 0.77   # a software stack's kernels in a step, against measured alone
//   attention_step_efficiency: 1.2   # its attention kernels beside that (default 1)
//   step_overhead: 30 ms    # host time an iteration past its kernels (default 0 s)
//                           # (`dejavu calibrate --suite`, fitted to its measured steps)
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/perf_model.h"
#include "sim/config_node.h"

namespace dejavu::platforms {

struct Measurement {
  sim::OpClass op_class = sim::OpClass::Gemm;
  double flops = 0, bytes = 0;
  sim::DType dtype = sim::DType::BF16;
  double seconds = 0;
  int line = 0;
  SourceLoc dtype_at;   // where the row gives its dtype
  bool shaped = false;  // a GEMM with its shape given, or fused attention its head size
  sim::GemmShape shape;
  double head_dim = 0;  // fused attention: one head's size
  bool causal = false;  // fused attention: under a causal mask
};

// Throws ConfigError naming the file, line and column for a missing column, an unknown op
// class or dtype, a negative or non-numeric value.
std::vector<Measurement> load_measurements(const std::string& path);

struct ClassFit {
  sim::OpClass op_class = sim::OpClass::Gemm;
  int rows = 0, held_out = 0;
  // The two lines: compute = compute_intercept_s + flops * s_per_flop, memory =
  // launch_s + bytes * s_per_byte (0 slope: no rows on that line).
  double compute_intercept_s = 0, s_per_flop = 0, launch_s = 0, s_per_byte = 0;
  int compute_rows = 0, memory_rows = 0;
  bool shaped = false;                   // fitted by shape (k_fill in efficiency)
  sim::DType narrow = sim::DType::BF16;  // FP8 or FP4: GEMMs measured in it, fitted apart (gemm_fp8, gemm_fp4)
  bool memory_fixed = false;             // the memory line and launch taken, not fitted (fp8 GEMMs)
  double heldout_mean_abs_error = 0;     // relative, on the held-out rows
  double train_mean_abs_error = 0;
  OpEfficiency efficiency;            // what the performance model takes
  std::vector<std::string> warnings;  // a fitted value brought into the model's range, and why
};

// The name a fit goes by in calibration YAML and calibrate's table: its op class, or
// gemm_fp8 / gemm_fp4 for fp8 / fp4 GEMMs.
const char* fit_name(const ClassFit& f);

// Throws ConfigError at the row's dtype when a row does work (flops > 0) in a dtype `gpu`
// has no peak for (fp8 on an A100, bf16 on a V100): its efficiency would mean nothing.
void check_dtypes(const std::vector<Measurement>& rows, const GpuSpec& gpu);

// Fits every op class present (fp8 and fp4 GEMMs apart from the others); `gpu` gives the peaks the efficiencies are
// relative to. `k_fill` >= 0 fixes a shaped GEMM fit's pipeline fill instead of searching for it (for rows too few or
// too alike to tell it from e_max).
std::vector<ClassFit> fit_measurements(const std::vector<Measurement>& rows, const GpuSpec& gpu, double k_fill = -1);

struct Calibration {
  std::string gpu;
  Efficiency efficiency = Efficiency::defaults();
};

// What the file does not give keeps its value on `onto` (an earlier calibration of the
// same GPU type), else the GPU type's default; so a kernel calibration and a step
// calibration compose. A step calibration of no one GPU type (`gpu: any`: the step keys alone,
// kernel efficiencies being shares of one GPU type's peaks) is loaded for the GPU type `any_as`
// (an error without one).
constexpr const char* kAnyGpu = "any";
Calibration load_calibration(const ConfigNode& root, const Cluster* onto = nullptr, const std::string& any_as = "");
Calibration load_calibration_file(const std::string& path, const Cluster* onto = nullptr);
void write_calibration(std::ostream& out, const std::string& gpu, const std::vector<ClassFit>& fits,
                       const std::string& source);

// Applies a calibration to a cluster's GPUs of that type (an error if it has none).
void apply_calibration(Cluster& cluster, const Calibration& calibration, const std::string& where);
// Applies a calibration YAML: to the cluster's GPUs of its type, or, with `gpu: any`, to every
// GPU type the cluster has. `where` names it in errors and in Cluster::calibrated_from.
void apply_calibration(Cluster& cluster, const ConfigNode& root, const std::string& where);

// Whether a step calibration set the step efficiency of the cluster's GPU type `gpu`.
bool step_calibrated(const Cluster& cluster, const std::string& gpu);
// How: "none", "fitted" (a calibration of the GPU type: its framework's, `dejavu calibrate
// --suite`) or "typical" (one of no framework or GPU type, `gpu: any`).
std::string step_calibration_kind(const Cluster& cluster, const std::string& gpu);

// The performance model for one of the cluster's GPU types, calibrated if the cluster is.
PerfModel perf_model(const Cluster& cluster, const GpuSpec& gpu);

}  // namespace dejavu::platforms
