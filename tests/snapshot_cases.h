// The cases of tests/snapshots/cases.txt (`<output file>: <dejavu arguments>`, run from the
// repository root): the snapshot test runs them all; other tests play every plan preset
// their simulate cases name in their own way.
#pragma once

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include "tests/source_dir.h"

namespace dejavu::testing {

struct SnapshotCase {
  std::string file, args;
};

inline std::vector<SnapshotCase> snapshot_cases() {
  std::vector<SnapshotCase> out;
  std::ifstream in(src("tests/snapshots/cases.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    out.push_back({line.substr(0, colon), line.substr(colon + 2)});
  }
  return out;
}

// The simulate cases on the analytic engine without faults: every simulate preset once (a
// SimGrid case's analytic twin names the same files).
inline std::vector<SnapshotCase> analytic_simulate_cases() {
  std::vector<SnapshotCase> out;
  for (const SnapshotCase& c : snapshot_cases())
    if (c.file.rfind("simulate-", 0) == 0 && c.args.find("--faults") == std::string::npos &&
        c.args.find("--engine simgrid") == std::string::npos)
      out.push_back(c);
  return out;
}

// The file a case gives after `flag` (`--platform`, `--workload`, `--plan`), as a path.
inline std::string case_path(const SnapshotCase& c, const std::string& flag) {
  const size_t at = c.args.find(flag + " ") + flag.size() + 1;
  return src(c.args.substr(at, c.args.find(' ', at) - at));
}

// A GoogleTest parameter name: every character but letters and digits becomes '_'.
inline std::string param_name(const std::string& s) {
  std::string name;
  for (char c : s) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

}  // namespace dejavu::testing
