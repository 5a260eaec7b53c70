#include "worker/runner/report.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace paradnn::runner {
namespace {

v1::Measurement OkMeasurement() {
  v1::Measurement m;
  m.set_outcome(v1::OK);
  m.mutable_config()->set_family("fc");
  m.mutable_stats()->set_steps(10);
  m.mutable_stats()->set_median_s(0.01);
  m.set_examples_per_sec(800);
  return m;
}

TEST(ReportTest, SummaryListsSuspectConditions) {
  v1::Measurement m = OkMeasurement();
  EXPECT_FALSE(absl::StrContains(FormatSummary(m), "suspect"));
  m.add_suspect("host busy: load average 3.10 on 2 CPUs");
  m.add_suspect("noisy steps: CV 14 %");
  const std::string text = FormatSummary(m);
  EXPECT_TRUE(absl::StrContains(text, "  suspect         host busy: load average 3.10 on 2 CPUs\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "                  noisy steps: CV 14 %\n")) << text;
}

}  // namespace
}  // namespace paradnn::runner
