#include "strategies/recompute_modes.h"

#include <stdexcept>

#include "sim/config_node.h"

namespace dejavu::strategies {

const std::vector<RecomputeMode>& recompute_modes() {
  static const std::vector<RecomputeMode> modes = {
      {"none", 0}, {"selective", 0.5}, {"selective-op", 0.75}, {"save-dot-except-mlpwi", 0.85}, {"save-qkv-proj", 0.9},
      {"full", 1}};
  return modes;
}

const std::vector<std::string>& recompute_mode_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const RecomputeMode& m : recompute_modes()) out.emplace_back(m.name);
    return out;
  }();
  return names;
}

std::string recompute_mode_list() { return join(recompute_mode_names(), ", "); }

int recompute_mode_index(const std::string& name) {
  const auto& names = recompute_mode_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  throw std::invalid_argument("unknown recomputation mode \"" + name + "\"; valid: " + recompute_mode_list());
}

double recompute_replayed(const std::string& name) {
  return recompute_modes()[static_cast<size_t>(recompute_mode_index(name))].replayed;
}

}  // namespace dejavu::strategies
