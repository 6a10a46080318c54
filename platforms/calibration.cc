#include "platforms/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "sim/error.h"
#include "sim/units.h"

namespace dejavu::platforms {

namespace {

bool parse_class(const std::string& name, sim::OpClass* out) {
  static const std::map<std::string, sim::OpClass> names = {
      {"gemm", sim::OpClass::Gemm},          {"matmul", sim::OpClass::Gemm},
      {"conv", sim::OpClass::Gemm},          {"attention", sim::OpClass::Attention},
      {"elementwise", sim::OpClass::Elementwise}, {"softmax", sim::OpClass::Elementwise},
      {"dropout", sim::OpClass::Elementwise}, {"gelu", sim::OpClass::Elementwise},
      {"norm", sim::OpClass::Norm},          {"layernorm", sim::OpClass::Norm},
      {"rmsnorm", sim::OpClass::Norm},       {"embedding", sim::OpClass::Embedding},
      {"optimizer", sim::OpClass::Optimizer}};
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

}  // namespace

std::vector<Measurement> load_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot open the file");
  std::string line;
  int no = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    header = split_csv_line(line);
  }
  const char* needed[] = {"op_class", "flops", "bytes", "dtype", "seconds"};
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : needed)
    if (!col.count(c))
      throw ConfigError(SourceLoc{path, no, 1}, c,
                        "missing column; the header needs op_class, flops, bytes, dtype, seconds (in any order)");
  std::vector<Measurement> rows;
  while (std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() < header.size())
      throw ConfigError(SourceLoc{path, no, 1}, "", "expected " + std::to_string(header.size()) + " columns, got " +
                                                        std::to_string(f.size()));
    Measurement m;
    m.line = no;
    auto at = [&](const char* c) { return f[col[c]]; };
    auto column_of = [&](const char* c) { return static_cast<int>(col[c]) + 1; };
    if (!parse_class(at("op_class"), &m.op_class))
      throw ConfigError(SourceLoc{path, no, column_of("op_class")}, "op_class",
                        "unknown op class \"" + at("op_class") +
                            "\"; valid: gemm (matmul, conv), attention, elementwise (softmax, dropout, gelu), norm "
                            "(layernorm, rmsnorm), embedding, optimizer");
    if (!sim::parse_dtype(at("dtype"), &m.dtype))
      throw ConfigError(SourceLoc{path, no, column_of("dtype")}, "dtype",
                        "unknown dtype \"" + at("dtype") + "\"; valid: " + sim::dtype_names());
    for (auto [name, field] : {std::pair<const char*, double*>{"flops", &m.flops}, {"bytes", &m.bytes}, {"seconds", &m.seconds}}) {
      const std::string text = at(name);
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v))
        throw ConfigError(SourceLoc{path, no, column_of(name)}, name, "\"" + text + "\" is not a number");
      if (v < 0 || (v == 0 && std::string(name) == "seconds"))
        throw ConfigError(SourceLoc{path, no, column_of(name)}, name,
                          "expected a positive value, got " + text + (std::string(name) == "seconds" ? " (a measured time)" : ""));
      *field = v;
    }
    rows.push_back(m);
  }
  if (rows.empty()) throw ConfigError(SourceLoc{path, no, 1}, "", "no measurements after the header");
  return rows;
}

std::vector<ClassFit> fit_measurements(const std::vector<Measurement>& all, const GpuSpec& gpu) {
  std::vector<ClassFit> out;
  const Efficiency defaults = Efficiency::defaults();
  for (int c = 0; c < 6; ++c) {
    std::vector<Measurement> rows, train, held;
    for (const Measurement& m : all)
      if (static_cast<int>(m.op_class) == c) rows.push_back(m);
    if (rows.empty()) continue;
    for (size_t i = 0; i < rows.size(); ++i) (rows.size() >= 5 && i % 5 == 4 ? held : train).push_back(rows[i]);
    ClassFit fit;
    fit.op_class = static_cast<sim::OpClass>(c);
    fit.rows = static_cast<int>(rows.size());
    fit.held_out = static_cast<int>(held.size());
    // Start: a row is compute-bound when its arithmetic intensity beats the GPU's ridge.
    const double peak = gpu.peak_flops(train[0].dtype) > 0 ? gpu.peak_flops(train[0].dtype) : gpu.peak_fp32;
    std::vector<char> compute(train.size());
    for (size_t i = 0; i < train.size(); ++i)
      compute[i] = train[i].flops / peak >= train[i].bytes / gpu.memory_bandwidth_Bps;
    for (int round = 0; round < 50; ++round) {
      std::vector<double> fx, fy, bx, by;
      for (size_t i = 0; i < train.size(); ++i) {
        (compute[i] ? fx : bx).push_back(compute[i] ? train[i].flops : train[i].bytes);
        (compute[i] ? fy : by).push_back(train[i].seconds);
      }
      std::tie(fit.compute_intercept_s, fit.s_per_flop) = fx.empty() ? std::pair{0.0, 0.0} : line_fit(fx, fy);
      std::tie(fit.launch_s, fit.s_per_byte) = bx.empty() ? std::pair{0.0, 0.0} : line_fit(bx, by);
      fit.compute_rows = static_cast<int>(fx.size());
      fit.memory_rows = static_cast<int>(bx.size());
      bool changed = false;
      for (size_t i = 0; i < train.size(); ++i) {
        const double tc = fx.empty() ? -1 : fit.compute_intercept_s + fit.s_per_flop * train[i].flops;
        const double tm = bx.empty() ? -1 : fit.launch_s + fit.s_per_byte * train[i].bytes;
        const char want = tc >= tm;
        if (want != compute[i] && !(fx.size() == 1 && compute[i]) && !(bx.size() == 1 && !compute[i])) {
          compute[i] = want;
          changed = true;
        }
      }
      if (!changed) break;
    }
    auto predict = [&](const Measurement& m) {
      double t = 0;
      if (fit.compute_rows > 0) t = std::max(t, fit.compute_intercept_s + fit.s_per_flop * m.flops);
      if (fit.memory_rows > 0) t = std::max(t, fit.launch_s + fit.s_per_byte * m.bytes);
      return t;
    };
    for (const Measurement& m : train) fit.train_mean_abs_error += std::fabs(predict(m) / m.seconds - 1) / train.size();
    for (const Measurement& m : held) fit.heldout_mean_abs_error += std::fabs(predict(m) / m.seconds - 1) / held.size();
    // Back to the performance model's parameters.
    OpEfficiency e = defaults.per_class[c];
    if (fit.memory_rows > 0) {
      e.launch_s = std::max(0.0, fit.launch_s);
      if (fit.s_per_byte > 0) e.memory = 1 / (fit.s_per_byte * gpu.memory_bandwidth_Bps);
    }
    if (fit.compute_rows > 0 && fit.s_per_flop > 0) {
      e.compute_max = 1 / (fit.s_per_flop * peak);
      // Without memory-bound rows the launch cost cannot be told from t_half: keep the
      // default launch unless the intercept is smaller than it.
      if (fit.memory_rows == 0) e.launch_s = std::min(e.launch_s, std::max(0.0, fit.compute_intercept_s));
      e.half_time_s = std::max(0.0, (fit.compute_intercept_s - e.launch_s) * e.compute_max);
    }
    fit.efficiency = e;
    out.push_back(fit);
  }
  return out;
}

Calibration load_calibration(const ConfigNode& root) {
  root.expect_map({"gpu", "gemm", "attention", "elementwise", "norm", "embedding", "optimizer"});
  Calibration c;
  const ConfigNode g = root.child("gpu");
  c.gpu = g.as_string();
  if (!has_gpu(c.gpu)) g.fail("unknown GPU \"" + c.gpu + "\"; valid: " + gpu_names());
  for (int k = 0; k < 6; ++k) {
    const char* name = sim::to_string(static_cast<sim::OpClass>(k));
    if (!root.has(name)) continue;
    const ConfigNode n = root.child(name);
    n.expect_map({"compute_efficiency", "half_time", "memory_efficiency", "launch"});
    OpEfficiency& e = c.efficiency.per_class[k];
    auto fraction = [&](const char* key, double& v) {
      if (!n.has(key)) return;
      v = n.child(key).as_double();
      if (!(v > 0 && v <= 1)) n.child(key).fail("expected a fraction in (0, 1] of the datasheet peak");
    };
    fraction("compute_efficiency", e.compute_max);
    fraction("memory_efficiency", e.memory);
    e.half_time_s = n.get_quantity("half_time", units::Dimension::Time, e.half_time_s);
    e.launch_s = n.get_quantity("launch", units::Dimension::Time, e.launch_s);
    if (e.half_time_s < 0) n.child("half_time").fail("expected 0 s or more");
    if (e.launch_s < 0) n.child("launch").fail("expected 0 s or more");
  }
  return c;
}

Calibration load_calibration_file(const std::string& path) { return load_calibration(ConfigNode::load_file(path)); }

void write_calibration(std::ostream& out, const std::string& gpu, const std::vector<ClassFit>& fits,
                       const std::string& source) {
  out << "# Fitted by dejavu calibrate from " << source << "\n";
  out << "gpu: " << gpu << "\n";
  char buf[256];
  for (const ClassFit& f : fits) {
    std::snprintf(buf, sizeof buf, "# %s: %d rows (%d compute-bound, %d memory-bound), held-out mean |error| %.2f%% over %d\n",
                  sim::to_string(f.op_class), f.rows, f.compute_rows, f.memory_rows, 100 * f.heldout_mean_abs_error,
                  f.held_out);
    out << buf;
    std::snprintf(buf, sizeof buf, "%s: {compute_efficiency: %.6g, half_time: %.6g s, memory_efficiency: %.6g, launch: %.6g s}\n",
                  sim::to_string(f.op_class), std::min(1.0, f.efficiency.compute_max), f.efficiency.half_time_s,
                  std::min(1.0, f.efficiency.memory), f.efficiency.launch_s);
    out << buf;
  }
}

void apply_calibration(Cluster& cluster, const Calibration& c, const std::string& where) {
  bool has = false;
  for (const auto& slot : cluster.gpus) has = has || slot.spec->name == c.gpu;
  if (!has)
    throw ConfigError(SourceLoc{where, 0, 0}, "gpu",
                      "platform " + cluster.name + " has no " + c.gpu + "; a calibration applies to a GPU type it has");
  cluster.efficiency[c.gpu] = c.efficiency;
}

PerfModel perf_model(const Cluster& cluster, const GpuSpec& gpu) {
  auto it = cluster.efficiency.find(gpu.name);
  return it == cluster.efficiency.end() ? PerfModel(gpu) : PerfModel(gpu, it->second);
}

}  // namespace dejavu::platforms
