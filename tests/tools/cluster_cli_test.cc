// `dejavu cluster` from the command line (issue 24): a trace's runs kept per policy with
// --results and taken back by a rerun, and the HTML page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

const std::string kTrace = "cluster --platform " + src("platforms/presets/dgx-a100-8x8-2to1.yaml") + " --trace " +
                           src("strategies/presets/cluster/small-trace.csv") + " --policy first-fit --policy random";

TEST(ClusterCli, ARerunTakesBackThePoliciesItKept) {
  const fs::path dir = scratch() / "kept", json = scratch() / "c.json";
  fs::remove_all(dir);
  CliRun r = run_dejavu(kTrace + " --results " + dir.string() + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir / "first-fit.json"));
  ASSERT_TRUE(fs::exists(dir / "random.json"));
  // Mark the kept first-fit run: a rerun that reads it back reports the mark.
  nlohmann::json kept = nlohmann::json::parse(slurp(dir / "first-fit.json"));
  kept["run"]["makespan_s"] = 12345.0;
  std::ofstream(dir / "first-fit.json") << kept.dump();
  fs::remove(dir / "random.json");  // as if killed before random ended
  r = run_dejavu(kTrace + " --results " + dir.string() + " --quiet --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j[0]["makespan_s"].get<double>(), 12345.0);
  EXPECT_TRUE(fs::exists(dir / "random.json"));  // run again and kept
  EXPECT_NE(j[1]["makespan_s"].get<double>(), 12345.0);
  // Other inputs (another seed): the kept file is refused, not used.
  r = run_dejavu(kTrace + " --results " + dir.string() + " --seed 9");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a run of other inputs"), std::string::npos) << r.err;
}

TEST(ClusterCli, TheHtmlPageDrawsEachPolicysCurves) {
  const fs::path html = scratch() / "c.html";
  const CliRun r = run_dejavu(kTrace + " --report " + html.string() + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(html);
  size_t curves = 0;
  for (size_t at = 0; (at = page.find("<polyline", at)) != std::string::npos; ++at) ++curves;
  EXPECT_EQ(curves, 4u);  // two policies, two plots
  EXPECT_NE(page.find("job completion time"), std::string::npos);
}

}  // namespace
