// Repeats to a target interval, end to end on the real coordinator, worker
// and CLI with the fake runner: on a steady host every configuration
// reaches the target in the first 3 rounds and the held repeats are dropped;
// on a host drifting +-10 % over jobs (FAKE_RUNNER_DRIFT) the coordinator
// runs more rounds, and each configuration ends either within the target or
// at the repeat cap, as `paradnn results` says.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr int kGridConfigurations = 8;
constexpr const char* kGrid =
    "name: grid\nfamily: fc\nparams:\n"
    "  layer: 2\n  node: {values: [16, 32, 64, 128]}\n"
    "  input: 64\n  output: 8\n  batch: {values: [8, 32]}\n";

class TargetIntervalTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_RUNNER_ROOFLINE", "1", 1); }
  void TearDown() override {
    unsetenv("FAKE_RUNNER_ROOFLINE");
    unsetenv("FAKE_RUNNER_DRIFT");
  }

  // Submits `args` (a sweep and flags), waits for it; returns its id.
  static std::string SubmitAndWatch(Cluster* cluster, std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    args.push_back("-q");
    CommandResult submit = cluster->Cli(args);
    EXPECT_EQ(submit.exit_code, 0) << submit.err;
    const std::string id = submit.out.substr(0, submit.out.find('\n'));
    CommandResult watch = cluster->Cli({"watch", id}, seconds(120));
    EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err << cluster->Logs();
    return id;
  }

  static nlohmann::json Rows(Cluster* cluster, const std::string& id, bool jobs) {
    std::vector<std::string> args = {"results", id, "--format", "json"};
    if (jobs) args.push_back("--jobs");
    CommandResult result = cluster->Cli(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(result.out);
  }
};

TEST_F(TargetIntervalTest, ASteadyHostReachesTheTargetInTheFirstRounds) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("w1", {"--runner", PARADNN_FAKE_RUNNER});
  const std::string sweep = dir.File("grid.yaml");
  std::ofstream(sweep) << kGrid << "repeats: 6\n";

  CommandResult refused = cluster.Cli({"submit", sweep, "--target-interval", "3 percent"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--target-interval: '3 percent' is not a fraction"), std::string::npos)
      << refused.err;

  const std::string id = SubmitAndWatch(&cluster, {sweep, "--target-interval", "3%", "--fresh"});
  EXPECT_EQ(Rows(&cluster, id, /*jobs=*/true).size(), 3u * kGridConfigurations)
      << "3 rounds, the other 3 repeats dropped";
  const nlohmann::json rows = Rows(&cluster, id, /*jobs=*/false);
  ASSERT_EQ(rows.size(), static_cast<size_t>(kGridConfigurations));
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["target_status"], "reached") << row.dump();
    EXPECT_EQ(row["repeats"], 3) << row.dump();
    EXPECT_DOUBLE_EQ(row["target_pct"].get<double>(), 3) << row.dump();
    EXPECT_LE(row["mean_ci95_pct"].get<double>(), 3) << row.dump();
  }
}

TEST_F(TargetIntervalTest, ADriftingHostGetsMoreRoundsUpToTheCap) {
  TempDir dir;
  setenv("FAKE_RUNNER_DRIFT", dir.File("drift-counter").c_str(), 1);
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("w1", {"--runner", PARADNN_FAKE_RUNNER});
  const std::string sweep = dir.File("grid.yaml");
  std::ofstream(sweep) << kGrid << "repeats: 6\nrun: {target_interval: 4%, seed: 11}\n";
  const std::string id = SubmitAndWatch(&cluster, {sweep, "--fresh"});

  const nlohmann::json rows = Rows(&cluster, id, /*jobs=*/false);
  ASSERT_EQ(rows.size(), static_cast<size_t>(kGridConfigurations));
  int reached = 0, most_runs = 0;
  for (const nlohmann::json& row : rows) {
    const std::string status = row["target_status"];
    const int runs = row["repeats"];
    most_runs = std::max(most_runs, runs);
    EXPECT_GE(runs, 3) << row.dump();
    if (status == "reached") {
      ++reached;
      EXPECT_LE(row["mean_ci95_pct"].get<double>(), 4) << row.dump();
    } else {
      EXPECT_EQ(status, "repeat cap") << row.dump();
      EXPECT_EQ(runs, 6) << row.dump();
      EXPECT_GT(row["mean_ci95_pct"].get<double>(), 4) << row.dump();
    }
  }
  // +-10 % of drift: 3 runs give about +-8 %, so every configuration needs
  // more than the first rounds.
  EXPECT_GT(most_runs, 3);
  CommandResult table = cluster.Cli({"results", id});
  EXPECT_NE(table.out.find("target interval: " + std::to_string(reached) +
                           " of 8 configurations "
                           "reached it"),
            std::string::npos)
      << table.out;
}

}  // namespace
}  // namespace paradnn::testing
