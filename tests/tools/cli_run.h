// Running the real `dejavu` binary from a test, as a user would: its exit code, what it
// printed on stdout and stderr, and a scratch folder per test process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/source_dir.h"

namespace dejavu::testing {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::filesystem::path scratch() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dejavu-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

struct CliRun {
  int code = -1;
  std::string out, err;
};

inline CliRun run_dejavu(const std::string& args) {
  const std::filesystem::path dir = scratch();
  const std::string cmd =
      std::string(DEJAVU_BINARY) + " " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return CliRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

}  // namespace dejavu::testing
