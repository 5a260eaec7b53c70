#include "worker/unacked_results.h"

#include <gtest/gtest.h>

namespace paradnn::worker {
namespace {

v1::JobResult Result(int64_t job, int64_t attempt, v1::Outcome outcome = v1::OK) {
  v1::JobResult result;
  result.set_job_id(job);
  result.set_attempt_id(attempt);
  result.mutable_measurement()->set_outcome(outcome);
  return result;
}

TEST(UnackedResultsTest, KeepsResultsInOrderUntilAcknowledged) {
  UnackedResults unacked;
  EXPECT_TRUE(unacked.empty());
  unacked.Add(Result(1, 10));
  unacked.Add(Result(2, 20));
  unacked.Add(Result(3, 30));
  ASSERT_EQ(unacked.size(), 3u);
  EXPECT_EQ(unacked.results()[0].job_id(), 1);
  EXPECT_EQ(unacked.results()[2].job_id(), 3);

  EXPECT_TRUE(unacked.Acknowledge(2, 20));
  ASSERT_EQ(unacked.size(), 2u);
  EXPECT_EQ(unacked.results()[0].job_id(), 1);
  EXPECT_EQ(unacked.results()[1].job_id(), 3);
}

TEST(UnackedResultsTest, AckMustMatchJobAndAttempt) {
  UnackedResults unacked;
  unacked.Add(Result(1, 10));
  EXPECT_FALSE(unacked.Acknowledge(1, 11));  // another attempt of the same job
  EXPECT_FALSE(unacked.Acknowledge(2, 10));
  EXPECT_EQ(unacked.size(), 1u);
  EXPECT_TRUE(unacked.Acknowledge(1, 10));
  EXPECT_FALSE(unacked.Acknowledge(1, 10));  // duplicate ack
  EXPECT_TRUE(unacked.empty());
}

TEST(UnackedResultsTest, SameAttemptIsReplacedNotDuplicated) {
  UnackedResults unacked;
  unacked.Add(Result(1, 10, v1::CRASHED));
  unacked.Add(Result(1, 11, v1::OK));
  unacked.Add(Result(1, 10, v1::OK));
  ASSERT_EQ(unacked.size(), 2u);
  EXPECT_EQ(unacked.results()[0].attempt_id(), 10);
  EXPECT_EQ(unacked.results()[0].measurement().outcome(), v1::OK);
}

}  // namespace
}  // namespace paradnn::worker
