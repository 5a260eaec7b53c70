// The allreduce family end to end (issue 39, item 4): `paradnn local
// --workers 2` runs a sweep of message sizes over a gang of two with the
// real runner, the ranks joined by c10d Gloo across worker processes on
// loopback; every size stores one OK result whose data_parallel carries the
// all-reduce's bandwidths.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "paradnn/v1/metrics.pb.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

// Every stored result's Measurement (the results.measurement blobs).
std::vector<v1::Measurement> StoredMeasurements(const std::string& db_path) {
  std::vector<v1::Measurement> out;
  for (auto& [id, m] :
       QueryMeasurements(db_path, "SELECT id, measurement FROM results ORDER BY id")) {
    out.push_back(std::move(m));
  }
  return out;
}

TEST(AllReduceFamilyTest, ALocalSweepOfMessageSizesOverTwoHosts) {
  TempDir dir;
  const std::string sweep_file = dir.File("allreduce.yaml");
  const std::string db = dir.File("local.db");
  std::ofstream(sweep_file) << "name: allreduce-2\nfamily: allreduce\nparams:\n"
                               "  bytes: {values: [4096, 65536, 1048576]}\n"
                               "  hosts: 2\n"
                               "run: {max_seconds: 0.5, warmup_steps: 2}\n";
  CommandResult local = RunCommand(
      {BinDir() + "/paradnn", "local", sweep_file, "--db", db, "--workers", "2"}, seconds(240));
  ASSERT_EQ(local.exit_code, 0) << local.out << local.err;

  // What a user reads: one OK row per size.
  CommandResult results = RunCommand(
      {BinDir() + "/paradnn", "results", "1", "--db", db, "--format", "json"}, seconds(60));
  ASSERT_EQ(results.exit_code, 0) << results.err;
  const nlohmann::json rows = nlohmann::json::parse(results.out);
  ASSERT_EQ(rows.size(), 3u) << results.out;
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row.value("outcome", ""), "OK") << row.dump();
  }

  // What the analyses read: data_parallel of each stored result.
  const std::vector<v1::Measurement> stored = StoredMeasurements(db);
  ASSERT_EQ(stored.size(), 3u);
  std::set<int64_t> sizes;
  for (const v1::Measurement& m : stored) {
    SCOPED_TRACE(m.config().ShortDebugString());
    EXPECT_EQ(m.outcome(), v1::OK) << m.error();
    const v1::DataParallelStep& dp = m.data_parallel();
    EXPECT_EQ(dp.ranks(), 2);
    EXPECT_EQ(dp.backend(), "gloo");
    EXPECT_EQ(dp.allreduce_bytes(), m.config().params().at("bytes"));
    EXPECT_GT(dp.algorithm_bytes_per_sec(), 0);
    EXPECT_GT(dp.bus_bytes_per_sec(), 0);
    EXPECT_EQ(dp.compute_s(), 0);
    sizes.insert(dp.allreduce_bytes());
  }
  EXPECT_EQ(sizes, (std::set<int64_t>{4096, 65536, 1048576}));
  // Each job ran as one gang of two attempts, one per worker.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(DISTINCT worker_id) FROM attempts WHERE gang_id IS NOT "
                     "NULL"),
            2);
}

}  // namespace
}  // namespace paradnn::testing
