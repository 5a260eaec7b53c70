// Fault tests: workers and the coordinator die by SIGKILL mid-sweep; every
// job must still end with exactly one stored result. Workers run the
// LibTorch-free fake runner (each job ~150 ms) so kills land mid-job and the
// test stays fast.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

// A sweep of `jobs` FC configurations (distinct node counts).
std::string WriteSweep(const TempDir& dir, int jobs) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(8 + i);
  const std::string path = dir.File("sweep.yaml");
  std::ofstream(path) << "name: chaos\nfamily: fc\nparams:\n  layer: 1\n  node: {values: [" << values
                      << "]}\n  input: 8\n  output: 4\n  batch: 4\n";
  return path;
}

int64_t ResultCount(const Cluster& cluster) {
  return QueryInt(cluster.db_path(), "SELECT count(*) FROM results");
}

void ExpectExactlyOneResultPerJob(const Cluster& cluster, int jobs) {
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs"), jobs);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 3"), jobs)
      << "every job done";
  EXPECT_EQ(ResultCount(cluster), jobs);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM (SELECT job_id FROM results GROUP BY job_id HAVING count(*) > 1)"),
            0);
}

class KillTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_RUNNER_DELAY_MS", "150", 1); }
  void TearDown() override { unsetenv("FAKE_RUNNER_DELAY_MS"); }
  std::vector<std::string> FakeRunner() { return {"--runner", PARADNN_FAKE_RUNNER}; }
};

TEST_F(KillTest, KilledWorkersJobsAreRequeuedAndStoredOnce) {
  constexpr int kJobs = 40;
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  for (int i = 0; i < 3; ++i) cluster.StartWorker("w" + std::to_string(i), FakeRunner());
  CommandResult submit = cluster.Cli({"submit", WriteSweep(dir, kJobs), "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 5; }, seconds(60))) << cluster.Logs();
  ASSERT_NO_FATAL_FAILURE(cluster.KillWorker(0));
  cluster.StartWorker("w3", FakeRunner());
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 15; }, seconds(60))) << cluster.Logs();
  ASSERT_NO_FATAL_FAILURE(cluster.KillWorker(1));

  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= kJobs; }, seconds(120))) << cluster.Logs();
  CommandResult watch = cluster.Cli({"watch", submit.out.substr(0, submit.out.find('\n'))}, seconds(60));
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  ExpectExactlyOneResultPerJob(cluster, kJobs);
  // The killed workers' attempts were closed as lost, not left open.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts WHERE finished_unix_ms IS NULL"), 0);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(KillTest, CoordinatorKilledAndRestartedLosesNothing) {
  constexpr int kJobs = 40;
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  for (int i = 0; i < 2; ++i) cluster.StartWorker("w" + std::to_string(i), FakeRunner());
  CommandResult submit = cluster.Cli({"submit", WriteSweep(dir, kJobs), "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  for (int64_t threshold : {5, 15, 25}) {
    ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= threshold; }, seconds(60))) << cluster.Logs();
    const int64_t before = ResultCount(cluster);
    ASSERT_NO_FATAL_FAILURE(cluster.KillCoordinator());
    // Committed results survive the kill.
    EXPECT_GE(ResultCount(cluster), before);
    ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  }
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= kJobs; }, seconds(120))) << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, kJobs);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
