#include "worker/sentinel_memory.h"

#include <gtest/gtest.h>

namespace paradnn::worker {
namespace {

using Clock = SentinelMemory::Clock;
using std::chrono::milliseconds;

v1::HostSentinel Readings(double before, double after, double seconds, double before_age = 0) {
  v1::HostSentinel sentinel;
  sentinel.set_compute_before(before);
  sentinel.set_latency_before_s(before > 0 ? 3e-4 : 0);
  sentinel.set_compute_after(after);
  sentinel.set_latency_after_s(after > 0 ? 4e-4 : 0);
  sentinel.set_seconds(seconds);
  sentinel.set_before_age_s(before_age);
  return sentinel;
}

// Fills a job from `memory` at `at` and expects what it hands over: the
// reading's compute ratio and age, and how long the job may reuse it.
v1::RunnerJob ExpectHandOver(const SentinelMemory& memory, Clock::time_point at, double ratio,
                             double age_s, double reuse_s) {
  v1::RunnerJob job;
  memory.Fill(at, &job);
  EXPECT_DOUBLE_EQ(job.recent_sentinel().compute_ratio(), ratio);
  EXPECT_NEAR(job.recent_sentinel().age_s(), age_s, 1e-9);
  EXPECT_NEAR(job.sentinel_reuse_s(), reuse_s, 1e-9);
  return job;
}

TEST(SentinelMemoryTest, NothingToHandOverBeforeTheFirstReading) {
  SentinelMemory memory;
  memory.Record(v1::HostSentinel(), Clock::now(), Clock::now());  // a job without the sentinel
  v1::RunnerJob job;
  memory.Fill(Clock::now(), &job);
  EXPECT_FALSE(job.has_recent_sentinel());
  // The first job reads "before" and, when it is short, not "after".
  EXPECT_NEAR(job.sentinel_reuse_s(),
              SentinelMemory::ReuseSeconds(SentinelMemory::kFirstReadingSeconds), 1e-9);
}

TEST(SentinelMemoryTest, HandsOverTheAfterReadingDatedAtTheResult) {
  SentinelMemory memory;
  const Clock::time_point started = Clock::now();
  const Clock::time_point finished = started + milliseconds(5000);
  // Two readings in 0.08 s: one takes 0.04 s, reused for 0.04 / 1 % = 4 s.
  memory.Record(Readings(0.9, 0.8, 0.08), started, finished);
  const v1::RunnerJob job = ExpectHandOver(memory, finished + milliseconds(500), 0.8, 0.5, 4.0);
  EXPECT_DOUBLE_EQ(job.recent_sentinel().latency_s(), 4e-4);
}

TEST(SentinelMemoryTest, AnOwnBeforeReadingIsDatedAtTheJobsStart) {
  SentinelMemory memory;
  const Clock::time_point started = Clock::now();
  memory.Record(Readings(0.7, 0, 0.05), started, started + milliseconds(1000));
  ExpectHandOver(memory, started + milliseconds(1200), 0.7, 1.2, 5.0);
}

TEST(SentinelMemoryTest, AReusedReadingKeepsItsOriginalDate) {
  SentinelMemory memory;
  const Clock::time_point first = Clock::now();
  memory.Record(Readings(0.9, 0.95, 0.08), first, first + milliseconds(100));
  // The next job reused 0.95 as its "before" and read nothing itself.
  memory.Record(Readings(0.95, 0, 0, /*before_age=*/0.2), first + milliseconds(200),
                first + milliseconds(900));
  // Reused for 4 s: the cost of the last reading taken.
  ExpectHandOver(memory, first + milliseconds(1100), 0.95, 1.0, 4.0);
}

TEST(SentinelMemoryTest, ReuseIsAShareOfTheReadingsCostAndCapped) {
  EXPECT_NEAR(SentinelMemory::ReuseSeconds(0.038), 3.8, 1e-9);
  EXPECT_EQ(SentinelMemory::ReuseSeconds(2.0), SentinelMemory::kMaxReuseSeconds);
  EXPECT_EQ(SentinelMemory::ReuseSeconds(0), 0);
}

TEST(SentinelMemoryTest, OwnReadingsFarAboveTheCalibrationSayItRanOnABusyHost) {
  EXPECT_TRUE(SentinelMemory::BeatsCalibration(Readings(4.1, 4.2, 0.08)));
  EXPECT_FALSE(SentinelMemory::BeatsCalibration(Readings(1.1, 1.05, 0.08)));
  // A reused reading is an earlier job's, already judged with it.
  EXPECT_FALSE(SentinelMemory::BeatsCalibration(Readings(4.1, 0, 0, /*before_age=*/1.0)));
}

}  // namespace
}  // namespace paradnn::worker
