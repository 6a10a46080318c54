// Regression snapshots: every case of tests/snapshots/cases.txt run through the real
// command line and compared with its checked-in output (numbers to a relative 1e-9).
// They guard refactors; they say nothing about correctness, which the hand-worked tests
// check. `make snapshots` regenerates them after an intended change (review the diff).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/snapshot_cases.h"
#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;

bool close(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// The first place where `got` differs from `want`, or "" when they agree.
std::string json_diff(const nlohmann::json& want, const nlohmann::json& got, const std::string& at) {
  if (want.is_number() && got.is_number())
    return close(want.get<double>(), got.get<double>()) ? "" : at + ": " + want.dump() + " became " + got.dump();
  if (want.type() != got.type() || want.size() != got.size())
    return at + ": " + want.dump().substr(0, 200) + " became " + got.dump().substr(0, 200);
  if (want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (key == "wall_s") continue;  // the clock on the wall, not a result
      if (!got.contains(key)) return at + "." + key + ": missing";
      if (std::string d = json_diff(value, got.at(key), at + "." + key); !d.empty()) return d;
    }
  } else if (want.is_array()) {
    for (size_t i = 0; i < want.size(); ++i)
      if (std::string d = json_diff(want[i], got[i], at + "[" + std::to_string(i) + "]"); !d.empty()) return d;
  } else if (want != got) {
    return at + ": " + want.dump() + " became " + got.dump();
  }
  return "";
}

std::vector<std::string> cells(const std::string& text) {
  std::vector<std::string> out;
  std::string cell;
  for (char c : text) {
    if (c == ',' || c == '\n') {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (!cell.empty()) out.push_back(cell);
  return out;
}

std::string csv_diff(const std::string& want, const std::string& got) {
  const auto a = cells(want), b = cells(got);
  if (a.size() != b.size()) return std::to_string(a.size()) + " cells became " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double x = std::strtod(a[i].c_str(), &end_a), y = std::strtod(b[i].c_str(), &end_b);
    const bool numbers = !a[i].empty() && !b[i].empty() && *end_a == 0 && *end_b == 0;
    if (numbers ? !close(x, y) : a[i] != b[i]) return "cell " + std::to_string(i) + ": " + a[i] + " became " + b[i];
  }
  return "";
}

class Snapshot : public ::testing::TestWithParam<SnapshotCase> {};

TEST_P(Snapshot, OutputUnchanged) {
  const SnapshotCase& c = GetParam();
  const fs::path out = scratch() / c.file, tmp = scratch() / (c.file + ".run");
  fs::remove_all(tmp);
  std::string args = c.args;
  for (size_t at; (at = args.find("{out}")) != std::string::npos;) args.replace(at, 5, out.string());
  for (size_t at; (at = args.find("{tmp}")) != std::string::npos;) args.replace(at, 5, tmp.string());
  for (size_t at; (at = args.find(" ;; ")) != std::string::npos;)
    args.replace(at, 4, std::string(" >/dev/null && ") + DEJAVU_BINARY + " ");
  const std::string cmd = "cd " + src("") + " && " + DEJAVU_BINARY + " " + args + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string want = slurp(src("tests/snapshots/" + c.file)), got = slurp(out);
  ASSERT_FALSE(want.empty()) << "no snapshot: run `make snapshots`";
  const std::string diff = c.file.ends_with(".json")
                               ? json_diff(nlohmann::json::parse(want), nlohmann::json::parse(got), c.file)
                               : csv_diff(want, got);
  EXPECT_EQ(diff, "") << "regenerate with `make snapshots` if the change is intended";
}

std::string case_name(const ::testing::TestParamInfo<SnapshotCase>& info) { return param_name(info.param.file); }

INSTANTIATE_TEST_SUITE_P(Cases, Snapshot, ::testing::ValuesIn(snapshot_cases()), case_name);

TEST(Presets, EveryShippedFileRunsOnEveryEngineItRunsOn) {
  // Every file under */presets/ is named by a snapshot case (slurm-array.sh by its own
  // test in sweep_test.cc); plan and fault presets, which `simulate` runs on either
  // engine, by a case on each.
  std::string all;
  for (const SnapshotCase& c : snapshot_cases()) all += c.args + "\n";
  auto engines_of = [&](const std::string& path) {
    std::set<std::string> out;
    for (const SnapshotCase& c : snapshot_cases())
      if (c.args.find(path) != std::string::npos && c.args.rfind("simulate ", 0) == 0)
        out.insert(c.args.find("--engine simgrid") != std::string::npos ? "simgrid" : "analytic");
    return out;
  };
  int files = 0;
  for (const char* folder : {"platforms/presets", "workloads/presets", "strategies/presets"})
    for (const auto& e : fs::recursive_directory_iterator(src(folder))) {
      if (!e.is_regular_file()) continue;
      const std::string rel = fs::relative(e.path(), src("")).string();
      ++files;
      if (rel.ends_with("slurm-array.sh")) continue;
      EXPECT_NE(all.find(rel), std::string::npos) << rel << " is run by no case of tests/snapshots/cases.txt";
      const bool simulated = rel.rfind("strategies/presets/", 0) == 0 && rel.find('/', 19) == std::string::npos;
      if (simulated || rel.find("/faults/straggler") != std::string::npos ||
          rel.find("/faults/link-and") != std::string::npos) {
        EXPECT_EQ(engines_of(rel), (std::set<std::string>{"analytic", "simgrid"})) << rel;
      }
    }
  EXPECT_GT(files, 45);
}

}  // namespace
