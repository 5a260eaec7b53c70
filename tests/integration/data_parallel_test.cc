// Data-parallel gangs end to end (issue 39): `paradnn local --workers 4
// --one-at-a-time` runs an FC sweep over params.hosts 1, 2 and 4 with the
// real runner, one job at a time, each
// gang's ranks joined by c10d Gloo across worker processes on loopback; the
// scale-out analysis and the report are drawn from what it stored.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr int kOk = 1;  // v1::OK

TEST(DataParallelTest, ALocalSweepOverHostsScalesOutAndIsAnalysed) {
  TempDir dir;
  const std::string sweep_file = dir.File("scale.yaml");
  const std::string db = dir.File("local.db");
  // Weak series (batch fixed per replica) and strong ones (batch x hosts
  // fixed) in one grid.
  std::ofstream(sweep_file) << "name: scale-out-fc\nfamily: fc\nparams:\n  layer: 2\n"
                               "  node: 128\n  input: 128\n  output: 16\n"
                               "  hosts: {values: [1, 2, 4]}\n"
                               "  batch: {values: [16, 32, 64]}\n"
                               "run: {max_seconds: 0.5, warmup_steps: 2}\n";
  // --one-at-a-time: no job timed beside another (a gang's ranks together).
  CommandResult local = RunCommand(
      {BinDir() + "/paradnn", "local", sweep_file, "--db", db, "--workers", "4", "--one-at-a-time"},
      seconds(540));
  ASSERT_EQ(local.exit_code, 0) << local.out << local.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM results"), 9);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM attempts a JOIN attempts b ON a.id < b.id AND "
                     "a.job_id != b.job_id AND a.started_unix_ms < b.finished_unix_ms AND "
                     "b.started_unix_ms < a.finished_unix_ms"),
            0)
      << QueryText(db,
                   "SELECT group_concat(job_id || ':' || worker_id || '@' || started_unix_ms || "
                   "'-' || finished_unix_ms, ' ') FROM attempts");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM results WHERE outcome = " + std::to_string(kOk)), 9)
      << QueryText(db, "SELECT group_concat(error, ' | ') FROM results");
  // Every hosts-4 job ran as one gang of four attempts, one per worker.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM attempts WHERE gang_rank = 3 AND outcome = 'OK'") +
                QueryInt(db,
                         "SELECT count(*) FROM attempts WHERE gang_rank = 3 AND outcome "
                         "LIKE 'gang: OK'"),
            3);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(DISTINCT worker_id) FROM attempts WHERE gang_id IS NOT "
                     "NULL"),
            4);

  CommandResult analysis = RunCommand(
      {BinDir() + "/paradnn", "analyze", "scale_out", "1", "--db", db, "--format", "json"},
      seconds(120));
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  const nlohmann::json response = nlohmann::json::parse(analysis.out).at("scale_out");
  EXPECT_EQ(response.value("field", ""), "hosts");
  EXPECT_GE(response.value("weak_series", 0), 3) << analysis.out;
  EXPECT_GE(response.value("strong_series", 0), 1) << analysis.out;
  std::set<std::string> backends;
  int gang_points = 0;
  for (const nlohmann::json& series : response.at("series")) {
    for (const nlohmann::json& point : series.at("points")) {
      if (point.value("n", 0) < 2) continue;
      ++gang_points;
      EXPECT_TRUE(point.value("data_parallel", false)) << point.dump();
      EXPECT_GT(point.value("bus_bytes_per_sec", 0.0), 0) << point.dump();
      EXPECT_GT(point.value("examples_per_sec", 0.0), 0) << point.dump();
      if (series.value("mode", "") != "neither") {
        EXPECT_TRUE(point.contains("efficiency")) << point.dump();
      }
      backends.insert(point.value("backend", ""));
    }
  }
  EXPECT_GT(gang_points, 0);
  EXPECT_EQ(backends, std::set<std::string>{"gloo"});

  CommandResult report =
      RunCommand({BinDir() + "/paradnn", "report", "1", "--db", db, "--out", dir.File("report")},
                 seconds(300));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(ReadFile(dir.File("report/index.html")).find("hosts"), std::string::npos);
}

TEST(DataParallelTest, LocalRefusesAGangLargerThanItsWorkers) {
  TempDir dir;
  const std::string sweep_file = dir.File("big.yaml");
  std::ofstream(sweep_file) << "name: too-big\nfamily: fc\nparams:\n  layer: 1\n  node: 8\n"
                               "  input: 8\n  output: 2\n  batch: 4\n"
                               "  hosts: {values: [1, 4]}\n";
  CommandResult local = RunCommand(
      {BinDir() + "/paradnn", "local", sweep_file, "--db", dir.File("big.db"), "--workers", "2"},
      seconds(60));
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_NE(local.err.find("params.hosts: 4"), std::string::npos) << local.err;
}

}  // namespace
}  // namespace paradnn::testing
