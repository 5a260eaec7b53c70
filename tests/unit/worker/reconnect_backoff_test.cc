#include "worker/reconnect_backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace paradnn::worker {
namespace {

using std::chrono::milliseconds;

TEST(ReconnectBackoffTest, DoublesFromInitialUpToTheCapWithJitter) {
  ReconnectBackoff backoff(milliseconds(200), milliseconds(5000), /*seed=*/42);
  const std::vector<int64_t> bases = {200, 400, 800, 1600, 3200, 5000, 5000, 5000};
  for (int64_t base : bases) {
    EXPECT_EQ(backoff.base().count(), base);
    const milliseconds delay = backoff.Next();
    EXPECT_GE(delay.count(), base * 8 / 10) << "base " << base;
    EXPECT_LE(delay.count(), base) << "base " << base;
  }
}

TEST(ReconnectBackoffTest, ResetStartsOver) {
  ReconnectBackoff backoff(milliseconds(200), milliseconds(5000), 1);
  backoff.Next();
  backoff.Next();
  EXPECT_EQ(backoff.base().count(), 800);
  backoff.Reset();
  EXPECT_EQ(backoff.base().count(), 200);
}

TEST(ReconnectBackoffTest, JitterSpreadsWorkersApart) {
  ReconnectBackoff a(milliseconds(1000), milliseconds(1000), 1);
  ReconnectBackoff b(milliseconds(1000), milliseconds(1000), 2);
  int different = 0;
  for (int i = 0; i < 20; ++i) different += a.Next() != b.Next();
  EXPECT_GT(different, 10);
}

TEST(ReconnectBackoffTest, CapBelowInitialUsesInitial) {
  ReconnectBackoff backoff(milliseconds(200), milliseconds(50), 1);
  EXPECT_EQ(backoff.base().count(), 200);
  backoff.Next();
  EXPECT_EQ(backoff.base().count(), 200);
}

}  // namespace
}  // namespace paradnn::worker
