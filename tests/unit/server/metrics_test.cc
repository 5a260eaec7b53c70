#include "server/metrics.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace paradnn::server {
namespace {

TEST(MetricsTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  PrometheusText text;
  text.Family("paradnn_x", "gauge", "help with \\ and\nnewline");
  text.Sample("paradnn_x", {{"k", "v\"1"}}, 2.5);
  EXPECT_EQ(text.text(),
            "# HELP paradnn_x help with \\\\ and\\nnewline\n# TYPE paradnn_x gauge\n"
            "paradnn_x{k=\"v\\\"1\"} 2.5\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  RpcMetrics rpc;
  rpc.Observe("/s/M", 0.0007, 0);  // bucket le=0.001
  rpc.Observe("/s/M", 0.003, 0);   // le=0.005
  rpc.Observe("/s/M", 1000, 14);   // beyond the last bound: only +Inf
  PrometheusText text;
  rpc.Write(&text);
  const std::string& t = text.text();
  for (const char* line : {
           "paradnn_rpc_duration_seconds_bucket{method=\"/s/M\",le=\"0.0005\"} 0\n",
           "paradnn_rpc_duration_seconds_bucket{method=\"/s/M\",le=\"0.001\"} 1\n",
           "paradnn_rpc_duration_seconds_bucket{method=\"/s/M\",le=\"0.005\"} 2\n",
           "paradnn_rpc_duration_seconds_bucket{method=\"/s/M\",le=\"60\"} 2\n",
           "paradnn_rpc_duration_seconds_bucket{method=\"/s/M\",le=\"+Inf\"} 3\n",
           "paradnn_rpc_duration_seconds_count{method=\"/s/M\"} 3\n",
           "paradnn_rpc_calls_total{method=\"/s/M\",code=\"0\"} 2\n",
           "paradnn_rpc_calls_total{method=\"/s/M\",code=\"14\"} 1\n",
       }) {
    EXPECT_TRUE(absl::StrContains(t, line)) << "no line " << line << "in:\n" << t;
  }
}

TEST(MetricsTest, RateOverTheWindowOnly) {
  RateWindow rate(10'000);
  EXPECT_EQ(rate.PerSecond(), 0);
  rate.Sample(0, 0);
  EXPECT_EQ(rate.PerSecond(), 0);
  rate.Sample(1000, 100);  // a burst in the first second
  for (int64_t t = 2000; t <= 30'000; t += 1000) rate.Sample(t, 100 + (t - 1000) / 1000);
  // The last 10 s saw one result per second; the early burst is out.
  EXPECT_DOUBLE_EQ(rate.PerSecond(), 1.0);
}

}  // namespace
}  // namespace paradnn::server
