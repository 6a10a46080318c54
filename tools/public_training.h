// Predicted against measured step times of public training runs (strategies/validation/
// public/training.csv, converted from ../shared/validation/public/ by
// tools/public_training.py): one suite per source, every row simulated as the source ran
// it, each row in the fit set or the held-out set fixed before anything was fitted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/validation_residuals.h"

namespace dejavu::tools {

struct PublicRun {
  std::string label;
  bool held_out = false;
  double measured_s = 0, predicted_s = 0;
  bool oom = false;  // dejavu says the run did not fit, though it ran
  RunShape run;
};

struct PublicSuite {
  std::vector<PublicRun> runs;
  std::map<std::string, int> skipped;  // why a row could not be simulated -> rows
};

// `platforms`: the folder of the server presets (dgx-a100-1x8.yaml, dgx-h100-1x8.yaml).
PublicSuite run_public_training(const std::string& csv, const std::string& source, const std::string& platforms,
                                const std::vector<std::string>& calibrations);

}  // namespace dejavu::tools
