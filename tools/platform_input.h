// A platform as the commands load it: the cluster YAML, then any calibrations given with
// --calibration applied to its GPU types.
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"

namespace dejavu::tools {

platforms::Cluster load_platform(const std::string& path, const std::vector<std::string>& calibrations);

}  // namespace dejavu::tools
