// The allreduce family (model/families/allreduce.h) on real paradnn-runner
// processes: a gang of two on 127.0.0.1 all-reduces one message per step
// and rank 0 reports the slowest rank's step and the bandwidths as
// nccl-tests defines them; a job of one rank runs a group of one; a gang
// that loses a peer ends GANG_BROKEN as any gang does.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "paradnn/v1/metrics.pb.h"
#include "tests/support/wait_for.h"
#include "tests/unit/worker/runner/rank_process.h"

namespace paradnn::runner {
namespace {

constexpr int64_t kBytes = 65536;

v1::RunnerJob AllReduceJob(int64_t bytes, int hosts) {
  v1::RunnerJob job;
  job.mutable_config()->set_family("allreduce");
  (*job.mutable_config()->mutable_params())["bytes"] = bytes;
  (*job.mutable_config()->mutable_params())["hosts"] = hosts;
  v1::RunSettings& s = *job.mutable_settings();
  s.set_warmup_steps(2);
  s.set_min_steps(4);
  s.set_max_steps(400);
  s.set_max_seconds(1);
  job.set_device("cpu");
  return job;
}

// Rank `host_rank` of a gang of `hosts` meeting on 127.0.0.1:`port`.
v1::RunnerJob GangRank(int host_rank, int hosts, int port) {
  v1::RunnerJob job = AllReduceJob(kBytes, hosts);
  JoinTestGang(&job, host_rank, hosts, port, "job 7 attempt 1");
  return job;
}

TEST(AllReduceRunnerTest, TwoRanksReportTheSlowestRanksAllReduce) {
  const int port = FreePort();
  std::vector<std::unique_ptr<RankProcess>> ranks =
      StartRanks({GangRank(0, 2, port), GangRank(1, 2, port)});
  std::vector<v1::Measurement> results;
  for (auto& rank : ranks) {
    std::optional<v1::Measurement> m = rank->Result();
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(m->outcome(), v1::OK) << m->error();
    results.push_back(*m);
  }
  const v1::Measurement& job = results[0];
  const v1::DataParallelStep& dp = job.data_parallel();
  EXPECT_EQ(dp.ranks(), 2);
  EXPECT_EQ(dp.hosts(), 2);
  EXPECT_EQ(dp.devices_per_host(), 1);
  EXPECT_EQ(dp.backend(), "gloo");
  EXPECT_FALSE(dp.overlap());
  EXPECT_EQ(dp.buckets(), 1);
  EXPECT_EQ(dp.bucket_cap_bytes(), kBytes);
  EXPECT_EQ(dp.allreduce_bytes(), kBytes);
  // A step is the all-reduce and nothing else.
  EXPECT_EQ(dp.compute_s(), 0);
  EXPECT_EQ(dp.optimizer_s(), 0);
  EXPECT_GT(dp.allreduce_s(), 0);
  EXPECT_EQ(dp.exposed_communication_s(), dp.allreduce_s());
  ASSERT_EQ(dp.rank_median_step_s_size(), 2);
  ASSERT_GE(dp.slowest_rank(), 0);
  ASSERT_LT(dp.slowest_rank(), 2);
  // The slowest rank's own median step, the largest of the ranks'.
  EXPECT_EQ(dp.allreduce_s(), dp.rank_median_step_s(dp.slowest_rank()));
  for (double median : dp.rank_median_step_s()) EXPECT_LE(median, dp.allreduce_s());
  EXPECT_DOUBLE_EQ(dp.algorithm_bytes_per_sec(), kBytes / dp.allreduce_s());
  // nccl-tests' busbw: algbw x 2 (ranks - 1) / ranks, x 1 for two ranks.
  EXPECT_DOUBLE_EQ(dp.bus_bytes_per_sec(), dp.algorithm_bytes_per_sec());
  // No examples, no FLOPs: nothing to claim a throughput or utilization of.
  EXPECT_EQ(job.examples_per_sec(), 0);
  EXPECT_EQ(job.model_flops_per_sec(), 0);
  EXPECT_EQ(job.mfu(), 0);
  EXPECT_EQ(job.hfu(), 0);
  EXPECT_EQ(job.counts().params(), kBytes / 4);
  EXPECT_EQ(job.counts().bytes_per_step(), kBytes);  // bus bytes of two ranks
  EXPECT_GT(job.stats().median_s(), 0);
  EXPECT_GE(job.stats().median_s(), dp.allreduce_s() * (1 - 1e-9));  // the sample-wise slowest
  EXPECT_EQ(results[1].step_seconds_size(), job.step_seconds_size());
  // Gloo's ops end when wait() returns: each is its own sample, whatever
  // the warm-up saw (a 4 KiB op is far shorter than a block's 1 ms bound).
  EXPECT_EQ(job.stats().block_steps(), 1);
}

TEST(AllReduceRunnerTest, OneRankRunsAGroupOfOne) {
  RankProcess rank(AllReduceJob(4096, 1));
  std::optional<v1::Measurement> m = rank.Result();
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->outcome(), v1::OK) << m->error();
  const v1::DataParallelStep& dp = m->data_parallel();
  EXPECT_EQ(dp.ranks(), 1);
  EXPECT_EQ(dp.allreduce_bytes(), 4096);
  EXPECT_GT(dp.algorithm_bytes_per_sec(), 0);
  EXPECT_EQ(dp.bus_bytes_per_sec(), 0);  // one rank moves nothing over a bus
  EXPECT_GT(m->stats().steps(), 0);
  EXPECT_EQ(m->counts().bytes_per_step(), 0);
}

TEST(AllReduceRunnerTest, ABadConfigIsAnErrorNamingTheField) {
  v1::RunnerJob job = AllReduceJob(4096, 1);
  job.mutable_config()->set_precision("bfloat16");
  RankProcess rank(job);
  std::optional<v1::Measurement> m = rank.Result();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->outcome(), v1::ERROR);
  EXPECT_TRUE(absl::StartsWith(m->error(),
                               "config.precision: 'bfloat16' is not allowed for "
                               "family allreduce; allowed: float32"))
      << m->error();
}

// A peer SIGKILLed mid-job ends rank 0 with GANG_BROKEN naming both ranks.
TEST(AllReduceRunnerTest, AKilledPeerBreaksTheGang) {
  const int port = FreePort();
  std::vector<v1::RunnerJob> jobs = {GangRank(0, 2, port), GangRank(1, 2, port)};
  for (v1::RunnerJob& job : jobs) {
    job.set_stream_steps(true);
    job.mutable_settings()->set_max_steps(100'000);  // longer than the test: it must be killed
    job.mutable_settings()->set_min_steps(100'000);
    job.mutable_settings()->set_max_seconds(600);
    job.mutable_settings()->set_timeout_seconds(900);
  }
  std::vector<std::unique_ptr<RankProcess>> ranks = StartRanks(jobs);
  ASSERT_TRUE(testing::WaitFor([&] { return ranks[1]->steps() >= 1 || ranks[1]->ended(); },
                               kResultDeadline));
  ASSERT_GE(ranks[1]->steps(), 1) << "rank 1 ended before its first step";
  ranks[1]->Kill();
  std::optional<v1::Measurement> m = ranks[0]->Result();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->outcome(), v1::GANG_BROKEN) << m->error();
  EXPECT_TRUE(absl::StrContains(m->error(), "rank 0 (worker w0)")) << m->error();
  EXPECT_TRUE(absl::StrContains(m->error(), "rank 1 (worker w1)")) << m->error();
}

}  // namespace
}  // namespace paradnn::runner
