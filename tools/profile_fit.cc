#include "tools/profile_fit.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/csv.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "strategies/lowering.h"
#include "strategies/recompute_modes.h"

namespace dejavu::tools {

std::vector<StageMeasurement> load_stage_measurements(const std::string& path) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"tp", "micro_batch", "recompute", "sequence_parallel", "layers", "seconds"});
  std::vector<StageMeasurement> rows;
  for (const CsvRow& c : table.rows()) {
    StageMeasurement m;
    m.file = path;
    m.line = c.line();
    m.tp = static_cast<int>(c.as_int("tp", 1, limits::kMaxHeads));
    m.micro_batch = static_cast<int>(c.as_int("micro_batch", 1, limits::kMaxBatch));
    m.layers = static_cast<int>(c.as_int("layers", 1, limits::kMaxLayers));
    m.recompute = c.as_choice("recompute", strategies::recompute_mode_names());
    m.sequence_parallel = c.as_choice("sequence_parallel", {"true", "false"}) == "true";
    m.seconds = c.as_double("seconds", 1e-12, limits::kMaxTime);
    rows.push_back(m);
  }
  if (rows.empty()) throw ConfigError(SourceLoc{path, table.header_line(), 1}, "", "no measurements");
  return rows;
}

ProfileFit fit_profiles(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                        const std::vector<StageMeasurement>& rows, int train) {
  ProfileFit fit;
  fit.train = std::max(1, std::min(train, static_cast<int>(rows.size())));
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageMeasurement& m = rows[i];
    if (model.heads > 0 && model.heads % m.tp != 0)
      throw ConfigError(SourceLoc{m.file, m.line, 1}, "tp",
                        std::to_string(m.tp) + " does not divide the heads of " + model.name);
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
  std::snprintf(buf, sizeof buf, "# fitted on %d profiled configurations: measured = %.4g x simulated %+.4g s\n",
                f.train, f.a, f.b);
  out << buf;
  out << "# config (tp mb recompute sp layers)      measured    simulated   error    fitted      error\n";
  for (const auto& r : f.rows) {
    std::snprintf(buf, sizeof buf, "%s tp%-2d mb%-3d %-9s %-5s %3d   %10.4g  %10.4g  %+6.1f%%  %10.4g  %+6.1f%%\n",
                  r.held_out ? " " : "*", r.row.tp, r.row.micro_batch, r.row.recompute.c_str(),
                  r.row.sequence_parallel ? "sp" : "-", r.row.layers, r.row.seconds, r.simulated_s,
                  100 * (r.simulated_s / r.row.seconds - 1), r.fitted_s, 100 * (r.fitted_s / r.row.seconds - 1));
    out << buf;
  }
  std::snprintf(
      buf, sizeof buf,
      "# * profiled. Held out: %zu configurations; mean |error| %.2f%% fitted, %.2f%% from the simulator alone\n",
      f.rows.size() - f.train, 100 * f.heldout_error_fitted, 100 * f.heldout_error_simulated);
  out << buf;
}

}  // namespace dejavu::tools
