// Differences you can trust, end to end on the real coordinator, workers and
// CLI, with the fake runner's roofline world drifting on a schedule
// (FAKE_RUNNER_DRIFT: +-10 % over jobs, as a shared host wanders; each
// sweep's job order seeded, so each run draws the same) and a known
// change (FAKE_RUNNER_EFFECT=1.5): the re-run interval widens to the drift
// while the within-run interval sees none of it, `paradnn compare` calls
// every configuration of the changed sweep slower and none of the re-run
// sweep different (A/A), and `paradnn history` places the change.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr int kConfigurations = 8;

class VerdictsTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_RUNNER_ROOFLINE", "1", 1); }
  void TearDown() override {
    unsetenv("FAKE_RUNNER_ROOFLINE");
    unsetenv("FAKE_RUNNER_DRIFT");
    unsetenv("FAKE_RUNNER_EFFECT");
  }

  // Runs the grid once more (measured afresh) on a new worker started with
  // the environment as it is now, in a job order of its own seed; returns
  // the sweep id.
  std::string RunSweep(Cluster* cluster, const std::string& grid, const std::string& worker) {
    std::stringstream text;
    text << std::ifstream(grid).rdbuf();
    const std::string sweep = grid + "." + std::to_string(workers_started_) + ".yaml";
    std::ofstream(sweep) << text.str() << "run: {seed: " << 11 + workers_started_ << "}\n";
    cluster->StartWorker(worker, {"--runner", PARADNN_FAKE_RUNNER});
    std::string id;
    cluster->SubmitAndWatch(sweep, seconds(120), &id, {"--fresh"});
    // One worker at a time: the next sweep runs with the next environment.
    cluster->KillWorker(workers_started_++);
    return id;
  }

  size_t workers_started_ = 0;
};

// A count of the response: proto3 JSON writes int64 as a string, and
// leaves out zero.
int64_t Count(const nlohmann::json& response, const char* name) {
  if (!response.contains(name)) return 0;
  const nlohmann::json& value = response[name];
  return value.is_string() ? std::stoll(value.get<std::string>()) : value.get<int64_t>();
}

nlohmann::json Json(const CommandResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

TEST_F(VerdictsTest, DriftWidensTheIntervalsAndTheVerdictsStayRight) {
  TempDir dir;
  setenv("FAKE_RUNNER_DRIFT", dir.File("drift-counter").c_str(), 1);
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  const std::string sweep = dir.File("grid.yaml");
  std::ofstream(sweep) << "name: grid\nfamily: fc\nparams:\n"
                          "  layer: 2\n  node: {values: [16, 32, 64, 128]}\n"
                          "  input: 64\n  output: 8\n  batch: {values: [8, 32]}\n"
                          "repeats: 3\n";
  const std::string before = RunSweep(&cluster, sweep, "w1");
  const std::string again = RunSweep(&cluster, sweep, "w2");

  // The re-run interval holds the host's drift (6 runs a configuration so
  // far); the run's own sees none of it.
  const nlohmann::json rows = Json(cluster.Cli({"results", before, "--jobs", "--format", "json"}));
  ASSERT_EQ(rows.size(), 3u * kConfigurations);
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["rerun_basis"], "re-runs") << row.dump();
    EXPECT_GT(row["rerun_pct"].get<double>(), 8) << row.dump();
    EXPECT_LT(row["rerun_pct"].get<double>(), 60) << row.dump();
    EXPECT_LT(row["step_ci95_pct"].get<double>(), 1) << row.dump();
    EXPECT_GT(row["host_speed_pct"].get<double>(), 80) << row.dump();
  }

  setenv("FAKE_RUNNER_EFFECT", "1.5", 1);
  const std::string changed = RunSweep(&cluster, sweep, "w3");
  RunSweep(&cluster, sweep, "w4");

  // A known 1.5x change: every configuration slower, the geomean near it.
  const nlohmann::json ab =
      Json(cluster.Cli({"compare", before, changed, "--format", "json"}))["speedup"];
  EXPECT_EQ(Count(ab, "slower"), kConfigurations) << ab.dump();
  EXPECT_NEAR(ab["geomean_speedup"].get<double>(), 1 / 1.5, 0.05);
  EXPECT_LT(ab["geomean_high"].get<double>(), 1);
  for (const nlohmann::json& point : ab["points"]) {
    EXPECT_EQ(point["verdict"], "slower");
    // 3 rounds a configuration: each one's spread moderated by the others'.
    EXPECT_EQ(point["interval_basis"], "paired rounds, pooled spread");
  }
  // The same stack measured again. At a 5 % FDR with nothing different, a
  // comparison of 8 calls one or more different about 6 % of the time on
  // this drift, two ~1 % (comparison_stats_test.cc); the seeded job orders
  // make this run one fixed draw of it.
  const nlohmann::json aa =
      Json(cluster.Cli({"compare", before, again, "--format", "json"}))["speedup"];
  EXPECT_LE(Count(aa, "faster") + Count(aa, "slower"), 1) << aa.dump();
  EXPECT_LT(aa["geomean_low"].get<double>(), 1);
  EXPECT_GT(aa["geomean_high"].get<double>(), 1);
  // The table says it in words.
  CommandResult table = cluster.Cli({"compare", before, changed});
  EXPECT_NE(table.out.find("verdicts: 8 slower (false discovery rate 5 %"), std::string::npos)
      << table.out;

  // History: 12 runs a configuration, the last 6 slower: one change each,
  // at run 7, on one stack (the fake platform's).
  const nlohmann::json history = Json(cluster.Cli({"history", "--format", "json"}))["history"];
  ASSERT_EQ(history["series"].size(), static_cast<size_t>(kConfigurations));
  for (const nlohmann::json& series : history["series"]) {
    EXPECT_EQ(series["points"].size(), 12u);
    ASSERT_EQ(series["changes"].size(), 1u) << series.dump();
    const nlohmann::json& change = series["changes"][0];
    EXPECT_EQ(change["index"], 6);
    // 1.5x under a drift of up to +-12 % a run, 6 runs a side: the
    // estimate lands between 1.5 x 0.88 / 1.12 and 1.5 x 1.12 / 0.88.
    EXPECT_GT(change["ratio"].get<double>(), 1.18);
    EXPECT_LT(change["ratio"].get<double>(), 1.91);
    EXPECT_GT(change["low"].get<double>(), 1.05);
  }
  CommandResult history_table = cluster.Cli({"history"});
  EXPECT_NE(history_table.out.find("on one stack (the host, not the software)"), std::string::npos)
      << history_table.out;
}

}  // namespace
}  // namespace paradnn::testing
