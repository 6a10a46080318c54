#include "platforms/calibration.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "sim/csv.h"
#include "sim/error.h"
#include "sim/units.h"

namespace dejavu::platforms {

namespace {

bool parse_class(const std::string& name, sim::OpClass* out) {
  static const std::map<std::string, sim::OpClass> names = {{"gemm", sim::OpClass::Gemm},
                                                            {"matmul", sim::OpClass::Gemm},
                                                            {"conv", sim::OpClass::Gemm},
                                                            {"attention", sim::OpClass::Attention},
                                                            {"elementwise", sim::OpClass::Elementwise},
                                                            {"softmax", sim::OpClass::Elementwise},
                                                            {"dropout", sim::OpClass::Elementwise},
                                                            {"gelu", sim::OpClass::Elementwise},
                                                            {"norm", sim::OpClass::Norm},
                                                            {"layernorm", sim::OpClass::Norm},
                                                            {"rmsnorm", sim::OpClass::Norm},
                                                            {"embedding", sim::OpClass::Embedding},
                                                            {"optimizer", sim::OpClass::Optimizer},
                                                            {"flash_attention", sim::OpClass::FlashAttention},
                                                            {"triton_attention", sim::OpClass::TritonAttention},
                                                            {"cudnn_attention", sim::OpClass::CudnnAttention}};
  auto it = names.find(name);
  if (it == names.end()) return false;
  *out = it->second;
  return true;
}

// Least squares of y on [1, x], each row weighted by 1/y^2: relative errors count alike,
// so kernels of microseconds weigh as much as kernels of milliseconds. Intercept, slope.
std::pair<double, double> line_fit(const std::vector<double>& x, const std::vector<double>& y) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double w = 1 / (y[i] * y[i]);
    n += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  const double det = n * sxx - sx * sx;
  if (x.size() < 2 || std::fabs(det) <= 1e-12 * n * sxx) return {n > 0 ? sy / n : 0.0, 0.0};
  const double slope = (n * sxy - sx * sy) / det;
  return {(sy - slope * sx) / n, slope};
}

// A fit the performance model cannot take (rows too alike to tell a slope from an
// intercept, or too few) is brought into the ranges a calibration file may hold, and
// says so: better a warning beside a usable file than a file that will not load.
OpEfficiency within_model_ranges(OpEfficiency e, std::vector<std::string>& warnings) {
  char buf[200];
  auto clamp = [&](double& v, double lo, double hi, const char* what) {
    if (v >= lo && v <= hi) return;
    const double was = v;
    v = std::min(std::max(v, lo), hi);
    std::snprintf(buf, sizeof buf, "the fitted %s %.3g is outside %.3g to %.3g; kept %.3g (rows too alike to fit it?)",
                  what, was, lo, hi, v);
    warnings.push_back(buf);
  };
  clamp(e.compute_max, 1e-3, 1, "compute efficiency");
  clamp(e.memory, 1e-3, 1, "memory efficiency");
  clamp(e.half_time_s, 0, 1, "half time (s)");
  clamp(e.launch_s, 0, 1, "launch time (s)");
  return e;
}

// The optional m, n, k (and batch) columns of a GEMM row.
void read_shape(const CsvRow& c, Measurement& m) {
  if (!c.has("m") && !c.has("n") && !c.has("k")) return;
  if (m.op_class != sim::OpClass::Gemm) c.fail("m", "a shape (m, n, k) is for gemm rows only");
  for (const char* col : {"m", "n", "k"})
    if (!c.has(col)) c.fail(col, "a GEMM shape needs all of m, n and k (A[m, k] @ B[k, n])");
  m.shaped = true;
  m.shape.rows = static_cast<double>(c.as_int("m", 1, 1LL << 40));
  m.shape.cols = static_cast<double>(c.as_int("n", 1, 1LL << 40));
  m.shape.depth = static_cast<double>(c.as_int("k", 1, 1LL << 40));
  m.shape.batch = c.has("batch") ? static_cast<double>(c.as_int("batch", 1, 1LL << 30)) : 1.0;
}

// The fused attention classes' names, as calibration files and measurement rows spell them.
std::string fused_attention_names() {
  std::string out;
  for (int k = 0; k < sim::kOpClasses; ++k)
    if (sim::fused_attention(static_cast<sim::OpClass>(k)))
      out += (out.empty() ? "" : ", ") + std::string(sim::to_string(static_cast<sim::OpClass>(k)));
  return out;
}

// The optional head_dim and causal columns of a fused attention row.
void read_head(const CsvRow& c, Measurement& m) {
  if (!c.has("head_dim") && !c.has("causal")) return;
  if (!sim::fused_attention(m.op_class))
    c.fail(c.has("head_dim") ? "head_dim" : "causal",
           "a head size and mask are for fused attention rows only (" + fused_attention_names() + ")");
  for (const char* col : {"head_dim", "causal"})
    if (!c.has(col)) c.fail(col, "fused attention by head size needs both head_dim and causal");
  m.shaped = true;
  m.head_dim = static_cast<double>(c.as_int("head_dim", 1, 4096));
  m.causal = c.as_choice("causal", {"false", "true"}) == "true";
}

// One row as the fit sees it: the compute line's abscissa (FLOPs, or a shaped GEMM's work),
// the memory line's (bytes), the measured time.
struct Point {
  double work = 0, bytes = 0, seconds = 0;
};

std::vector<Point> points_of(const std::vector<Measurement>& rows, const GpuSpec& gpu, bool shaped, double k_fill) {
  std::vector<Point> out;
  for (const Measurement& m : rows)
    out.push_back(shaped ? Point{gemm_work(m.shape, gpu, k_fill), gemm_bytes(m.shape, m.dtype), m.seconds}
                         : Point{m.flops, m.bytes, m.seconds});
  return out;
}

// The two lines fitted to `train`: rows go to the line predicting more, each line is fitted
// on its rows, until the assignment settles. Starts from the GPU's ridge point. With
// fit.memory_fixed the memory line is the one given in fit (launch_s, s_per_byte) and only
// the compute line is fitted.
void fit_lines(const std::vector<Point>& train, double peak, double bandwidth, ClassFit& fit) {
  std::vector<char> compute(train.size());
  for (size_t i = 0; i < train.size(); ++i) compute[i] = train[i].work / peak >= train[i].bytes / bandwidth;
  for (int round = 0; round < 50; ++round) {
    std::vector<double> fx, fy, bx, by;
    for (size_t i = 0; i < train.size(); ++i) {
      (compute[i] ? fx : bx).push_back(compute[i] ? train[i].work : train[i].bytes);
      (compute[i] ? fy : by).push_back(train[i].seconds);
    }
    std::tie(fit.compute_intercept_s, fit.s_per_flop) = fx.empty() ? std::pair{0.0, 0.0} : line_fit(fx, fy);
    if (!fit.memory_fixed) std::tie(fit.launch_s, fit.s_per_byte) = bx.empty() ? std::pair{0.0, 0.0} : line_fit(bx, by);
    fit.compute_rows = static_cast<int>(fx.size());
    fit.memory_rows = static_cast<int>(bx.size());
    bool changed = false;
    for (size_t i = 0; i < train.size(); ++i) {
      const double tc = fx.empty() ? -1 : fit.compute_intercept_s + fit.s_per_flop * train[i].work;
      const double tm = bx.empty() && !fit.memory_fixed ? -1 : fit.launch_s + fit.s_per_byte * train[i].bytes;
      const char want = tc >= tm;
      const bool last_memory_row = bx.size() == 1 && !fit.memory_fixed;
      if (want != compute[i] && !(fx.size() == 1 && compute[i]) && !(last_memory_row && !compute[i])) {
        compute[i] = want;
        changed = true;
      }
    }
    if (!changed) break;
  }
}

double predict(const ClassFit& fit, const Point& p) {
  double t = 0;
  if (fit.compute_rows > 0) t = std::max(t, fit.compute_intercept_s + fit.s_per_flop * p.work);
  if (fit.memory_rows > 0 || fit.memory_fixed) t = std::max(t, fit.launch_s + fit.s_per_byte * p.bytes);
  return t;
}

double mean_abs_error(const ClassFit& fit, const std::vector<Point>& rows) {
  double sum = 0;
  for (const Point& p : rows) sum += std::fabs(predict(fit, p) / p.seconds - 1);
  return rows.empty() ? 0 : sum / rows.size();
}

// Back from the two lines to the performance model's parameters.
OpEfficiency efficiency_of(const ClassFit& fit, OpEfficiency e, double peak, const GpuSpec& gpu) {
  if (fit.memory_rows > 0 && !fit.memory_fixed) {
    e.launch_s = std::max(0.0, fit.launch_s);
    if (fit.s_per_byte > 0) e.memory = 1 / (fit.s_per_byte * gpu.memory_bandwidth_Bps);
  }
  if (fit.compute_rows > 0 && fit.s_per_flop > 0) {
    e.compute_max = 1 / (fit.s_per_flop * peak);
    // Without memory-bound rows the launch cost cannot be told from t_half: keep the
    // default launch unless the intercept is smaller than it.
    if (fit.memory_rows == 0 && !fit.memory_fixed)
      e.launch_s = std::min(e.launch_s, std::max(0.0, fit.compute_intercept_s));
    e.half_time_s = std::max(0.0, (fit.compute_intercept_s - e.launch_s) * e.compute_max);
  }
  return e;
}

// Fused attention by head size: time - launch = flops u0 + flops / d u1 + bytes u2 +
// causal bytes u3, by least squares weighted by 1 / time^2. A column the rows cannot tell
// apart (every row causal, or none; one head size) is left out, its parameter 0.
Eigen::VectorXd attention_terms(const Measurement& m) {
  Eigen::VectorXd x(4);
  x << m.flops, m.flops / m.head_dim, m.bytes, m.causal ? m.bytes : 0.0;
  return x;
}

double attention_predict(const Eigen::VectorXd& u, double launch, const Measurement& m) {
  return launch + attention_terms(m).dot(u);
}

double attention_error(const Eigen::VectorXd& u, double launch, const std::vector<Measurement>& rows) {
  double sum = 0;
  for (const Measurement& m : rows) sum += std::fabs(attention_predict(u, launch, m) / m.seconds - 1);
  return rows.empty() ? 0 : sum / rows.size();
}

// The kept terms' least squares with the `fixed` ones (>= 0) held at their value.
Eigen::VectorXd solve_attention(const std::vector<Measurement>& train, double launch, const bool keep[4],
                                const double fixed[4]) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(train.size()), 4);
  Eigen::VectorXd y(static_cast<Eigen::Index>(train.size()));
  for (size_t i = 0; i < train.size(); ++i) {
    const Eigen::VectorXd x = attention_terms(train[i]);
    double rest = train[i].seconds - launch;
    for (int j = 0; j < 4; ++j) {
      if (fixed[j] >= 0)
        rest -= fixed[j] * x(j);
      else
        a(static_cast<Eigen::Index>(i), j) = keep[j] ? x(j) / train[i].seconds : 0;
    }
    y(static_cast<Eigen::Index>(i)) = rest / train[i].seconds;
  }
  Eigen::VectorXd u = a.colPivHouseholderQr().solve(y).cwiseMax(0.0);
  for (int j = 0; j < 4; ++j)
    if (fixed[j] >= 0) u(j) = fixed[j];
  return u;
}

// No kernel beats its datasheet: a fit past the peak (or past HBM's bandwidth for the passes)
// holds that term at the datasheet's rate and refits the others, rather than clamping after,
// which would price every row slower than the fit the error is reported for.
Eigen::VectorXd constrained_attention(const std::vector<Measurement>& train, double launch, const bool keep[4],
                                      double peak, double hbm, std::vector<std::string>& warnings) {
  double fixed[4] = {-1, -1, -1, -1};
  Eigen::VectorXd u = solve_attention(train, launch, keep, fixed);
  const double floor[2] = {1 / peak, 1 / hbm};
  const char* what[2] = {"compute efficiency", "memory efficiency"};
  for (int t = 0; t < 2; ++t) {
    const int j = t == 0 ? 0 : 2;
    if (u(j) <= 0 || u(j) >= floor[t]) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "the fitted %s ran past 1 (%.3g); held at 1 and the other terms refitted", what[t],
                  floor[t] / u(j));
    warnings.push_back(buf);
    fixed[j] = floor[t];
    u = solve_attention(train, launch, keep, fixed);
  }
  return u;
}

void fit_attention(const std::vector<Measurement>& train, const std::vector<Measurement>& held, double peak,
                   const GpuSpec& gpu, ClassFit& fit) {
  OpEfficiency& e = fit.efficiency;
  bool causal = false, plain = false, one_size = true;
  for (const Measurement& m : train) {
    (m.causal ? causal : plain) = true;
    one_size = one_size && m.head_dim == train[0].head_dim;
  }
  const bool keep[4] = {true, !one_size, true, causal && plain};
  const Eigen::VectorXd u =
      constrained_attention(train, e.launch_s, keep, peak, gpu.memory_bandwidth_Bps, fit.warnings);
  fit.train_mean_abs_error = attention_error(u, e.launch_s, train);
  fit.heldout_mean_abs_error = attention_error(u, e.launch_s, held);
  fit.compute_rows = static_cast<int>(train.size());
  fit.s_per_flop = u(0);
  fit.s_per_byte = u(2);
  e.half_time_s = 0;
  if (u(0) > 0) e.compute_max = std::min(1.0, 1 / (u(0) * peak));
  e.k_fill = u(0) > 0 ? u(1) / u(0) : 0;
  if (u(2) > 0) e.memory = std::min(1.0, 1 / (u(2) * gpu.memory_bandwidth_Bps));
  e = within_model_ranges(e, fit.warnings);
  e.causal_extra = u(3) * gpu.memory_bandwidth_Bps * e.memory;  // of the passes as kept
}

ClassFit fit_attention_class(sim::OpClass c, const std::vector<Measurement>& train,
                             const std::vector<Measurement>& held, double peak, const GpuSpec& gpu) {
  ClassFit fit;
  fit.op_class = c;
  fit.shaped = true;
  fit.rows = static_cast<int>(train.size() + held.size());
  fit.held_out = static_cast<int>(held.size());
  fit.efficiency = Efficiency::defaults_for(gpu).per_class[static_cast<size_t>(c)];
  fit_attention(train, held, peak, gpu, fit);
  return fit;
}

// One op class: its rows split into training and held-out (every fifth), the lines fitted
// (for shaped GEMMs, for each k_fill, the best on the training rows kept).
ClassFit fit_class(sim::OpClass c, const std::vector<Measurement>& rows, const GpuSpec& gpu, double fixed_fill) {
  std::vector<Measurement> train, held;
  for (size_t i = 0; i < rows.size(); ++i) (rows.size() >= 5 && i % 5 == 4 ? held : train).push_back(rows[i]);
  const double peak = gpu.peak_flops(train[0].dtype) > 0 ? gpu.peak_flops(train[0].dtype) : gpu.peak_fp32;
  bool shaped = c == sim::OpClass::Gemm || sim::fused_attention(c);
  for (const Measurement& m : rows) shaped = shaped && m.shaped;
  if (shaped && sim::fused_attention(c)) return fit_attention_class(c, train, held, peak, gpu);
  // fp8 and fp4 GEMMs read and write memory as the GPU's other GEMMs do: their memory line and
  // launch are the 16-bit GEMM class's, only their tensor-core throughput is fitted.
  const bool narrow = narrow_gemm(c, train[0].dtype);
  const OpEfficiency sixteen = Efficiency::defaults_for(gpu).per_class[static_cast<size_t>(c)];
  ClassFit best;
  const double first = shaped && fixed_fill >= 0 ? fixed_fill : 0;
  const double last = !shaped ? 0 : fixed_fill >= 0 ? fixed_fill : 512;
  for (double k_fill = first; k_fill <= last; k_fill += 16) {
    ClassFit fit;
    fit.memory_fixed = narrow;
    fit.launch_s = sixteen.launch_s;
    fit.s_per_byte = 1 / (gpu.memory_bandwidth_Bps * sixteen.memory);
    const std::vector<Point> points = points_of(train, gpu, shaped, k_fill);
    fit_lines(points, peak, gpu.memory_bandwidth_Bps, fit);
    fit.train_mean_abs_error = mean_abs_error(fit, points);
    fit.heldout_mean_abs_error = mean_abs_error(fit, points_of(held, gpu, shaped, k_fill));
    fit.efficiency.k_fill = k_fill;
    if (k_fill == first || fit.train_mean_abs_error < best.train_mean_abs_error) best = fit;
  }
  best.op_class = c;
  best.narrow = narrow ? train[0].dtype : sim::DType::BF16;
  best.shaped = shaped;
  best.rows = static_cast<int>(rows.size());
  best.held_out = static_cast<int>(held.size());
  OpEfficiency e = sixteen;
  e.k_fill = best.efficiency.k_fill;
  best.efficiency = within_model_ranges(efficiency_of(best, e, peak, gpu), best.warnings);
  return best;
}

}  // namespace

std::vector<Measurement> load_measurements(const std::string& path) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"op_class", "flops", "bytes", "dtype", "seconds"});
  std::vector<Measurement> rows;
  for (const CsvRow& c : table.rows()) {
    Measurement m;
    m.line = c.line();
    if (!parse_class(c.text("op_class"), &m.op_class))
      c.fail("op_class", "unknown op class \"" + c.text("op_class") +
                             "\"; valid: gemm (matmul, conv), attention, elementwise (softmax, dropout, gelu), norm "
                             "(layernorm, rmsnorm), embedding, optimizer, " +
                             fused_attention_names());
    if (!sim::parse_dtype(c.text("dtype"), &m.dtype))
      c.fail("dtype", "unknown dtype \"" + c.text("dtype") + "\"; valid: " + sim::dtype_names());
    m.flops = c.as_double("flops", 0, 1e21);
    m.bytes = c.as_double("bytes", 0, 1e18);
    m.seconds = c.as_double("seconds", 1e-12, 1e6);  // a measured kernel time
    m.dtype_at = c.loc("dtype");
    read_shape(c, m);
    read_head(c, m);
    rows.push_back(m);
  }
  if (rows.empty()) throw ConfigError(SourceLoc{path, table.header_line(), 1}, "", "no measurements after the header");
  return rows;
}

void check_dtypes(const std::vector<Measurement>& rows, const GpuSpec& gpu) {
  for (const Measurement& m : rows)
    if (m.flops > 0 && gpu.peak_flops(m.dtype) <= 0)
      throw ConfigError(
          m.dtype_at, "dtype",
          "the " + gpu.name + " has no " + sim::to_string(m.dtype) +
              " peak to measure this kernel against; give rows of a dtype it runs or the GPU they ran on");
}

const char* fit_name(const ClassFit& f) {
  if (f.narrow == sim::DType::FP8) return "gemm_fp8";
  return f.narrow == sim::DType::FP4 ? "gemm_fp4" : sim::to_string(f.op_class);
}

std::vector<ClassFit> fit_measurements(const std::vector<Measurement>& all, const GpuSpec& gpu, double k_fill) {
  std::vector<ClassFit> out;
  for (int c = 0; c < sim::kOpClasses; ++c)
    for (const sim::DType narrow : {sim::DType::BF16, sim::DType::FP8, sim::DType::FP4}) {
      std::vector<Measurement> rows;
      for (const Measurement& m : all)
        if (static_cast<int>(m.op_class) == c &&
            narrow == (narrow_gemm(m.op_class, m.dtype) ? m.dtype : sim::DType::BF16))
          rows.push_back(m);
      if (!rows.empty()) out.push_back(fit_class(static_cast<sim::OpClass>(c), rows, gpu, k_fill));
    }
  return out;
}

namespace {

// One class's entry: what it gives replaces `e`'s values.
void read_efficiency(const ConfigNode& n, bool fused, OpEfficiency& e) {
  n.expect_map({"compute_efficiency", "half_time", "memory_efficiency", "launch", "k_fill", "causal_extra"});
  // Fractions of the datasheet peak; times a kernel cannot take a second of.
  e.compute_max = n.get_double("compute_efficiency", e.compute_max, 1e-3, 1);
  e.memory = n.get_double("memory_efficiency", e.memory, 1e-3, 1);
  e.half_time_s = n.get_quantity("half_time", units::Dimension::Time, e.half_time_s, 0, 1);
  e.launch_s = n.get_quantity("launch", units::Dimension::Time, e.launch_s, 0, 1);
  e.k_fill = n.get_double("k_fill", e.k_fill, 0, 1 << 20);  // reduction elements
  // Fused attention by head size: a causal mask's diagonal tiles, a share of the passes.
  // An entry without it was fitted as a roofline (calibrate without head sizes): priced so.
  if (n.has("causal_extra") && !fused)
    n.child("causal_extra").fail("causal_extra is for fused attention only (" + fused_attention_names() + ")");
  if (fused) e.causal_extra = n.get_double("causal_extra", -1, 0, 100);
}

// One narrow fit from `key`: it starts from the fit in place, else from `beside`.
void read_narrow_key(const ConfigNode& root, const std::string& key, const OpEfficiency& beside,
                     std::optional<OpEfficiency>& fit) {
  if (!root.has(key)) return;
  OpEfficiency e = fit.value_or(beside);
  read_efficiency(root.child(key), false, e);
  fit = e;
}

// The keys of the narrow fits: gemm_fp8 (per-tensor scaled), gemm_fp4; quantize_fp8 (every
// recipe's casts), quantize_fp8_<recipe> (one's), quantize_fp4. GEMMs start from the GEMM
// class, casts from the element-wise one.
std::vector<std::string> narrow_keys() {
  std::vector<std::string> keys = {"gemm_fp8", "gemm_fp4", "quantize_fp8", "quantize_fp4", "mxfp8_gemm_time"};
  for (const sim::Fp8RecipeEntry& r : sim::fp8_recipes()) keys.push_back(std::string("quantize_fp8_") + r.name);
  return keys;
}

void read_narrow(const ConfigNode& root, Efficiency& eff) {
  const OpEfficiency gemm = eff.per_class[static_cast<size_t>(sim::OpClass::Gemm)];
  const OpEfficiency cast = eff.per_class[static_cast<size_t>(sim::OpClass::Elementwise)];
  read_narrow_key(root, "gemm_fp8", gemm, eff.gemm_fp8);
  // block-scaled kernels against per-tensor ones: from half to four times their time
  eff.mxfp8_gemm_time = root.get_double("mxfp8_gemm_time", eff.mxfp8_gemm_time, 0.5, 4);
  read_narrow_key(root, "gemm_fp4", gemm, eff.gemm_fp4);
  read_narrow_key(root, "quantize_fp4", cast, eff.quantize_fp4);
  for (const sim::Fp8RecipeEntry& r : sim::fp8_recipes()) {
    std::optional<OpEfficiency>& fit = eff.narrow(sim::DType::FP8, true, r.recipe);
    read_narrow_key(root, "quantize_fp8", cast, fit);
    read_narrow_key(root, std::string("quantize_fp8_") + r.name, cast, fit);
  }
}

}  // namespace

namespace {

// load_calibration's keys start with "gpu" and the step keys; the kernel classes' follow.
constexpr size_t kStepKeys = 4;

// The GPU type a calibration loads for: the file's, or `any_as` for a step calibration of no
// one GPU type, whose file may then set the step keys alone.
std::string calibration_gpu(const ConfigNode& root, const std::vector<std::string>& keys, const std::string& any_as) {
  const ConfigNode g = root.child("gpu");
  const std::string gpu = g.as_string();
  if (gpu == kAnyGpu) {
    if (any_as.empty()) g.fail("gpu: any is a step calibration of every GPU type a platform has; apply it to one");
    for (size_t k = kStepKeys; k < keys.size(); ++k)
      if (root.has(keys[k]))
        root.child(keys[k]).fail(
            "a calibration of gpu: any sets step_efficiency, attention_step_efficiency and "
            "step_overhead alone; kernel efficiencies are shares of one GPU type's peaks");
    return any_as;
  }
  if (!has_gpu(gpu)) g.fail("unknown GPU \"" + gpu + "\"; valid: " + gpu_names() + ", or any (step keys alone)");
  return gpu;
}

}  // namespace

Calibration load_calibration(const ConfigNode& root, const Cluster* onto, const std::string& any_as) {
  std::vector<std::string> keys = {"gpu", "step_efficiency", "attention_step_efficiency", "step_overhead"};
  for (int k = 0; k < sim::kOpClasses; ++k) keys.emplace_back(sim::to_string(static_cast<sim::OpClass>(k)));
  for (const std::string& k : narrow_keys()) keys.push_back(k);
  root.expect_map(keys);
  Calibration c;
  c.gpu = calibration_gpu(root, keys, any_as);
  const auto earlier = onto ? onto->efficiency.find(c.gpu) : std::map<std::string, Efficiency>::const_iterator();
  c.efficiency =
      onto && earlier != onto->efficiency.end() ? earlier->second : Efficiency::defaults_for(gpu_spec(c.gpu));
  // A stack's kernels in a step reach a share of their isolated speed; above 1 they would
  // beat the kernels measured alone by half again, which no framework does.
  c.efficiency.step = root.get_double("step_efficiency", c.efficiency.step, 0.05, 1.5);
  // Its attention kernels beside that (a Triton kernel in a step against the one timed alone).
  c.efficiency.attention_step = root.get_double("attention_step_efficiency", c.efficiency.attention_step, 0.05, 3);
  // Seconds of host time an iteration, past its kernels (a minute would be no training step).
  c.efficiency.step_overhead_s =
      root.get_quantity("step_overhead", units::Dimension::Time, c.efficiency.step_overhead_s, 0, 60);
  if (root.has("step_efficiency") || root.has("attention_step_efficiency") || root.has("step_overhead"))
    c.efficiency.step_typical = root.child("gpu").as_string() == kAnyGpu;
  for (int k = 0; k < sim::kOpClasses; ++k) {
    const char* name = sim::to_string(static_cast<sim::OpClass>(k));
    if (root.has(name))
      read_efficiency(root.child(name), sim::fused_attention(static_cast<sim::OpClass>(k)), c.efficiency.per_class[k]);
  }
  read_narrow(root, c.efficiency);
  return c;
}

Calibration load_calibration_file(const std::string& path, const Cluster* onto) {
  return load_calibration(ConfigNode::load_file(path), onto);
}

void write_calibration(std::ostream& out, const std::string& gpu, const std::vector<ClassFit>& fits,
                       const std::string& source) {
  out << "# Fitted by dejavu calibrate from " << source << "\n";
  out << "gpu: " << gpu << "\n";
  char buf[256];
  for (const ClassFit& f : fits) {
    std::snprintf(buf, sizeof buf,
                  "# %s: %d rows (%d compute-bound, %d memory-bound), held-out mean |error| %.2f%% over %d\n",
                  fit_name(f), f.rows, f.compute_rows, f.memory_rows, 100 * f.heldout_mean_abs_error, f.held_out);
    out << buf;
    std::snprintf(buf, sizeof buf,
                  "%s: {compute_efficiency: %.6g, half_time: %.6g s, memory_efficiency: %.6g, launch: %.6g s, "
                  "k_fill: %.6g",
                  fit_name(f), std::min(1.0, f.efficiency.compute_max), f.efficiency.half_time_s,
                  std::min(1.0, f.efficiency.memory), f.efficiency.launch_s, f.efficiency.k_fill);
    out << buf;
    if (f.efficiency.causal_extra >= 0) {
      std::snprintf(buf, sizeof buf, ", causal_extra: %.6g", f.efficiency.causal_extra);
      out << buf;
    }
    out << "}\n";
  }
}

void apply_calibration(Cluster& cluster, const Calibration& c, const std::string& where) {
  bool has = false;
  for (const auto& slot : cluster.gpus) has = has || slot.spec->name == c.gpu;
  if (!has)
    throw ConfigError(SourceLoc{where, 0, 0}, "gpu",
                      "platform " + cluster.name + " has no " + c.gpu + "; a calibration applies to a GPU type it has");
  cluster.efficiency[c.gpu] = c.efficiency;
  cluster.calibrated_from[c.gpu].push_back(std::filesystem::path(where).filename().string());
}

void apply_calibration(Cluster& cluster, const ConfigNode& root, const std::string& where) {
  if (root.get_string("gpu") != kAnyGpu) return apply_calibration(cluster, load_calibration(root, &cluster), where);
  std::set<std::string> types;  // sorted: deterministic
  for (const auto& slot : cluster.gpus) types.insert(slot.spec->name);
  for (const std::string& gpu : types) apply_calibration(cluster, load_calibration(root, &cluster, gpu), where);
}

std::string step_calibration_kind(const Cluster& cluster, const std::string& gpu) {
  if (!step_calibrated(cluster, gpu)) return "none";
  return cluster.efficiency.at(gpu).step_typical ? "typical" : "fitted";
}

bool step_calibrated(const Cluster& cluster, const std::string& gpu) {
  const auto it = cluster.efficiency.find(gpu);
  return it != cluster.efficiency.end() &&
         (it->second.step != 1 || it->second.attention_step != 1 || it->second.step_overhead_s > 0);
}

PerfModel perf_model(const Cluster& cluster, const GpuSpec& gpu) {
  auto it = cluster.efficiency.find(gpu.name);
  return it == cluster.efficiency.end() ? PerfModel(gpu) : PerfModel(gpu, it->second);
}

}  // namespace dejavu::platforms
