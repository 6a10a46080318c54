#include "tools/output_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/error.h"

namespace dejavu::tools {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot write the file");
    try {
      fill(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw ConfigError(SourceLoc{path, 0, 0}, "", "writing the file failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot write the file: " + ec.message());
  }
}

}  // namespace dejavu::tools
