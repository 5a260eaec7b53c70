#include "common/human_units.h"

#include <gtest/gtest.h>

namespace paradnn::common {
namespace {

TEST(ParseDurationSecondsTest, PlainSecondsAndUnitsAndSums) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("90"), 90);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("30m"), 1800);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1h"), 3600);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2.5h"), 9000);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1d"), 86400);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1H"), 3600);
}

TEST(ParseDurationSecondsTest, AnythingElseIsRefusedNamingTheForms) {
  for (const char* bad : {"", "h", "1x", "1h30", "-5m", "0", "0s", "nan", "inf", "1h-2m"}) {
    absl::StatusOr<double> parsed = ParseDurationSeconds(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("e.g. 90s, 30m, 1h"), std::string::npos)
        << parsed.status();
  }
}

TEST(ParseFractionTest, PercentagesAndPlainFractions) {
  EXPECT_DOUBLE_EQ(*ParseFraction("3%"), 0.03);
  EXPECT_DOUBLE_EQ(*ParseFraction("0.03"), 0.03);
  EXPECT_DOUBLE_EQ(*ParseFraction("2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(*ParseFraction("0"), 0) << "the range is the caller's";
  for (const char* bad : {"", "%", "3 %", "3%%", "x", "-1%", "nan", "inf", "3pct"}) {
    absl::StatusOr<double> parsed = ParseFraction(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("e.g. 3% or 0.03"), std::string::npos)
        << parsed.status();
  }
}

}  // namespace
}  // namespace paradnn::common
