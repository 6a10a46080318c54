// What every fuzz target shares: an input is fine when it is accepted or refused with a
// dejavu::Error (one line, exit 2 at the command line); anything else (another exception,
// a crash, a sanitizer report, a hang) is a finding. Built two ways: with libFuzzer
// (`make fuzz`, clang) and with replay_main.cc, which runs the checked-in corpus in the
// test suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "sim/error.h"

namespace dejavu::fuzz {

template <class F>
int accept_or_refuse(F&& f) {
  try {
    f();
  } catch (const dejavu::Error&) {
  }
  return 0;
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input as a file, for parsers that read paths: one per process, rewritten each time.
inline std::string as_file(const std::string& bytes, const std::string& suffix) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("dejavu-fuzz-" + std::to_string(::getpid()) + suffix)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace dejavu::fuzz
