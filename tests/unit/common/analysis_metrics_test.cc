#include "common/analysis_metrics.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace paradnn::common {
namespace {

TEST(AnalysisMetricsTest, NamesAreUniqueAndTheHelpListsEveryOneWithItsMeaning) {
  std::set<std::string> names;
  const std::string help = AnalysisMetricHelp();
  for (const AnalysisMetric& metric : AnalysisMetrics()) {
    EXPECT_TRUE(names.insert(metric.name).second) << metric.name;
    EXPECT_NE(help.find(std::string(metric.name) + ": " + metric.description), std::string::npos)
        << metric.name;
    EXPECT_EQ(FindAnalysisMetric(metric.name), &metric);
  }
  EXPECT_GE(names.size(), 13u);
  EXPECT_EQ(FindAnalysisMetric("speed"), nullptr);
  // Fractions print as percentages, memory as bytes (client/analysis_views.cc).
  EXPECT_STREQ(FindAnalysisMetric("mfu")->unit, "fraction");
  EXPECT_STREQ(FindAnalysisMetric("peak_rss")->unit, "B");
  EXPECT_TRUE(FindAnalysisMetric("step_time")->lower_is_better);
}

}  // namespace
}  // namespace paradnn::common
