#include "sim/units.h"

#include <gtest/gtest.h>

namespace dejavu::units {

TEST(Units, ParsesRatesInBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_rate("300 GB/s"), 300e9);
  EXPECT_DOUBLE_EQ(parse_rate("200 Gbps"), 25e9);
  EXPECT_DOUBLE_EQ(parse_rate("200 Gb/s"), 25e9);
  EXPECT_DOUBLE_EQ(parse_rate("1 GiB/s"), 1073741824.0);
}

TEST(Units, ParsesTimesSizesAndFlopRates) {
  EXPECT_DOUBLE_EQ(parse_time("1.5 us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_time("2ms"), 2e-3);
  EXPECT_DOUBLE_EQ(parse_time("3 ns"), 3e-9);
  EXPECT_DOUBLE_EQ(parse_bytes("80 GiB"), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bytes("4 KB"), 4000.0);
  EXPECT_DOUBLE_EQ(parse_flop_rate("312 TFLOPS"), 312e12);
  EXPECT_DOUBLE_EQ(parse_bytes("1e3 B"), 1000.0);
}

TEST(Units, MissingUnitIsAnErrorThatSaysSo) {
  try {
    parse_rate("300");
    FAIL() << "no exception";
  } catch (const UnitError& e) {
    EXPECT_NE(std::string(e.what()).find("the unit is missing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"400 Gbps\""), std::string::npos) << e.what();
  }
}

TEST(Units, WrongDimensionOrGarbageIsRejected) {
  EXPECT_THROW(parse_rate("2 us"), UnitError);
  EXPECT_THROW(parse_time("300 GB/s"), UnitError);
  EXPECT_THROW(parse_rate("fast"), UnitError);
  EXPECT_THROW(parse_bytes("-5 GB"), UnitError);
}

TEST(Units, FormatsForHumans) {
  EXPECT_EQ(format_time(0.0123), "12.3 ms");
  EXPECT_EQ(format_bytes(1.5e9), "1.5 GB");
  EXPECT_EQ(format_rate(300e9), "300 GB/s");
}

}  // namespace dejavu::units
