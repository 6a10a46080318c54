// A platform as the commands load it: the cluster YAML, then any calibrations given with
// --calibration applied to its GPU types. A --calibration value that is not a file but a
// framework's name (`nemo`, `megatron-bridge`, ...) applies the step calibrations shipped for
// it (platforms/calibration/steps/<framework>_<gpu type>.yaml) to the platform's GPU types;
// `typical` the one fitted to several frameworks' runs, to every GPU type (typical_any.yaml).
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"

namespace dejavu::tools {

platforms::Cluster load_platform(const std::string& path, const std::vector<std::string>& calibrations);
// The same calibrations applied to a cluster already loaded (Python's, from a dict).
void apply_calibrations(platforms::Cluster& cluster, const std::vector<std::string>& calibrations);

// A framework's shipped step calibrations: one file per GPU type it was fitted on (gpu `any`:
// one file for every GPU type).
struct ShippedStepCalibration {
  std::string framework, gpu, path;
};
std::vector<ShippedStepCalibration> shipped_step_calibrations();

// The files a --calibration value stands for on `cluster`: itself when it is a file (or looks
// like a path); else the named framework's shipped files for the cluster's GPU types, and a
// ConfigError naming what exists when there are none.
std::vector<std::string> calibration_files(const std::string& given, const platforms::Cluster& cluster);

}  // namespace dejavu::tools
