// A rank that fails on its own (an OOM, a model error) in a gang: its
// failure, not GANG_BROKEN, is what every rank reports (DataParallelRun::
// RunPublishingFailures), whichever rank failed. Two ranks of the allreduce
// family as threads of this process, meeting at a real TCPStore on
// 127.0.0.1 and all-reducing over Gloo.
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/address.h"
#include "worker/runner/gang_rendezvous.h"
#include "worker/runner/gang_training.h"

namespace paradnn::runner {
namespace {

v1::RunnerJob RankJob(int host_rank, int port) {
  v1::RunnerJob job;
  job.mutable_config()->set_family("allreduce");
  (*job.mutable_config()->mutable_params())["bytes"] = 4096;
  (*job.mutable_config()->mutable_params())["hosts"] = 2;
  job.set_device("cpu");
  v1::GangRole& gang = *job.mutable_gang();
  gang.set_host_rank(host_rank);
  gang.set_hosts(2);
  gang.set_devices_per_host(1);
  gang.set_rendezvous_host("127.0.0.1");
  gang.set_rendezvous_port(port);
  gang.set_secret("s3cret");
  gang.set_gang_tag("job 7 attempt 9");
  gang.set_collective_timeout_s(20);
  gang.add_worker_ids("w0");
  gang.add_worker_ids("w1");
  return job;
}

// What one rank's RunPublishingFailures threw.
struct Thrown {
  bool peer_failed = false;  // GangPeerFailed
  v1::Outcome outcome = v1::OK;
  std::string what;
};

// Ranks 0 and 1 step until `failing` throws an OOM of its own after three
// steps; returns what each rank's RunPublishingFailures threw.
std::pair<Thrown, Thrown> RunGangWithAFailingRank(int failing) {
  const int port = common::FreeTcpPort("127.0.0.1").value_or(-1);
  Thrown thrown[2];
  std::thread ranks[2];
  for (int rank = 0; rank < 2; ++rank) {
    ranks[rank] = std::thread([&, rank] {
      try {
        DataParallelRun run(RankJob(rank, port), "gloo", torch::Device(torch::kCPU), 4096,
                            std::chrono::seconds(20));
        run.RunPublishingFailures([&] {
          for (int step = 0;; ++step) {
            if (rank == failing && step == 3) {
              throw std::runtime_error("DefaultCPUAllocator: not enough memory (injected)");
            }
            run.Step();
          }
        });
      } catch (const GangPeerFailed& e) {
        thrown[rank] = {true, e.outcome(), e.what()};
      } catch (const std::exception& e) {
        thrown[rank] = {false, v1::ERROR, e.what()};
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  return {thrown[0], thrown[1]};
}

// The failing rank threw its own failure, as it would without a gang; its
// peer, whose all-reduce broke, reports that failure, named, as an OOM.
void ExpectThePeerReportsTheFailure(const Thrown& failing, const Thrown& peer,
                                    const std::string& failing_name) {
  EXPECT_FALSE(failing.peer_failed);
  EXPECT_TRUE(absl::StrContains(failing.what, "not enough memory (injected)")) << failing.what;
  EXPECT_TRUE(peer.peer_failed) << peer.what;
  EXPECT_EQ(peer.outcome, v1::OOM) << peer.what;
  EXPECT_TRUE(absl::StartsWith(peer.what, failing_name + " failed first: ")) << peer.what;
  EXPECT_TRUE(absl::StrContains(peer.what, "not enough memory (injected)")) << peer.what;
}

TEST(GangFailureTest, ARankZeroReportsItsPeersOomNotGangBroken) {
  const auto [rank0, rank1] = RunGangWithAFailingRank(1);
  ExpectThePeerReportsTheFailure(rank1, rank0, "rank 1 (worker w1)");
}

TEST(GangFailureTest, APeerReadsRankZerosOomBeforeItsStoreIsGone) {
  // Rank 0 serves the store: it stays until rank 1 has read the failure.
  const auto [rank0, rank1] = RunGangWithAFailingRank(0);
  ExpectThePeerReportsTheFailure(rank0, rank1, "rank 0 (worker w0)");
}

}  // namespace
}  // namespace paradnn::runner
