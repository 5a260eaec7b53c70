// A data-parallel gang loses a rank (issue 39, item 6): one rank's worker is
// SIGKILLed mid-job. Every other rank ends within a bounded time, the job
// stores no partial result, waits (saying why) until a gang can form again,
// and is then retried as a gang and measured once. Real coordinator, real
// workers and runners on loopback.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

std::string OpenAttempts() {
  return "SELECT count(*) FROM attempts WHERE finished_unix_ms IS NULL";
}

TEST(GangFaultTest, AKilledRankEndsTheGangWhichIsRetriedWholeAndMeasuredOnce) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("rank-a", {"--cpus", "0"});
  cluster.StartWorker("rank-b", {"--cpus", "0"});
  // Long enough to be killed mid-job: timing runs to max_seconds (a target
  // interval it cannot reach), 60 s at most.
  std::ofstream(dir.File("gang.yaml"))
      << "name: gang\nfamily: fc\nparams:\n  layer: 2\n  node: 256\n  input: 256\n"
         "  output: 8\n  batch: 32\n  hosts: 2\n"
         "run: {max_seconds: 8, warmup_steps: 1, ci: 0.000001, min_steps: 1000, max_steps: "
         "100000}\n";
  CommandResult submit = cluster.Cli({"submit", dir.File("gang.yaml"), "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string& db = cluster.db_path();

  // Both ranks leased and training: each runner has joined the gang and
  // taken its first step (its log, forwarded by its worker, says so).
  ASSERT_TRUE(
      WaitFor([&] { return TryQueryInt(db, OpenAttempts()).value_or(0) == 2; }, seconds(180)))
      << cluster.Logs();
  ASSERT_TRUE(WaitFor(
      [&] {
        return cluster.WorkerLog(0).find("to the first step") != std::string::npos &&
               cluster.WorkerLog(1).find("to the first step") != std::string::npos;
      },
      seconds(60)))
      << cluster.Logs();
  const int64_t gang = QueryInt(db, "SELECT min(gang_id) FROM attempts");
  // Rank b's worker dies with its runner (the runner follows its parent).
  cluster.KillWorker(1);

  // Rank a ends its part within its collective timeout: the gang's
  // attempts are closed, no result is stored, the job waits for a gang.
  ASSERT_TRUE(WaitFor([&] { return QueryInt(db, OpenAttempts()) == 0; }, seconds(90)))
      << cluster.Logs();
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM results"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM attempts WHERE gang_id = " + std::to_string(gang)),
            2);
  const std::string why =
      QueryText(db, "SELECT group_concat(outcome, ' | ') FROM attempts WHERE gang_id = " +
                        std::to_string(gang));
  // The surviving rank saw its peer's connection close and said so
  // (GANG_BROKEN) before the dead worker's lease could expire.
  EXPECT_NE(why.find("gang broken: "), std::string::npos) << why << cluster.Logs();
  EXPECT_EQ(QueryInt(db, "SELECT state FROM jobs"), 1) << "pending again";  // JOB_PENDING
  CommandResult status = cluster.Cli({"status", "1"});
  EXPECT_NE(status.out.find("waiting"), std::string::npos) << status.out << status.err;

  // A new worker makes the gang possible again: retried whole, measured once.
  cluster.StartWorker("rank-c", {"--cpus", "0"});
  ASSERT_TRUE(
      WaitFor([&] { return QueryInt(db, "SELECT count(*) FROM results") == 1; }, seconds(240)))
      << cluster.Logs();
  EXPECT_EQ(QueryInt(db, "SELECT outcome FROM results"), 1);  // OK
  EXPECT_EQ(QueryInt(db, "SELECT attempts FROM jobs"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(DISTINCT gang_id) FROM attempts"), 2);
  cluster.Stop();
}

}  // namespace
}  // namespace paradnn::testing
