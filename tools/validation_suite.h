// `dejavu validate <suite.yaml>`: predicted against measured, row by row, and the geometric
// mean of the absolute errors, checked against the figure the suite records.
//
//   name: megatron-a100
//   kind: megatron               # megatron (iteration times) | nccl (all-reduce bus bandwidth)
//   measurements: megatron_seqpar_selective_a100.csv      # paths relative to the suite
//   platform: ../../platforms/presets/dgx-a100-1x8.yaml  # megatron: the server type
//   calibration: ../../platforms/calibration/a100-sxm-80gb.yaml   # optional
//   calibrations: [a.yaml, b.yaml]   # optional, more than one (public: each on its GPU type's rows)
//   runs:                        # nccl: which measured rows, on which platform
//     - {gpu: A100-SXM-80GB, gpus: 8, platform: ../../platforms/presets/dgx-a100-1x8.yaml}
//   min_bytes: 16 MiB            # nccl: smaller messages are latency-bound, left out
//   recorded_error: 0.074        # the geometric mean measured when recorded; may only go down
//
//   kind: public                 # public training runs: strategies/validation/public/training.csv
//   source: bigscience_bloom_prequel   # its source_id; rows dejavu cannot run are counted, by reason
//   platforms: ../../../platforms/presets  # the DGX A100 and H100 server presets
#pragma once

#include <ostream>
#include <map>
#include <string>
#include <vector>

#include "tools/public_training.h"
#include "tools/validation_residuals.h"

namespace dejavu::tools {

struct ValidationRow {
  std::string label;
  double measured = 0, predicted = 0;
  bool held_out = false;  // public suites: not in the fit set
  std::string note;
  bool step_time = false;  // an iteration time of a run whose shape is `run` (a residual)
  RunShape run;
  double error() const { return predicted / measured - 1; }
};

struct ValidationReport {
  std::string name, kind, unit;
  std::vector<ValidationRow> rows;
  double geomean_abs_error = 0;
  double recorded_error = 0;           // 0: none recorded
  std::map<std::string, int> skipped;  // rows that could not be simulated, by reason
  std::string precision = "16-bit";    // a public suite's rows: "16-bit" or "fp8"
  bool regressed() const { return recorded_error > 0 && geomean_abs_error > recorded_error * (1 + 1e-9); }
};

// Throws ConfigError for a malformed suite (unknown kind or key, missing file, ...). A public
// suite's rows run `jobs` at a time, each in a forked process (the same report as one); `row`
// (a row_id of a public suite) runs that row alone, or reports `simulated` (that row, already
// run: export_validation_row's) without running it again.
ValidationReport run_validation_suite(const std::string& path, int jobs = 1, const std::string& row = "",
                                      const PublicRun* simulated = nullptr);

// What a public suite names, its paths resolved (a ConfigError for another kind).
struct PublicSuiteFiles {
  std::string name, measurements, source, platforms;
  std::vector<std::string> calibrations;
  std::string precision = "16-bit";  // PublicOptions::precision
};
// `use` says what needed a public suite ("a step calibration is fitted to"), for the error.
PublicSuiteFiles public_suite_files(const std::string& path, const std::string& use);
// Row `row` of the public suite at `path` as simulate's input files (export_public_row).
RowExport export_validation_row(const std::string& path, const std::string& row);
void write_validation_report(std::ostream& out, const ValidationReport& r);
// One line per suite and set (fit, held-out): whether its framework's step efficiency was
// fitted (a step calibration), rows, geometric mean, mean and largest |error|, mean signed
// error, rows slower and faster than measured.
void write_validation_summary(std::ostream& out, const std::vector<ValidationReport>& reports);
// The step-time rows of the reports as residuals (fit, held-out, or all for a suite with no
// fit set), each with its precision (16-bit, fp8, fp4): a run's band is from its precision's.
std::vector<Residual> residuals_of(const std::vector<ValidationReport>& reports);

}  // namespace dejavu::tools
