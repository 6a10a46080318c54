#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tools/validation_suite.h"

namespace dejavu::tools {
namespace {

ValidationRow Row(double measured, double predicted, bool held_out) {
  ValidationRow r;
  r.label = "row";
  r.measured = measured;
  r.predicted = predicted;
  r.held_out = held_out;
  return r;
}

// Held-out errors +20% and -0.2%: their geometric mean is sqrt(0.2 x 0.002) = 2.0%, their mean
// |error| 10.1%. One lucky row hides the other in the geometric mean, not in the mean, so both
// are printed.
TEST(ValidationSummary, PrintsTheMeanAbsoluteErrorBesideTheGeometricMean) {
  ValidationReport r;
  r.name = "toy";
  r.kind = "public";
  r.rows = {Row(10, 11, false), Row(10, 9, false), Row(10, 12, true), Row(10, 9.98, true)};
  std::ostringstream table;
  write_validation_summary(table, {r});
  const std::string t = table.str();
  EXPECT_NE(t.find("mean|e|"), std::string::npos) << t;
  // fit: +10% and -10%: geometric mean 10.0%, mean |error| 10.0%, mean signed 0.0%.
  EXPECT_NE(t.find("fit          2     10.0%    10.0%    10.0%    +0.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("held-out     2      2.0%    10.1%    20.0%"), std::string::npos) << t;

  std::ostringstream report;
  write_validation_report(report, r);
  EXPECT_NE(report.str().find("# held-out   2 rows: geometric mean |error| 2.0%, mean |error| 10.1%, max 20.0%"),
            std::string::npos)
      << report.str();
}

}  // namespace
}  // namespace dejavu::tools
