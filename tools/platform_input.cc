#include "tools/platform_input.h"

#include "platforms/calibration.h"

namespace dejavu::tools {

platforms::Cluster load_platform(const std::string& path, const std::vector<std::string>& calibrations) {
  platforms::Cluster c = platforms::load_cluster_file(path);
  for (const std::string& file : calibrations)
    platforms::apply_calibration(c, platforms::load_calibration_file(file, &c), file);
  return c;
}

}  // namespace dejavu::tools
