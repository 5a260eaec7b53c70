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

// A coordinator and one worker capped at 3 GiB.
class OomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(cluster_.StartCoordinator());
    cluster_.StartWorker("capped", {"--memory-limit-mb", "3072"});
  }

  // Runs sweep `name` of two FC models, node 16, which fits, and node 16384
  // x input 16384: 1 GiB of weights per matrix, ~6 GiB with gradients and
  // RMSProp state, far over the cap. `extra` ends the sweep file.
  void RunOneThatFitsAndOneThatCannot(const std::string& name, const std::string& extra) {
    const std::string path = dir_.File(name + ".yaml");
    std::ofstream(path) << "name: " << name << "\nfamily: fc\nparams:\n  layer: 1\n"
                        << "  node: {values: [16, 16384]}\n  input: 16384\n  output: 16\n"
                        << "  batch: 8\nrun: {max_seconds: 0.5, warmup_steps: 1}\n"
                        << extra;
    std::string sweep;
    ASSERT_NO_FATAL_FAILURE(cluster_.SubmitAndWatch(path, seconds(300), &sweep));
  }

  TempDir dir_;
  Cluster cluster_{dir_};
};

TEST_F(OomTest, ModelOverTheMemoryCapIsAnOomResultAndTheSweepContinues) {
  // run_predicted_oom makes the coordinator run it anyway, so the runner
  // really hits the allocation failure.
  ASSERT_NO_FATAL_FAILURE(RunOneThatFitsAndOneThatCannot("oom", "run_predicted_oom: true\n"));

  EXPECT_EQ(QueryInt(cluster_.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "WHERE p.key = 'node' AND p.int_value = 16384 AND r.outcome = 2"),
            1)
      << "the oversized model should be an OOM result\n"
      << cluster_.Logs();
  EXPECT_EQ(QueryInt(cluster_.db_path(),
                     "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                     "WHERE p.key = 'node' AND p.int_value = 16 AND r.outcome = 1"),
            1);
  // The same worker ran both: it survived the OOM.
  EXPECT_EQ(QueryInt(cluster_.db_path(), "SELECT count(DISTINCT worker_id) FROM results"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster_.Stop());
}

TEST_F(OomTest, CoordinatorSkipsModelsPredictedNotToFit) {
  ASSERT_NO_FATAL_FAILURE(RunOneThatFitsAndOneThatCannot("predicted", ""));
  EXPECT_EQ(QueryInt(cluster_.db_path(), "SELECT count(*) FROM results WHERE outcome = 6"), 1)
      << "PREDICTED_OOM expected\n"
      << cluster_.Logs();
  EXPECT_EQ(QueryInt(cluster_.db_path(), "SELECT count(*) FROM results WHERE outcome = 1"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster_.Stop());
}

}  // namespace
}  // namespace paradnn::testing
