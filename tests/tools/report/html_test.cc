// The HTML report as a person sees it: self-contained, every view present, and rendered by
// headless Chromium with its script run and no console error (a screenshot is kept in the
// build folder). Without Chromium on the machine the browser half is skipped, saying so;
// CI installs it (.ci/run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

TEST(HtmlReport, SelfContainedWithEveryViewAndRendersInChromium) {
  const fs::path dir = scratch(), html = dir / "report.html", plots = dir / "plots";
  const CliRun r =
      run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                 src("workloads/presets/gpt3-13b.yaml") + " --plan " + src("strategies/presets/tp4-pp2-dp4-1f1b.yaml") +
                 " --report " + html.string() + " --plot " + plots.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(html);
  // The iteration time the terminal summary printed ("  iteration time     22 s").
  const std::string key = "iteration time";
  const size_t at = r.out.find(key);
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t from = r.out.find_first_not_of(' ', at + key.size()), to = r.out.find('\n', from);
  const std::string iteration = r.out.substr(from, to - from);
  for (const std::string& part :
       {std::string("<h2>Timeline</h2>"), std::string("<h2>Memory over time</h2>"),
        std::string("<h2>Time per stage</h2>"), std::string("<h2>Traffic per link"), std::string("id=\"timeline\""),
        key, iteration, std::string("<th>calibration</th><td>none (kernels at their speed alone)")})
    EXPECT_NE(page.find(part), std::string::npos) << part;
  // Nothing fetched: no external script, stylesheet, image or font.
  for (const char* outside : {"<script src", "<link", "<img", "url(", "https://", "http://cdn"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  for (const char* svg : {"timeline.svg", "memory.svg", "breakdown.svg", "links.svg"})
    EXPECT_NE(slurp(plots / svg).find("<svg"), std::string::npos) << svg;

  if (!fs::exists("/usr/bin/chromium")) {
    // CI installs Chromium (tools/install-deps.sh --with-browser): there the check must run.
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true")
      FAIL() << "CI=true but no /usr/bin/chromium: install it with tools/install-deps.sh --with-browser";
    GTEST_SKIP() << "no /usr/bin/chromium here: the browser check runs in CI";
  }
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --user-data-dir=" +
      (dir / "profile").string();
  const std::string dom = (dir / "dom.html").string(), log = (dir / "console.log").string();
  ASSERT_EQ(std::system(("timeout 120 /usr/bin/chromium" + flags + " --enable-logging=stderr --v=0 --dump-dom file://" +
                         html.string() + " >" + dom + " 2>" + log)
                            .c_str()),
            0)
      << slurp(log);
  // The script ran to its end (it marks the body), and the console saw no error.
  EXPECT_NE(slurp(dom).find("data-rendered=\"yes\""), std::string::npos);
  const std::string console = slurp(log);
  for (const char* bad : {"Uncaught", ":ERROR:CONSOLE", "SyntaxError", "TypeError"})
    EXPECT_EQ(console.find(bad), std::string::npos) << bad << "\n" << console;
  const fs::path shot = fs::path(DEJAVU_BINARY).parent_path().parent_path() / "report-screenshot.png";
  ASSERT_EQ(std::system(("timeout 120 /usr/bin/chromium" + flags + "2 --window-size=1280,1800 --screenshot=" +
                         shot.string() + " file://" + html.string() + " >/dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_GT(fs::file_size(shot), 10000u);
}

// The page says which calibration priced the run, as the terminal summary does.
TEST(HtmlReport, NamesTheCalibrationThatPricedTheRun) {
  const fs::path html = scratch() / "typical.html";
  const CliRun r =
      run_dejavu("simulate --platform " + src("platforms/presets/dgx-a100-4x8.yaml") + " --workload " +
                 src("workloads/presets/gpt3-13b.yaml") + " --plan " + src("strategies/presets/tp4-pp2-dp4-1f1b.yaml") +
                 " --calibration typical --quiet --report " + html.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<th>calibration</th><td>A100-SXM-80GB: typical_any.yaml (kernels at "), std::string::npos);
  EXPECT_EQ(page.find("none (kernels at their speed alone)"), std::string::npos);
}

}  // namespace
