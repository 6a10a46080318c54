#include "tools/validation_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "platforms/calibration.h"
#include "sim/config_node.h"
#include "sim/error.h"
#include "tools/collective_sweep.h"
#include "tools/megatron_validation.h"
#include "tools/platform_input.h"
#include "tools/public_training.h"

namespace dejavu::tools {

namespace {

// A public row's note: OOM when dejavu says it did not fit, its predicted peak when within a
// tenth of the GPU's memory (where the caching allocator's retries can slow a real step).
std::string memory_note(const PublicRun& run) {
  if (run.oom) return "OOM";
  if (run.memory_share < 0.9) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "peak %.0f%% of memory", 100 * run.memory_share);
  return buf;
}
std::string beside(const std::string& suite, const ConfigNode& n) {
  const std::filesystem::path p = std::filesystem::path(suite).parent_path() / n.as_string();
  if (!std::filesystem::exists(p)) n.fail("no such file: " + p.string());
  return p.string();
}

const std::initializer_list<const char*> kSuiteKeys = {
    "name",         "kind", "measurements", "platform",       "platforms", "source",   "calibration",
    "calibrations", "runs", "min_bytes",    "recorded_error", "precision", "max_bytes"};

// A public suite's rows by precision: `precision: fp8`, or the 16-bit rows when absent.
std::string precision_of(const ConfigNode& root) {
  return root.has("precision") ? root.child("precision").as_choice({"16-bit", "fp8"}) : "16-bit";
}

std::vector<std::string> calibrations_of(const std::string& path, const ConfigNode& root) {
  std::vector<std::string> out;
  if (root.has("calibration")) out.push_back(beside(path, root.child("calibration")));
  if (root.has("calibrations"))
    for (const ConfigNode& c : root.child("calibrations").items()) out.push_back(beside(path, c));
  return out;
}
}  // namespace

PublicSuiteFiles public_suite_files(const std::string& path, const std::string& use) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.expect_map(kSuiteKeys);
  if (root.child("kind").as_choice({"megatron", "nccl", "public"}) != "public")
    root.child("kind").fail(use + " a public suite (kind: public)");
  return {root.get_string("name", root.file_stem()),
          beside(path, root.child("measurements")),
          root.get_string("source"),
          beside(path, root.child("platforms")),
          calibrations_of(path, root),
          precision_of(root)};
}

RowExport export_validation_row(const std::string& path, const std::string& row) {
  const PublicSuiteFiles f = public_suite_files(path, "--row picks a row of");
  PublicOptions options;
  options.calibrations = f.calibrations;
  options.precision = f.precision;
  options.row = row;
  return export_public_row(f.measurements, f.source, f.platforms, options);
}

ValidationReport run_validation_suite(const std::string& path, int jobs, const std::string& row,
                                      const PublicRun* simulated) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.expect_map(kSuiteKeys);
  ValidationReport r;
  r.name = root.get_string("name", root.file_stem());
  r.kind = root.child("kind").as_choice({"megatron", "nccl", "public"});
  if (!row.empty() && r.kind != "public") root.child("kind").fail("--row picks a row of a public suite (kind: public)");
  r.recorded_error = root.get_double("recorded_error", 0, 0, 10);
  const std::string measurements = beside(path, root.child("measurements"));
  const std::vector<std::string> calibrations = calibrations_of(path, root);
  if (r.kind == "public") {
    r.unit = "s";
    PublicOptions options;
    options.calibrations = calibrations;
    options.precision = r.precision = precision_of(root);
    options.jobs = jobs;
    options.row = row;
    PublicSuite suite;
    if (simulated)
      suite.runs = {*simulated};
    else
      suite =
          run_public_training(measurements, root.get_string("source"), beside(path, root.child("platforms")), options);
    for (const PublicRun& run : suite.runs)
      r.rows.push_back({run.label, run.measured_s, run.predicted_s, run.held_out, memory_note(run), true, run.run});
    r.skipped = suite.skipped;
  } else if (r.kind == "megatron") {
    r.unit = "s";
    const std::string platform = beside(path, root.child("platform"));
    const platforms::Cluster calibrated = load_platform(platform, calibrations);
    for (const MegatronRow& row : load_megatron_csv(measurements)) {
      const MegatronPrediction p = predict(row, platform, calibrations);
      RunShape run;
      run.gpu = p.gpu, run.params = p.params, run.gpus = row.gpus, run.tp = row.tp, run.pp = row.pp;
      run.dp = row.gpus / (row.tp * row.pp);
      run.steps = platforms::step_calibration_kind(calibrated, p.gpu);
      r.rows.push_back({row.model + " full recompute", row.full_recompute_s, p.full_recompute_s, false, "", true, run});
      r.rows.push_back(
          {row.model + " seq-par + selective", row.seqpar_selective_s, p.seqpar_selective_s, false, "", true, run});
    }
  } else {
    r.unit = "GB/s";
    const double min_bytes = root.get_quantity("min_bytes", units::Dimension::Bytes, 16 * 1048576.0, 1, 1e15);
    const double max_bytes =
        root.get_quantity("max_bytes", units::Dimension::Bytes, 8.0 * (1ULL << 30), min_bytes, 1e15);
    for (const ConfigNode& run : root.child("runs").items()) {
      run.expect_map({"gpu", "gpus", "platform"});
      const platforms::Cluster cluster = load_platform(beside(path, run.child("platform")), calibrations);
      SweepOptions o;
      o.gpus = static_cast<int>(run.get_int("gpus", 2, cluster.gpu_count()));  // GPUs of the platform
      o.min_bytes = min_bytes;
      o.max_bytes = max_bytes;
      std::vector<SweepRow> rows = run_sweep(cluster, o);
      const std::string gpu = run.get_string("gpu");
      if (attach_measurements(measurements, gpu, o.gpus, rows) == 0)
        run.fail("no measured row for " + gpu + " x " + std::to_string(o.gpus) + " in " + measurements);
      for (const SweepRow& s : rows)
        if (s.measured_busbw_Bps) {
          char label[96];
          std::snprintf(label, sizeof label, "%s x%d all_reduce %.0f MiB", gpu.c_str(), o.gpus, s.bytes / 1048576);
          r.rows.push_back({label, *s.measured_busbw_Bps / 1e9, s.busbw_Bps / 1e9, false, "", false, {}});
        }
    }
  }
  if (r.rows.empty()) {
    std::string why;  // every row skipped: say why, as the summary would
    for (const auto& [reason, n] : r.skipped) why += (why.empty() ? "" : "; ") + std::to_string(n) + ": " + reason;
    throw ConfigError(root.loc(), "measurements",
                      "no rows to compare" + (why.empty() ? "" : "; every row was skipped (" + why + ")"));
  }
  double log_sum = 0;
  for (const ValidationRow& row : r.rows) log_sum += std::log(std::max(std::fabs(row.error()), 1e-6));
  r.geomean_abs_error = std::exp(log_sum / r.rows.size());
  return r;
}

namespace {
// Geometric mean of |error|, the mean |error| (the figure simulators' papers publish, never
// below the geometric mean: one row that happens to land near 0% pulls a geometric mean
// down, not an arithmetic one), the largest |error| and the mean signed error of the rows in
// `held_out`'s set.
struct SetErrors {
  int rows = 0, over = 0;
  double geomean = 0, mean_abs = 0, worst = 0, mean = 0;
};
SetErrors errors_of(const std::vector<ValidationRow>& rows, bool held_out) {
  SetErrors e;
  double log_sum = 0;
  for (const ValidationRow& row : rows) {
    if (row.held_out != held_out) continue;
    ++e.rows;
    log_sum += std::log(std::max(std::fabs(row.error()), 1e-6));
    e.worst = std::max(e.worst, std::fabs(row.error()));
    e.mean_abs += std::fabs(row.error());
    e.mean += row.error();
    if (row.error() > 0) ++e.over;
  }
  if (e.rows > 0) {
    e.geomean = std::exp(log_sum / e.rows);
    e.mean_abs /= e.rows;
    e.mean /= e.rows;
  }
  return e;
}

// The suite's step calibration as the summary names it: "fitted" (a framework's), "typical"
// or "-" (none).
std::string steps_of(const ValidationReport& r) {
  for (const ValidationRow& row : r.rows)
    if (row.run.steps != "none") return row.run.steps;
  return "-";
}

bool has_held_out(const ValidationReport& r) {
  for (const ValidationRow& row : r.rows)
    if (row.held_out) return true;
  return false;
}

void write_split(std::ostream& out, const ValidationReport& r) {
  char buf[256];
  for (bool held_out : {false, true}) {
    const SetErrors e = errors_of(r.rows, held_out);
    if (e.rows == 0) continue;  // a suite whose every row is held out
    std::snprintf(buf, sizeof buf,
                  "# %-8s %3d rows: geometric mean |error| %.1f%%, mean |error| %.1f%%, max %.1f%%, mean %+.1f%% "
                  "(%d slower than measured, %d faster)\n",
                  held_out ? "held-out" : "fit set", e.rows, 100 * e.geomean, 100 * e.mean_abs, 100 * e.worst,
                  100 * e.mean, e.over, e.rows - e.over);
    out << buf;
  }
  for (const auto& [why, n] : r.skipped) out << "# skipped " << n << " rows: " << why << "\n";
}
}  // namespace

void write_validation_summary(std::ostream& out, const std::vector<ValidationReport>& reports) {
  char buf[320];
  int width = 26;  // the suite column: its longest name
  for (const ValidationReport& r : reports)
    width = std::max(width, static_cast<int>(std::min<size_t>(r.name.size(), 80)));
  std::snprintf(buf, sizeof buf, "%-*s %-7s %-8s %5s %9s %8s %8s %8s %6s %6s %8s\n", width, "suite", "steps", "set",
                "rows", "geomean", "mean|e|", "max", "mean", "slower", "faster", "skipped");
  out << buf;
  for (const ValidationReport& r : reports) {
    int skipped = 0;
    for (const auto& [why, n] : r.skipped) skipped += n;
    for (bool held_out : {false, true}) {
      if (held_out && !has_held_out(r)) continue;
      const SetErrors e = errors_of(r.rows, held_out);
      if (e.rows == 0) continue;  // a suite whose every row is held out
      std::snprintf(buf, sizeof buf, "%-*s %-7s %-8s %5d %8.1f%% %7.1f%% %7.1f%% %+7.1f%% %6d %6d %8d\n", width,
                    r.name.substr(0, 80).c_str(), steps_of(r).c_str(),
                    held_out          ? "held-out"
                    : has_held_out(r) ? "fit"
                                      : "all",
                    e.rows, 100 * e.geomean, 100 * e.mean_abs, 100 * e.worst, 100 * e.mean, e.over, e.rows - e.over,
                    held_out ? 0 : skipped);
      out << buf;
    }
  }
}

void write_validation_report(std::ostream& out, const ValidationReport& r) {
  char buf[256];
  out << "# " << r.name << " (" << r.kind << "): predicted against measured\n";
  std::snprintf(buf, sizeof buf, "%-44s %12s %12s %9s\n", "row", ("measured " + r.unit).c_str(),
                ("predicted " + r.unit).c_str(), "error");
  out << buf;
  for (const ValidationRow& row : r.rows) {
    std::snprintf(buf, sizeof buf, "%-44s %12.4g %12.4g %+8.1f%%%s%s\n", row.label.c_str(), row.measured, row.predicted,
                  100 * row.error(), row.held_out ? "  held-out" : "",
                  row.note.empty() ? "" : ("  " + row.note).c_str());
    out << buf;
  }
  if (r.kind == "public") write_split(out, r);
  std::snprintf(buf, sizeof buf, "# geometric mean of |error| over %zu rows: %.2f%%", r.rows.size(),
                100 * r.geomean_abs_error);
  out << buf;
  if (r.recorded_error > 0) {
    std::snprintf(buf, sizeof buf, " (recorded %.2f%%%s)", 100 * r.recorded_error, r.regressed() ? ": REGRESSED" : "");
    out << buf;
  }
  out << "\n";
}

std::vector<Residual> residuals_of(const std::vector<ValidationReport>& reports) {
  std::vector<Residual> out;
  for (const ValidationReport& r : reports) {
    bool has_held_out = false;
    for (const ValidationRow& row : r.rows) has_held_out = has_held_out || row.held_out;
    for (const ValidationRow& row : r.rows)
      if (row.step_time)
        out.push_back({r.name,
                       !has_held_out  ? "all"
                       : row.held_out ? "held-out"
                                      : "fit",
                       row.run, row.measured, row.predicted});
  }
  return out;
}

}  // namespace dejavu::tools
