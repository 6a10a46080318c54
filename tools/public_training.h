// Predicted against measured step times of public training runs (strategies/validation/
// public/training.csv, converted from ../shared/validation/public/ by
// tools/public_training.py): one suite per source, every row simulated as the source ran
// it, each row in the fit set or the held-out set fixed before anything was fitted.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/config_node.h"
#include "tools/validation_residuals.h"

namespace dejavu::tools {

struct PublicRun {
  std::string label;
  bool held_out = false;
  double measured_s = 0, predicted_s = 0;
  bool oom = false;         // dejavu says the run did not fit, though it ran
  double memory_share = 0;  // the fullest GPU's predicted peak over its capacity
  RunShape run;
};

struct PublicSuite {
  std::vector<PublicRun> runs;
  std::map<std::string, int> skipped;  // why a row could not be simulated -> rows
};

struct PublicOptions {
  // Calibration YAMLs, each applied to the rows on its GPU type (an error if no row is).
  std::vector<std::string> calibrations;
  std::string gpu;                       // only the rows on this GPU type (empty: every row)
  bool fit_only = false;                 // only the fit set's rows
  bool held_out_only = false;            // only the held-out set's rows
  double step_efficiency = 0;            // > 0: this step efficiency on every row, over the calibrations
  double attention_step_efficiency = 0;  // > 0: and this attention share beside it (perf_model.h)
  double step_overhead_s = -1;           // >= 0: and this host time an iteration (perf_model.h)
  // Which rows by training precision: "16-bit" (bf16 and fp16, each as its row says) or "fp8"
  // (8 bits or fewer: Transformer Engine fp8 or fp4 GEMMs, bf16 tensors: sim::storage_of).
  std::string precision = "16-bit";
  int jobs = 1;     // rows simulated at once, each in a forked process (the same results as one)
  std::string row;  // only the row of this row_id (empty: every row); not the suite's: an error
};

// `platforms`: the folder of the server presets (dgx-a100-1x8.yaml, dgx-h100-1x8.yaml).
PublicSuite run_public_training(const std::string& csv, const std::string& source, const std::string& platforms,
                                const PublicOptions& options = {});

// One row of a suite as the files `dejavu simulate` reruns it from (validate --row N --export
// DIR): platform.yaml (its server preset with the row's GPU type and count), workload.yaml,
// plan.yaml (unstated recomputation settled as the row ran it) and calibration.yaml (the
// suite's calibration of the row's GPU type, when it has one). `options.row` names the row.
struct RowExport {
  // file name -> its text: platform.yaml, workload.yaml, plan.yaml, and calibration.yaml if any
  std::vector<std::pair<std::string, std::string>> files;
  PublicRun run;  // the row as validate reports it (its simulation, run once for both)
};
RowExport export_public_row(const std::string& csv, const std::string& source, const std::string& platforms,
                            const PublicOptions& options);

}  // namespace dejavu::tools
