#include "sim/error.h"

namespace dejavu {

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

static std::string compose(const SourceLoc& where, const std::string& key, const std::string& problem) {
  std::string out = where.str();
  if (!out.empty()) out += ": ";
  if (!key.empty()) out += key + ": ";
  return out + problem;
}

ConfigError::ConfigError(const SourceLoc& where, const std::string& key, const std::string& problem)
    : Error(compose(where, key, problem)), where_(where), key_(key), problem_(problem) {}

}  // namespace dejavu
