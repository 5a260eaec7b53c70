// A data-parallel gang of real paradnn-runner processes (RunnerJob.gang) on
// this host: the ranks meet at rank 0's TCPStore on 127.0.0.1, train one
// job as one Gloo process group, and rank 0 reports the job; a wrong
// secret or tag, an unreachable rank 0 and a killed peer each end the ranks
// with GANG_BROKEN and an error naming who.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cpu_list.h"
#include "common/framing.h"
#include "common/subprocess.h"
#include "paradnn/v1/metrics.pb.h"
#include "tests/support/wait_for.h"
#include "tests/unit/worker/runner/rank_process.h"
#include "tests/unit/worker/runner/tiny_fc.h"

namespace paradnn::runner {
namespace {

// Rank `host_rank` of a gang of `hosts` training the tiny FC model.
v1::RunnerJob GangJob(int host_rank, int hosts, int port, bool overlap) {
  v1::RunnerJob job;
  *job.mutable_config() = TinyFcConfig();
  (*job.mutable_config()->mutable_params())["hosts"] = hosts;
  (*job.mutable_config()->mutable_params())["overlap"] = overlap ? 1 : 0;
  v1::RunSettings& s = *job.mutable_settings();
  s.set_warmup_steps(2);
  s.set_min_steps(4);
  s.set_max_steps(40);
  s.set_max_seconds(1);
  job.set_device("cpu");
  JoinTestGang(&job, host_rank, hosts, port, "job 12 attempt 40");
  return job;
}

std::string WeightsLine(RankProcess& rank) {
  for (const std::string& line : rank.logs()) {
    if (absl::StartsWith(line, "final weights fnv1a")) return line;
  }
  return "";
}

// A gang of `hosts` ranks trains to the end: every rank OK with the same
// final weights, rank 0's Measurement the job's.
void ExpectGangTrains(int hosts, bool overlap) {
  const int port = FreePort();
  std::vector<v1::RunnerJob> jobs;
  for (int r = 0; r < hosts; ++r) jobs.push_back(GangJob(r, hosts, port, overlap));
  std::vector<std::unique_ptr<RankProcess>> ranks = StartRanks(jobs);
  std::vector<v1::Measurement> results;
  for (auto& rank : ranks) {
    std::optional<v1::Measurement> m = rank->Result();
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(m->outcome(), v1::OK) << m->error();
    results.push_back(*m);
  }
  const v1::Measurement& job = results[0];
  const v1::DataParallelStep& dp = job.data_parallel();
  EXPECT_EQ(dp.ranks(), hosts);
  EXPECT_EQ(dp.hosts(), hosts);
  EXPECT_EQ(dp.devices_per_host(), 1);
  EXPECT_EQ(dp.backend(), "gloo");
  EXPECT_EQ(dp.overlap(), overlap);
  EXPECT_GE(dp.buckets(), 1);
  EXPECT_EQ(dp.allreduce_bytes(), 4 * job.counts().params());  // float32 gradients
  ASSERT_EQ(dp.rank_median_step_s_size(), hosts);
  EXPECT_GE(dp.slowest_rank(), 0);
  EXPECT_LT(dp.slowest_rank(), hosts);
  // The parts make up a step of the slowest rank: an average over the
  // middle half of its samples, each the sum of its parts, so between the
  // job's fastest and slowest sample (the job's samples are, sample by
  // sample, the slowest rank's). No timing threshold: a shared host moves
  // the median, not these bounds.
  const double parts = dp.compute_s() + dp.exposed_communication_s() + dp.optimizer_s();
  EXPECT_GT(dp.compute_s(), 0) << dp.DebugString();
  EXPECT_GE(dp.exposed_communication_s(), 0) << dp.DebugString();
  EXPECT_GE(dp.optimizer_s(), 0) << dp.DebugString();
  EXPECT_LE(parts, job.stats().max_s() * (1 + 1e-9)) << dp.DebugString();
  EXPECT_GT(dp.algorithm_bytes_per_sec(), 0);
  EXPECT_NEAR(dp.bus_bytes_per_sec(), dp.algorithm_bytes_per_sec() * 2 * (hosts - 1) / hosts,
              1e-6 * dp.bus_bytes_per_sec());
  // The job's step is the slowest rank's: never faster than any rank's own.
  for (int r = 0; r < hosts; ++r) {
    EXPECT_GE(job.stats().median_s(), dp.rank_median_step_s(r) * (1 - 1e-9));
    EXPECT_EQ(results[r].step_seconds_size(), job.step_seconds_size()) << "rank " << r;
  }
  EXPECT_NEAR(job.examples_per_sec(), 8.0 * hosts / job.stats().median_s(),
              1e-6 * job.examples_per_sec());
  EXPECT_TRUE(absl::StrContains(job.thread_pinning(), "process confined to CPUs"))
      << job.thread_pinning();
  EXPECT_TRUE(job.suspect().empty() ||
              !absl::StrContains(job.suspect(0), "PARADNN_TEST_CPU_REPLICAS"));
  const std::string weights = WeightsLine(*ranks[0]);
  ASSERT_FALSE(weights.empty());
  for (int r = 1; r < hosts; ++r) EXPECT_EQ(WeightsLine(*ranks[r]), weights) << "rank " << r;
}

TEST(GangTest, TwoRanksTrainAsOneJobOverlapped) { ExpectGangTrains(2, /*overlap=*/true); }
TEST(GangTest, TwoRanksTrainAsOneJobAfterBackward) { ExpectGangTrains(2, /*overlap=*/false); }
TEST(GangTest, ThreeRanksTrainAsOneJob) { ExpectGangTrains(3, /*overlap=*/true); }

// Both ranks end GANG_BROKEN, each error containing `expected`.
void ExpectBothBroken(std::vector<std::unique_ptr<RankProcess>>& ranks,
                      const std::string& expected) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::optional<v1::Measurement> m = ranks[r]->Result();
    ASSERT_TRUE(m.has_value()) << "rank " << r;
    EXPECT_EQ(m->outcome(), v1::GANG_BROKEN) << "rank " << r << ": " << m->error();
    EXPECT_TRUE(absl::StrContains(m->error(), expected)) << "rank " << r << ": " << m->error();
  }
}

TEST(GangTest, AWrongSecretIsRefusedAndBothSidesSaySo) {
  const int port = FreePort();
  v1::RunnerJob stranger = GangJob(1, 2, port, true);
  stranger.mutable_gang()->set_secret("stale");
  std::vector<std::unique_ptr<RankProcess>> ranks =
      StartRanks({GangJob(0, 2, port, true), stranger});
  ExpectBothBroken(ranks, "rank 1 (worker w1) gave the wrong secret for job 12 attempt 40");
}

TEST(GangTest, ARankOfAnotherJobIsRefusedNamingBothTags) {
  const int port = FreePort();
  v1::RunnerJob stranger = GangJob(1, 2, port, true);
  stranger.mutable_gang()->set_gang_tag("job 11 attempt 3");
  std::vector<std::unique_ptr<RankProcess>> ranks =
      StartRanks({GangJob(0, 2, port, true), stranger});
  ExpectBothBroken(ranks,
                   "rank 1 (worker w1) joined for 'job 11 attempt 3', but rank 0 (worker w0) "
                   "at 127.0.0.1:" +
                       std::to_string(port) + " serves 'job 12 attempt 40'");
}

TEST(GangTest, ARankThatCannotReachRankZeroGivesUpNamingIt) {
  const int port = FreePort();  // nobody listens there
  v1::RunnerJob alone = GangJob(1, 2, port, true);
  alone.mutable_gang()->set_collective_timeout_s(2);
  std::vector<std::unique_ptr<RankProcess>> ranks = StartRanks({alone});
  ExpectBothBroken(ranks, "rank 1 (worker w1) could not reach rank 0 (worker w0) at 127.0.0.1:" +
                              std::to_string(port) + " within 2 s: ");
}

// A job's bad CPU list or gang assignment is refused before any training,
// naming the field.
TEST(GangTest, BadCpusAndAssignmentsAreRefusedNamingTheField) {
  struct Case {
    std::function<void(v1::RunnerJob&)> change;
    v1::Outcome outcome;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](v1::RunnerJob& j) { j.set_cpus("0-3,x"); }, v1::UNSUPPORTED,
       "cpus: '0-3,x' is not a CPU list: not a CPU number (0..1023) or range 'x'"},
      {[](v1::RunnerJob& j) { j.set_cpus("1023"); }, v1::UNSUPPORTED,
       "cpus: CPU 1023 is outside this process's affinity; allowed: "},
      {[](v1::RunnerJob& j) { j.mutable_gang()->set_host_rank(5); }, v1::ERROR,
       "gang.host_rank: 5 is out of range 0..1"},
      {[](v1::RunnerJob& j) { j.clear_gang(); }, v1::ERROR,
       "hosts 2: a job of several hosts runs as a gang"},
  };
  for (const Case& c : cases) {
    v1::RunnerJob job = GangJob(0, 2, FreePort(), true);
    c.change(job);
    RankProcess rank(job);
    std::optional<v1::Measurement> m = rank.Result();
    ASSERT_TRUE(m.has_value()) << c.message;
    EXPECT_EQ(m->outcome(), c.outcome) << m->error();
    EXPECT_TRUE(absl::StartsWith(m->error(), c.message)) << m->error();
  }
}

// A peer SIGKILLed mid-job ends the other rank, whichever of the two.
void ExpectKilledPeerBreaksTheGang(int killed) {
  const int port = FreePort();
  std::vector<v1::RunnerJob> jobs = {GangJob(0, 2, port, true), GangJob(1, 2, port, true)};
  for (v1::RunnerJob& job : jobs) {
    job.set_stream_steps(true);
    job.mutable_settings()->set_max_steps(100'000);  // longer than the test: it must be killed
    job.mutable_settings()->set_min_steps(100'000);
    job.mutable_settings()->set_max_seconds(600);
    job.mutable_settings()->set_timeout_seconds(900);
  }
  std::vector<std::unique_ptr<RankProcess>> ranks = StartRanks(jobs);
  ASSERT_TRUE(testing::WaitFor(
      [&] { return ranks[killed]->steps() >= 1 || ranks[killed]->ended(); }, kResultDeadline));
  ASSERT_GE(ranks[killed]->steps(), 1) << "rank " << killed << " ended before its first step";
  ranks[killed]->Kill();
  const int survivor = 1 - killed;
  std::optional<v1::Measurement> m = ranks[survivor]->Result();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->outcome(), v1::GANG_BROKEN) << m->error();
  EXPECT_TRUE(
      absl::StrContains(m->error(), absl::StrCat("rank ", survivor, " (worker w", survivor, ")")))
      << m->error();
  EXPECT_TRUE(
      absl::StrContains(m->error(), absl::StrCat("rank ", killed, " (worker w", killed, ")")))
      << m->error();
}

TEST(GangTest, AKilledPeerEndsRankZeroWithGangBroken) { ExpectKilledPeerBreaksTheGang(1); }
TEST(GangTest, AKilledRankZeroEndsThePeerWithGangBroken) { ExpectKilledPeerBreaksTheGang(0); }

}  // namespace
}  // namespace paradnn::runner
