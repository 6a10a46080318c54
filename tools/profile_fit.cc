#include "tools/profile_fit.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/lowering.h"

namespace dejavu::tools {

std::vector<StageMeasurement> load_stage_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot open the file");
  const std::vector<std::string> names = {"tp", "micro_batch", "recompute", "sequence_parallel", "layers", "seconds"};
  std::string line;
  int no = 0;
  std::map<std::string, size_t> col;
  std::vector<StageMeasurement> rows;
  while (std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_csv_line(line);
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const std::string& n : names)
        if (!col.count(n))
          throw ConfigError(SourceLoc{path, no, 1}, n,
                            "missing column; the header needs tp, micro_batch, recompute, sequence_parallel, layers, seconds");
      continue;
    }
    if (f.size() < col.size())
      throw ConfigError(SourceLoc{path, no, 1}, "", "expected " + std::to_string(col.size()) + " columns");
    StageMeasurement m;
    m.file = path;
    m.line = no;
    auto where = [&](const std::string& n) { return SourceLoc{path, no, static_cast<int>(col[n]) + 1}; };
    auto positive_int = [&](const std::string& n) {
      const std::string& t = f[col[n]];
      char* end = nullptr;
      const long v = std::strtol(t.c_str(), &end, 10);
      if (t.empty() || *end != '\0' || v <= 0) throw ConfigError(where(n), n, "expected a positive whole number, got \"" + t + "\"");
      return static_cast<int>(v);
    };
    m.tp = positive_int("tp");
    m.micro_batch = positive_int("micro_batch");
    m.layers = positive_int("layers");
    m.recompute = f[col["recompute"]];
    if (m.recompute != "none" && m.recompute != "selective" && m.recompute != "full")
      throw ConfigError(where("recompute"), "recompute", "\"" + m.recompute + "\"; valid: none, selective, full");
    const std::string& sp = f[col["sequence_parallel"]];
    if (sp != "true" && sp != "false")
      throw ConfigError(where("sequence_parallel"), "sequence_parallel", "\"" + sp + "\"; valid: true, false");
    m.sequence_parallel = sp == "true";
    const std::string& t = f[col["seconds"]];
    char* end = nullptr;
    m.seconds = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(m.seconds > 0))
      throw ConfigError(where("seconds"), "seconds", "expected a positive measured time, got \"" + t + "\"");
    rows.push_back(m);
  }
  if (rows.empty()) throw ConfigError(SourceLoc{path, no, 1}, "", "no measurements");
  return rows;
}

ProfileFit fit_profiles(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                        const std::vector<StageMeasurement>& rows, int train) {
  ProfileFit fit;
  fit.train = std::max(1, std::min(train, static_cast<int>(rows.size())));
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageMeasurement& m = rows[i];
    if (model.heads > 0 && model.heads % m.tp != 0)
      throw ConfigError(SourceLoc{m.file, m.line, 1}, "tp", std::to_string(m.tp) + " does not divide the heads of " + model.name);
    if (m.layers > model.layers || m.tp > cluster.gpu_count())
      throw ConfigError(SourceLoc{m.file, m.line, 1}, "layers", "more layers or GPUs than the model and platform have");
    strategies::Plan p;
    p.tp = m.tp;
    p.dp = 1;
    p.micro_batch_size = m.micro_batch;
    p.global_batch_size = m.micro_batch;
    p.recompute = m.recompute;
    p.sequence_parallel = m.sequence_parallel;
    double sim = 0;
    int counted = 0;
    for (const auto& b : strategies::block_costs(model, cluster, p, 0))
      if (b.is_layer && counted < m.layers) {
        sim += b.time_s;
        ++counted;
      }
    fit.rows.push_back({m, sim, 0, static_cast<int>(i) >= fit.train});
  }
  // Least squares on the training rows, weighted by 1/measured^2 (relative errors); one
  // row fits the scale alone.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : fit.rows)
    if (!r.held_out) {
      const double w = 1 / (r.row.seconds * r.row.seconds), x = r.simulated_s, y = r.row.seconds;
      n += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
  const double det = n * sxx - sx * sx;
  if (fit.train >= 2 && det > 1e-12 * n * sxx) {
    fit.a = (n * sxy - sx * sy) / det;
    fit.b = (sy - fit.a * sx) / n;
  } else {
    fit.a = sxy / sxx;
    fit.b = 0;
  }
  int held = 0;
  for (auto& r : fit.rows) {
    r.fitted_s = fit.a * r.simulated_s + fit.b;
    if (!r.held_out) continue;
    ++held;
    fit.heldout_error_simulated += std::fabs(r.simulated_s / r.row.seconds - 1);
    fit.heldout_error_fitted += std::fabs(r.fitted_s / r.row.seconds - 1);
  }
  if (held > 0) {
    fit.heldout_error_simulated /= held;
    fit.heldout_error_fitted /= held;
  }
  return fit;
}

void write_profile_fit(std::ostream& out, const ProfileFit& f) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "# fitted on %d profiled configurations: measured = %.4g x simulated %+.4g s\n", f.train,
                f.a, f.b);
  out << buf;
  out << "# config (tp mb recompute sp layers)      measured    simulated   error    fitted      error\n";
  for (const auto& r : f.rows) {
    std::snprintf(buf, sizeof buf, "%s tp%-2d mb%-3d %-9s %-5s %3d   %10.4g  %10.4g  %+6.1f%%  %10.4g  %+6.1f%%\n",
                  r.held_out ? " " : "*", r.row.tp, r.row.micro_batch, r.row.recompute.c_str(),
                  r.row.sequence_parallel ? "sp" : "-", r.row.layers, r.row.seconds, r.simulated_s,
                  100 * (r.simulated_s / r.row.seconds - 1), r.fitted_s, 100 * (r.fitted_s / r.row.seconds - 1));
    out << buf;
  }
  std::snprintf(buf, sizeof buf,
                "# * profiled. Held out: %zu configurations; mean |error| %.2f%% fitted, %.2f%% from the simulator alone\n",
                f.rows.size() - f.train, 100 * f.heldout_error_fitted, 100 * f.heldout_error_simulated);
  out << buf;
}

}  // namespace dejavu::tools
