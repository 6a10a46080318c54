// Writes a file whole or not at all: into a temporary beside it, renamed on success, so a
// failed run never leaves a partial output file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace dejavu::tools {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace dejavu::tools
