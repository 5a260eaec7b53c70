// Gang leases (params.hosts): all or nothing, in run order, released and
// settled whole.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/job_store.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using testing::Jobs;
using testing::OkMeasurement;
using testing::ScalarInt;
using testing::Spec;
using testing::StoresTest;

class GangLeaseTest : public StoresTest {
 protected:
  // A sweep whose jobs ask for `hosts[i]` workers each, in this run order.
  int64_t SweepOfHosts(const std::vector<int64_t>& hosts) {
    std::vector<NewJob> jobs = Jobs(static_cast<int>(hosts.size()));
    for (size_t i = 0; i < hosts.size(); ++i) {
      (*jobs[i].config.mutable_params())["hosts"] = hosts[i];
    }
    absl::StatusOr<int64_t> sweep = sweeps_->CreateSync(Spec("gangs"), std::move(jobs), kNow);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    return sweep.ok() ? *sweep : 0;
  }

  std::optional<Lease> LeaseWith(const std::string& worker, const GangCandidates& candidates) {
    absl::StatusOr<std::optional<Lease>> lease =
        jobs_->LeaseNextSync("cpu", worker, kNow, kNow + 1000, candidates);
    EXPECT_TRUE(lease.ok()) << lease.status();
    return lease.ok() ? *lease : std::nullopt;
  }

  int64_t OpenAttempts() {
    return *ScalarInt(*db_, "SELECT COUNT(*) FROM attempts WHERE finished_unix_ms IS NULL");
  }

  static GangCandidates Platform(std::vector<std::string> idle, int64_t workers) {
    GangCandidates candidates;
    candidates.idle_peers = std::move(idle);
    candidates.platform_workers = workers;
    candidates.platform_id = 7;
    return candidates;
  }
};

TEST_F(GangLeaseTest, AGangIsLeasedWholeInOneCommitWithOneAttemptPerRank) {
  SweepOfHosts({3});
  std::optional<Lease> lease = LeaseWith("w0", Platform({"w1", "w2", "w3"}, 4));
  ASSERT_TRUE(lease.has_value());
  ASSERT_EQ(lease->gang.size(), 3u);
  EXPECT_EQ(lease->gang[0].worker_id, "w0");
  EXPECT_EQ(lease->gang[0].attempt_id, lease->attempt_id);
  EXPECT_EQ(lease->gang[1].worker_id, "w1");
  EXPECT_EQ(lease->gang[2].worker_id, "w2");
  EXPECT_EQ(lease->max_pending_hosts, 3);
  EXPECT_EQ(OpenAttempts(), 3);
  // One attempt of the job, three ranks of one gang named by rank 0.
  EXPECT_EQ(*ScalarInt(*db_, "SELECT attempts FROM jobs"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(DISTINCT gang_id) FROM attempts"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT SUM(gang_rank) FROM attempts"), 0 + 1 + 2);
  EXPECT_EQ(*ScalarInt(*db_, absl::StrCat("SELECT COUNT(*) FROM attempts WHERE gang_id = ",
                                          lease->attempt_id)
                                 .c_str()),
            3);
}

TEST_F(GangLeaseTest, TheFirstJobWaitsForItsGangAndTheJobsBehindItWaitWithIt) {
  const int64_t sweep = SweepOfHosts({2, 1, 1});
  // Alone among two connected workers: nothing is leased, not even the
  // single-worker jobs behind the gang, and the lease says why.
  std::optional<Lease> lease = LeaseWith("w0", Platform({}, 2));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job_id, 0);
  ASSERT_EQ(lease->waiting.size(), 1u);
  EXPECT_EQ(lease->waiting[0].rfind(absl::StrCat("sweep ", sweep, ": job "), 0), 0u)
      << lease->waiting[0];
  EXPECT_NE(lease->waiting[0].find("(hosts 2) waits for 2 idle workers of platform 7: 1 idle of 2"),
            std::string::npos)
      << lease->waiting[0];
  EXPECT_EQ(lease->max_pending_hosts, 2);
  EXPECT_EQ(OpenAttempts(), 0);
  // With a peer idle the gang goes first, then the single jobs.
  lease = LeaseWith("w0", Platform({"w1"}, 2));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->gang.size(), 2u);
  lease = LeaseWith("w2", Platform({}, 3));
  ASSERT_TRUE(lease.has_value());
  EXPECT_NE(lease->job_id, 0);
  EXPECT_TRUE(lease->gang.empty());
  EXPECT_EQ(lease->max_pending_hosts, 1);
}

TEST_F(GangLeaseTest, AGangNoConnectedGroupCanHoldIsSkippedAndSaidSo) {
  SweepOfHosts({4, 1});
  // Two workers of the platform can never hold 4: the single job runs, and
  // the lease names the gang that cannot.
  std::optional<Lease> lease = LeaseWith("w0", Platform({"w1"}, 2));
  ASSERT_TRUE(lease.has_value());
  EXPECT_NE(lease->job_id, 0);
  EXPECT_TRUE(lease->gang.empty());
  lease = LeaseWith("w1", Platform({}, 2));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job_id, 0);
  ASSERT_EQ(lease->waiting.size(), 1u);
  EXPECT_NE(lease->waiting[0].find("1 pending job(s) of hosts 4"), std::string::npos)
      << lease->waiting[0];
  EXPECT_NE(lease->waiting[0].find("platform 7 has 2"), std::string::npos) << lease->waiting[0];
}

TEST_F(GangLeaseTest, ReleasingOneRankReleasesTheGangAndTheJobCountsOneAttempt) {
  SweepOfHosts({3});
  std::optional<Lease> lease = LeaseWith("w0", Platform({"w1", "w2"}, 3));
  ASSERT_TRUE(lease.has_value() && lease->gang.size() == 3u);
  absl::StatusOr<v1::JobState> state =
      jobs_->ReleaseSync(lease->gang[2].attempt_id, "lease expired", kNow + 5, 3);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, v1::JOB_PENDING);
  EXPECT_EQ(OpenAttempts(), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM attempts WHERE outcome = 'lease expired'"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM attempts WHERE outcome = 'gang: lease expired'"),
            2);
  // Releasing another rank of it afterwards changes nothing.
  state = jobs_->ReleaseSync(lease->gang[0].attempt_id, "again", kNow + 6, 3);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, v1::JOB_PENDING);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT attempts FROM jobs"), 1);
  // Leased again as a gang: a second attempt of the job.
  lease = LeaseWith("w1", Platform({"w2", "w0"}, 3));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->gang.size(), 3u);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT attempts FROM jobs"), 2);
}

TEST_F(GangLeaseTest, OneRanksResultIsTheJobsAndClosesEveryRank) {
  SweepOfHosts({2});
  std::optional<Lease> lease = LeaseWith("w0", Platform({"w1"}, 2));
  ASSERT_TRUE(lease.has_value() && lease->gang.size() == 2u);
  absl::StatusOr<StoreOutcome> stored =
      results_->StoreSync(lease->job_id, lease->attempt_id, "w0", 0, OkMeasurement(3), kNow + 9);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, StoreOutcome::kStored);
  EXPECT_EQ(OpenAttempts(), 0);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM attempts WHERE outcome = 'gang: OK'"), 1);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM results"), 1);
  // The other rank's late result is a duplicate: still exactly one result.
  stored = results_->StoreSync(lease->job_id, lease->gang[1].attempt_id, "w1", 0, OkMeasurement(3),
                               kNow + 10);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, StoreOutcome::kDuplicate);
  EXPECT_EQ(*ScalarInt(*db_, "SELECT COUNT(*) FROM results"), 1);
}

TEST_F(GangLeaseTest, AWorkerAloneNeverLeasesAGang) {
  SweepOfHosts({2});
  std::optional<Lease> lease = LeaseWith("w0", GangCandidates{});
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job_id, 0);
  EXPECT_EQ(OpenAttempts(), 0);
}

}  // namespace
}  // namespace paradnn::db
