// A model that cannot fit under the worker's memory cap ends with outcome
// OOM; the worker survives and the sweep goes on to the next job.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

TEST(OomTest, ModelOverTheMemoryCapIsAnOomResultAndTheSweepContinues) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("capped", {"--memory-limit-mb", "3072"});
  // node 16384 x input 16384: 1 GiB of weights per matrix, ~6 GiB with
  // gradients and RMSProp state: far over the 3 GiB cap. node 16 fits.
  // run_predicted_oom makes the coordinator run it anyway, so the runner
  // really hits the allocation failure.
  const std::string path = dir.File("oom.yaml");
  std::ofstream(path) << "name: oom\nfamily: fc\nparams:\n  layer: 1\n"
                         "  node: {values: [16, 16384]}\n  input: 16384\n  output: 16\n  batch: 8\n"
                         "run: {max_seconds: 0.5, warmup_steps: 1}\nrun_predicted_oom: true\n";
  std::string sweep;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(path, seconds(300), &sweep));

  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "WHERE p.key = 'node' AND p.int_value = 16384 AND r.outcome = 2"),
            1)
      << "the oversized model should be an OOM result\n"
      << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "WHERE p.key = 'node' AND p.int_value = 16 AND r.outcome = 1"),
            1);
  // The same worker ran both: it survived the OOM.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(DISTINCT worker_id) FROM results"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST(OomTest, CoordinatorSkipsModelsPredictedNotToFit) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("capped", {"--memory-limit-mb", "3072"});
  const std::string path = dir.File("predicted.yaml");
  std::ofstream(path) << "name: predicted\nfamily: fc\nparams:\n  layer: 1\n"
                         "  node: {values: [16, 16384]}\n  input: 16384\n  output: 16\n  batch: 8\n"
                         "run: {max_seconds: 0.5, warmup_steps: 1}\n";
  std::string sweep;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(path, seconds(300), &sweep));
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE outcome = 6"), 1)
      << "PREDICTED_OOM expected\n"
      << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE outcome = 1"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
