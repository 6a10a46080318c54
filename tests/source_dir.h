// A file of the repository from a test: src("platforms/presets/dgx-a100-1x8.yaml") is its path.
#pragma once

#include <string>

namespace dejavu::testing {

inline std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

}  // namespace dejavu::testing
