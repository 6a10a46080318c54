#include "tools/public_training.h"

#include <map>
#include <sstream>
#include <string>
#include <variant>

#include "sim/csv.h"
#include "sim/process_pool.h"
#include "platforms/calibration.h"
#include "tools/public_row.h"

namespace dejavu::tools {

PublicRun public_rows::run_of(const CsvRow& r, const public_rows::ResolvedRow& row) {
  const strategies::Plan& plan = row.plan;
  PublicRun run;
  run.label = r.text("row_id") + " " + r.text("model") + " " + r.text("gpu") + " x" + r.text("gpus") + " tp" +
              std::to_string(plan.tp) + " pp" + std::to_string(plan.pp) + " dp" + std::to_string(plan.dp) +
              (plan.zero ? " zero" + std::to_string(plan.zero) : "") +
              (plan.zero == 3 ? " bwd-" + plan.zero_backward_prefetch : "") +
              (plan.zero_reshard_after_forward ? "" : " kept") +
              (plan.dp_shard > 0 ? " shard" + std::to_string(plan.dp_shard) : "") + " " + plan.recompute +
              (plan.recompute_layers ? std::to_string(plan.recompute_layers) : "") +
              (r.text("recompute") == "unknown" ? "?" : "") +
              (plan.offload_activation_layers ? " offload" + std::to_string(plan.offload_activation_layers) : "") +
              public_rows::overlaps_of(plan) + (plan.fp8_param_gather ? " fp8-weights" : "") +
              (plan.fp8_recipe != sim::Fp8Recipe::Default ? std::string(" ") + sim::to_string(plan.fp8_recipe) : "");
  run.held_out = r.text("held_out") == "1";
  run.measured_s = r.as_double("measured_step_s", 1e-6, 1e6);
  run.predicted_s = row.simulation.report.iteration_time_s;
  run.oom = row.simulation.report.oom;
  run.memory_share = row.simulation.report.peak_memory_bytes / row.simulation.report.capacity_bytes;
  run.run = shape_of(plan, row.model, {r.text("gpu")});
  run.run.steps = platforms::step_calibration_kind(row.cluster, r.text("gpu"));
  return run;
}

namespace {

using public_rows::CalibrationFile;
using public_rows::Calibrations;

PublicRun run_row(const CsvRow& r, const std::string& platforms, const Calibrations& calibrations,
                  const PublicOptions& o) {
  return public_rows::run_of(r, public_rows::resolve_row(r, platforms, calibrations, o));
}

// A row's outcome as a forked child writes it to its parent: "run" and the PublicRun's fields
// a line each (doubles to the last bit), or "refused" and why. Labels hold no newline.
std::string encode(const PublicRun& r) {
  std::ostringstream o;
  o.precision(17);
  const RunShape& s = r.run;
  o << "run\n"
    << r.label << "\n"
    << r.held_out << " " << r.measured_s << " " << r.predicted_s << " " << r.oom << " " << r.memory_share << "\n"
    << s.gpu << "\n"
    << s.precision << "\n"
    << s.offload << "\n"
    << s.language_model << " " << s.params << " " << s.gpus << " " << s.tp << " " << s.pp << " " << s.dp << " " << s.cp
    << " " << s.ep << " " << s.zero << " " << s.steps << "\n";
  return o.str();
}

std::variant<PublicRun, std::string> decode(const std::string& text) {
  std::istringstream in(text);
  std::string kind;
  std::getline(in, kind);
  if (kind != "run") return text.substr(std::min(text.size(), kind.size() + 1));  // why, whole
  PublicRun r;
  RunShape& s = r.run;
  std::getline(in, r.label);
  in >> r.held_out >> r.measured_s >> r.predicted_s >> r.oom >> r.memory_share;
  in.ignore();
  std::getline(in, s.gpu);
  std::getline(in, s.precision);
  std::getline(in, s.offload);
  in >> s.language_model >> s.params >> s.gpus >> s.tp >> s.pp >> s.dp >> s.cp >> s.ep >> s.zero >> s.steps;
  if (!in) throw Error("a validation worker's report is cut short: " + text.substr(0, 80));
  return r;
}

// A row simulated, or why dejavu refuses its plan.
std::variant<PublicRun, std::string> outcome_of(const CsvRow& r, const std::string& platforms,
                                                const Calibrations& calibrations, const PublicOptions& o) {
  try {
    return run_row(r, platforms, calibrations, o);
  } catch (const Error& e) {
    return std::string("dejavu refuses the plan: ") + std::string(e.what()).substr(0, 90);
  }
}

// The rows' outcomes in their order: here, or options.jobs at a time in forked children (the
// same bytes either way: a child's doubles come back to the last bit).
std::vector<std::variant<PublicRun, std::string>> outcomes_of(const std::vector<const CsvRow*>& rows,
                                                              const std::string& platforms,
                                                              const Calibrations& calibrations,
                                                              const PublicOptions& o) {
  std::vector<std::variant<PublicRun, std::string>> out;
  if (o.jobs <= 1 || rows.size() < 2) {
    for (const CsvRow* r : rows) out.push_back(outcome_of(*r, platforms, calibrations, o));
    return out;
  }
  std::vector<std::string> reports(rows.size());
  sim::run_children(
      rows.size(), sim::PoolOptions{o.jobs, 0, {}},
      [&](size_t i, int fd) {
        const auto result = outcome_of(*rows[i], platforms, calibrations, o);
        const std::string text = result.index() == 0 ? encode(std::get<0>(result)) : "refused\n" + std::get<1>(result);
        return sim::write_all(fd, text) ? 0 : 1;
      },
      [&](size_t i, sim::ChildOutcome c) {
        if (c.exit_code != 0)
          throw Error("validation worker for row " + rows[i]->text("row_id") + " failed" + c.stderr_tail);
        reports[i] = std::move(c.output);
      });
  for (const std::string& text : reports) out.push_back(decode(text));
  return out;
}

// The rows of `source` the options choose, and the reason each row dejavu cannot run is skipped.
std::vector<const CsvRow*> chosen_rows(const CsvTable& table, const std::string& source, const PublicOptions& o,
                                       std::map<std::string, int>& skipped) {
  std::vector<const CsvRow*> rows;
  bool found = false;
  for (const CsvRow& r : table.rows()) {
    if (!public_rows::in_suite(r, source, o.precision)) continue;
    if (!o.gpu.empty() && r.text("gpu") != o.gpu) continue;
    if (o.fit_only && r.text("held_out") == "1") continue;
    if (o.held_out_only && r.text("held_out") != "1") continue;
    if (!o.row.empty() && r.text("row_id") != o.row) continue;
    found = true;
    if (const auto why = public_rows::unsupported(r))
      ++skipped[*why];
    else
      rows.push_back(&r);
  }
  if (!o.row.empty() && !found) throw public_rows::no_such_row(o.row, source, table, o.precision);
  return rows;
}

}  // namespace

PublicSuite run_public_training(const std::string& csv, const std::string& source, const std::string& platforms,
                                const PublicOptions& options) {
  const CsvTable table = public_rows::load_training_table(csv);
  PublicSuite out;
  Calibrations calibrations = public_rows::load_calibrations(options.calibrations);
  const std::vector<const CsvRow*> rows = chosen_rows(table, source, options, out.skipped);
  const auto outcomes = outcomes_of(rows, platforms, calibrations, options);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (outcomes[i].index() == 1) {
      ++out.skipped[std::get<1>(outcomes[i])];
      continue;
    }
    out.runs.push_back(std::get<0>(outcomes[i]));
    for (CalibrationFile& f : calibrations) f.used = f.used || f.applies_to(rows[i]->text("gpu"));
  }
  for (const CalibrationFile& f : calibrations)
    if (!f.used && options.gpu.empty() && options.row.empty())
      f.file.child("gpu").fail("no row of " + source + " runs on " + f.gpu +
                               "; a calibration applies to a GPU type the suite has");
  return out;
}

}  // namespace dejavu::tools
