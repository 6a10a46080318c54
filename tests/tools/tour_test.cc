// The tour of malformed inputs (tests/fixtures/bad/tour.txt), through the real command
// line: every case ends with exit code 2, one line on stderr naming the place and what
// would be valid, nothing on stdout, nothing written.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/snapshot_cases.h"
#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;

struct TourCase {
  std::string name, args, expected;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<TourCase> read_tour() {
  std::vector<TourCase> out;
  std::ifstream in(src("tests/fixtures/bad/tour.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find(" | "), b = line.rfind(" | ");
    out.push_back({trim(line.substr(0, a)), trim(line.substr(a + 3, b - a - 3)), trim(line.substr(b + 3))});
  }
  return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
}

class Tour : public ::testing::TestWithParam<TourCase> {};

TEST_P(Tour, OneLineExitTwoNothingWritten) {
  const TourCase& c = GetParam();
  const fs::path out = scratch() / ("tour-" + c.name);
  fs::remove_all(out);
  fs::create_directories(out / "dir");
  ASSERT_EQ(::mkfifo((out / "fifo").c_str(), 0644), 0);
  fs::create_symlink(out / "target.json", out / "link");
  const std::set<std::string> before = {"dir", "fifo", "link"};
  std::string args = c.args, expected = c.expected;
  for (auto [key, value] : {std::pair<std::string, std::string>{"{fifo}", (out / "fifo").string()},
                            {"{dir}", (out / "dir").string()},
                            {"{link}", (out / "link").string()},
                            {"{out}", out.string()}}) {
    replace_all(args, key, value);
    replace_all(expected, key, value);
  }
  const fs::path err = out.parent_path() / (c.name + ".err"), std_out = out.parent_path() / (c.name + ".out");
  const std::string cmd =
      "cd " + src("") + " && timeout 60 " + DEJAVU_BINARY + " " + args + " >" + std_out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string e = slurp(err), o = slurp(std_out);
  EXPECT_EQ(code, 2) << cmd << "\n" << e;
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
  EXPECT_NE(e.find(expected), std::string::npos) << "expected: " << expected << "\ngot: " << e;
  EXPECT_EQ(o, "") << o;
  std::set<std::string> after;
  for (const auto& entry : fs::directory_iterator(out)) after.insert(entry.path().filename().string());
  EXPECT_EQ(after, before) << "the command wrote into the output folder";
}

std::string case_name(const ::testing::TestParamInfo<TourCase>& info) { return param_name(info.param.name); }

INSTANTIATE_TEST_SUITE_P(Bad, Tour, ::testing::ValuesIn(read_tour()), case_name);

}  // namespace
