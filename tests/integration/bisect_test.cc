// `paradnn bisect` end to end on the real coordinator, worker and CLI, with
// the fake runner's roofline world drifting on a schedule (FAKE_RUNNER_DRIFT:
// +-10 % over jobs) and one guilty setting (FAKE_RUNNER_GUILTY: the step
// twice as long under OMP_WAIT_POLICY=passive, read from the runner's own
// environment, so the worker must have set it): of three differing settings
// bisect names that one, in fewer measurements than testing each setting
// alone; stacks that do not differ in speed are said not to; a setting
// outside the allowlist is refused before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

// One-at-a-time testing of each of the three settings against A with the
// reference's 4 rounds would take 3 x 8 measurements.
constexpr size_t kOneAtATimeMeasurements = 24;

class BisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FAKE_RUNNER_ROOFLINE", "1", 1);
    setenv("FAKE_RUNNER_DRIFT", dir_.File("drift-counter").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FAKE_RUNNER_ROOFLINE");
    unsetenv("FAKE_RUNNER_DRIFT");
    unsetenv("FAKE_RUNNER_GUILTY");
  }

  // A coordinator and one worker started with the environment as it is now;
  // the one-configuration sweep file's path.
  std::string Start(Cluster* cluster) {
    EXPECT_NO_FATAL_FAILURE(cluster->StartCoordinator());
    cluster->StartWorker("w1", {"--runner", PARADNN_FAKE_RUNNER});
    const std::string sweep = dir_.File("fc.yaml");
    std::ofstream(sweep) << "name: fc\nfamily: fc\nparams:\n  layer: 2\n  node: 256\n"
                            "  input: 64\n  output: 8\n  batch: 32\n";
    return sweep;
  }

  CommandResult Bisect(Cluster* cluster, const std::string& sweep, const std::string& format) {
    return cluster->Cli({"bisect", sweep, "--good", "blas_core=Haswell,intra_op_threads=2", "--bad",
                         "blas_core=Prescott,intra_op_threads=1", "--bad",
                         "env.OMP_WAIT_POLICY=passive", "--format", format},
                        seconds(300));
  }

  TempDir dir_;
};

TEST_F(BisectTest, NamesTheOneGuiltySettingOfThreeInFewerMeasurementsThanOneAtATime) {
  setenv("FAKE_RUNNER_GUILTY", "env.OMP_WAIT_POLICY=passive:2.0", 1);
  Cluster cluster(dir_);
  const std::string sweep = Start(&cluster);
  const CommandResult run = Bisect(&cluster, sweep, "json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err << cluster.Logs();
  const nlohmann::json report = nlohmann::json::parse(run.out);
  const nlohmann::json& result = report["result"];
  EXPECT_EQ(result["outcome"], "culprits found") << result.dump(2);
  EXPECT_EQ(result["culprits"], nlohmann::json::array({"env.OMP_WAIT_POLICY"}));
  EXPECT_EQ(result["differing"],
            nlohmann::json::array({"blas_core", "env.OMP_WAIT_POLICY", "intra_op_threads"}));
  // 2x under a drift of up to +-12 % a job, cancelled by the rounds.
  EXPECT_GT(result["culprit_effect"]["ratio"].get<double>(), 1.7);
  EXPECT_LT(result["culprit_effect"]["ratio"].get<double>(), 2.3);
  EXPECT_GT(result["culprit_effect"]["low"].get<double>(), 1.3);
  EXPECT_GT(result["culprit_share"].get<double>(), 0.8);

  const nlohmann::json& measurements = report["measurements"];
  EXPECT_EQ(result["measurements"].get<size_t>(), measurements.size());
  EXPECT_LT(measurements.size(), kOneAtATimeMeasurements) << run.err;
  for (const nlohmann::json& m : measurements) {
    EXPECT_FALSE(m["step_seconds"].empty()) << m.dump();
    EXPECT_EQ(m["worker"], "w1");
  }
  // A progress line per measurement, in order.
  EXPECT_THAT(run.err, HasSubstr("bisect: measurement 1 (round 0, A): median step"));
  EXPECT_THAT(run.err,
              HasSubstr("bisect: measurement " + std::to_string(measurements.size()) + " (round "));

  // Each measurement is a sweep whose configuration records its settings
  // (stack.env.NAME), so results and analyses can pivot on them.
  const nlohmann::json& b = measurements[1];
  ASSERT_EQ(b["mix"], "B");
  const CommandResult rows = cluster.Cli(
      {"results", std::to_string(b["sweep_id"].get<int64_t>()), "--jobs", "--format", "json"});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  const nlohmann::json row = nlohmann::json::parse(rows.out).at(0);
  EXPECT_EQ(row["stack.env.OMP_WAIT_POLICY"], "passive") << row.dump();
  EXPECT_EQ(row["stack.blas_core"], "Prescott") << row.dump();
}

TEST_F(BisectTest, StacksThatDoNotDifferInSpeedAreSaidToBe) {
  Cluster cluster(dir_);
  const std::string sweep = Start(&cluster);
  const CommandResult run = Bisect(&cluster, sweep, "table");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err << cluster.Logs();
  EXPECT_THAT(run.out, HasSubstr("outcome: no difference detected between the stacks\n"));
  // The reference rounds only: 4 of A and 4 of B.
  EXPECT_THAT(run.out, HasSubstr("measurements: 8 (A 4, B 4, probes 0)"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("culprit")));
}

TEST_F(BisectTest, ASettingOutsideTheAllowlistIsRefusedBeforeAnythingRuns) {
  Cluster cluster(dir_);
  const std::string sweep = Start(&cluster);
  const CommandResult run = cluster.Cli({"bisect", sweep, "--good", "blas_core=Haswell", "--bad",
                                         "blas_core=Prescott,env.LD_PRELOAD=/tmp/x.so"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.err,
              HasSubstr("--bad env.LD_PRELOAD: LD_PRELOAD is not a performance variable "
                        "a sweep may set (PRELOAD: it names what to load or write); allowed: "
                        "env.NAME with NAME starting with OMP_"));
  // Nor does `paradnn submit` take such a sweep file (the coordinator
  // checks the same way: model/sweep.cc, and the worker again).
  const std::string evil = dir_.File("evil.yaml");
  std::ofstream(evil) << "name: evil\nfamily: fc\nparams:\n  layer: 1\n  node: 8\n  input: 8\n"
                         "  output: 8\n  batch: 8\nstack:\n  env.LD_PRELOAD: x.so\n";
  const CommandResult submit = cluster.Cli({"submit", evil});
  EXPECT_EQ(submit.exit_code, 2) << submit.out << submit.err;
  EXPECT_THAT(submit.err, HasSubstr("evil.yaml:10: stack.env.LD_PRELOAD: LD_PRELOAD is not"));
  const CommandResult status = cluster.Cli({"status", "--format", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_TRUE(nlohmann::json::parse(status.out).empty()) << status.out;
}

}  // namespace
}  // namespace paradnn::testing
