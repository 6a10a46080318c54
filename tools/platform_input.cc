#include "tools/platform_input.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "platforms/calibration.h"
#include "platforms/gpu_catalog.h"
#include "sim/config_node.h"
#include "sim/error.h"

#ifndef DEJAVU_SOURCE_DIR
#define DEJAVU_SOURCE_DIR "."
#endif

namespace dejavu::tools {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool names_a_file(const std::string& given) {
  const std::filesystem::path p(given);
  return std::filesystem::exists(p) || p.has_parent_path() || p.has_extension();
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

// Files named <framework>_<gpu type, lower case>.yaml; the GPU type is the catalog's name
// whose lower case the stem ends with (gpu: in the file says the same; the loader checks), or
// `any` (typical_any.yaml: a step calibration of every GPU type).
std::vector<ShippedStepCalibration> shipped_step_calibrations() {
  const std::filesystem::path dir = std::filesystem::path(DEJAVU_SOURCE_DIR) / "platforms/calibration/steps";
  std::set<std::string> stems;  // sorted: deterministic
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") stems.insert(e.path().stem().string());
  std::vector<ShippedStepCalibration> out;
  for (const std::string& stem : stems) {
    const size_t cut = stem.find('_');
    if (cut == std::string::npos) continue;
    if (stem.substr(cut + 1) == platforms::kAnyGpu)
      out.push_back({stem.substr(0, cut), platforms::kAnyGpu, (dir / (stem + ".yaml")).string()});
    for (const platforms::GpuSpec& gpu : platforms::gpu_catalog())
      if (lower(gpu.name) == stem.substr(cut + 1))
        out.push_back({stem.substr(0, cut), gpu.name, (dir / (stem + ".yaml")).string()});
  }
  return out;
}

std::vector<std::string> calibration_files(const std::string& given, const platforms::Cluster& cluster) {
  if (names_a_file(given)) return {given};
  std::set<std::string> frameworks, fitted_on, has;
  for (const auto& slot : cluster.gpus) has.insert(slot.spec->name);
  std::vector<std::string> files;
  for (const ShippedStepCalibration& s : shipped_step_calibrations()) {
    frameworks.insert(s.framework);
    if (s.framework != given) continue;
    fitted_on.insert(s.gpu);
    if (has.count(s.gpu) || s.gpu == platforms::kAnyGpu) files.push_back(s.path);
  }
  const SourceLoc where{"--calibration", 0, 0};
  if (fitted_on.empty())
    throw ConfigError(where, given,
                      "neither a file nor a framework with shipped step calibrations (" + joined(frameworks) + ")");
  if (files.empty())
    throw ConfigError(where, given,
                      "no step calibration of " + given + " for " + joined(has) + " (fitted on " + joined(fitted_on) +
                          "); give a calibration YAML for it (dejavu calibrate --suite)");
  return files;
}

void apply_calibrations(platforms::Cluster& cluster, const std::vector<std::string>& calibrations) {
  for (const std::string& given : calibrations)
    for (const std::string& file : calibration_files(given, cluster))
      platforms::apply_calibration(cluster, ConfigNode::load_file(file), file);
}

platforms::Cluster load_platform(const std::string& path, const std::vector<std::string>& calibrations) {
  platforms::Cluster c = platforms::load_cluster_file(path);
  apply_calibrations(c, calibrations);
  return c;
}

}  // namespace dejavu::tools
