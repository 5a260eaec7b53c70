// An analysis as large as a client can ask for, against a real coordinator:
// a heat map of 1,100 x 1,100 values (1.21 million cells, past the limit of
// one million) is refused with RESOURCE_EXHAUSTED naming the limit instead
// of being allocated, and the same process answers the next requests.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/platform_store.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"
#include "tests/support/synthetic_results.h"

namespace paradnn::testing {
namespace {

TEST(AnalysisBoundsTest, AHeatMapPastItsCellLimitIsRefusedAndTheCoordinatorServesOn) {
  TempDir dir;
  Cluster cluster(dir);
  int64_t sweep = 0;
  {
    absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(cluster.db_path());
    ASSERT_TRUE(database.ok()) << database.status();
    const int64_t platform =
        *db::PlatformStore(database->get()).UpsertSync(SyntheticPlatform("cpu-a", "cpu", 250e9));
    std::vector<SyntheticResult> results;
    for (int64_t i = 1; i <= 1100; ++i) {
      SyntheticResult r;
      r.params = {{"layer", 1 + i % 2}, {"node", i}, {"batch", i}};
      r.model_flops_per_sec = 1e9 * static_cast<double>(i);
      r.examples_per_sec = 100;
      results.push_back(r);
    }
    absl::StatusOr<int64_t> stored =
        StoreSyntheticSweep(database->get(), "wide", "cpu", results, platform, "cpu-worker");
    ASSERT_TRUE(stored.ok()) << stored.status();
    sweep = *stored;
  }
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  const std::string id = std::to_string(sweep);

  CommandResult refused =
      cluster.Cli({"analyze", "heatmap", id, "--x", "node", "--y", "batch", "--metric", "gflops"});
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.err.find("1210000 cells; at most 1000000"), std::string::npos) << refused.err;

  // The same process, still serving: a heat map within the limit (one row
  // per layer value) and the sweep's status.
  CommandResult allowed = cluster.Cli({"analyze", "heatmap", id, "--x", "node", "--y", "layer",
                                       "--metric", "gflops", "--format", "csv"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("1100"), std::string::npos) << allowed.out.substr(0, 400);
  CommandResult status = cluster.Cli({"status", id});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(cluster.CoordinatorLogs().find("listening on"), std::string::npos);
  EXPECT_EQ(cluster.CoordinatorLogs().find("terminate called"), std::string::npos);
  cluster.Stop();
}

}  // namespace
}  // namespace paradnn::testing
