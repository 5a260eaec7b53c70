// A budgeted sweep on the real coordinator, worker and CLI (the fake runner
// in a known roofline world, FAKE_RUNNER_ROOFLINE): the budget ends on
// time, every configuration is measured or predicted and never both, the
// predictions are near the world's truth, predicted rows are never counted
// as measured (results, fleet goodput, exactly-once) and reach an analysis
// only when asked for; a later sweep of the same grid takes exactly what
// was measured, and --fresh measures everything again.
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

constexpr int kConfigurations = 4 * 6 * 2;
constexpr double kBudgetSeconds = 6;

// The fake runner's world (tests/unit/worker/fake_runner.cc).
double TrueStepSeconds(double layer, double node, double batch) {
  const double input = 64, output = 8;
  return 6 * (input * node + (layer - 1) * node * node + node * output) * batch / 1e11 + 1e-4;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// Every row says where its number comes from; predictions sit inside
// their intervals and near the world's truth.
void ExpectRowsSourcedAndNearTheTruth(Cluster& cluster, const std::string& id, int64_t measured,
                                      int64_t predicted) {
  CommandResult csv = cluster.Cli({"results", id, "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::stringstream lines(csv.out);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = SplitCsvLine(line);
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name << " in " << line;
    return size_t{0};
  };
  const size_t source = column("source"), median = column("step_median_ms");
  const size_t low = column("predicted_low_ms"), high = column("predicted_high_ms");
  const size_t layer = column("layer"), node = column("node"), batch = column("batch");
  int rows = 0, sourced_measured = 0, sourced_predicted = 0, near = 0;
  while (std::getline(lines, line)) {
    const std::vector<std::string> f = SplitCsvLine(line);
    ASSERT_GT(f.size(), high) << line;
    ++rows;
    if (f[source] == "measured") {
      ++sourced_measured;
      EXPECT_TRUE(f[low].empty()) << line;
      continue;
    }
    ASSERT_EQ(f[source], "predicted") << line;
    ++sourced_predicted;
    const double ms = std::stod(f[median]);
    EXPECT_LE(std::stod(f[low]), ms) << line;
    EXPECT_GE(std::stod(f[high]), ms) << line;
    const double truth =
        TrueStepSeconds(std::stod(f[layer]), std::stod(f[node]), std::stod(f[batch])) * 1e3;
    if (std::fabs(ms / truth - 1) <= 0.25) ++near;
  }
  EXPECT_EQ(rows, kConfigurations);
  EXPECT_EQ(sourced_measured, measured);
  EXPECT_EQ(sourced_predicted, predicted);
  EXPECT_GE(near, sourced_predicted * 8 / 10) << csv.out;
}

// The heat map of the budgeted sweep sees measurements only, unless asked
// to include the predictions; then every predicted job is in a cell.
void ExpectAnalysesCountPredictions(Cluster& cluster, const std::string& id, int64_t predicted) {
  const std::vector<std::string> heatmap = {"analyze",   "heatmap",  id,      "--x",
                                            "node",      "--y",      "batch", "--metric",
                                            "step_time", "--format", "json"};
  CommandResult measured_only = cluster.Cli(heatmap);
  ASSERT_EQ(measured_only.exit_code, 0) << measured_only.err;
  EXPECT_EQ(nlohmann::json::parse(measured_only.out)["predicted_results"].get<std::string>(), "0");
  std::vector<std::string> with = heatmap;
  with.push_back("--include-predicted");
  CommandResult all = cluster.Cli(with);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const nlohmann::json response = nlohmann::json::parse(all.out);
  EXPECT_EQ(response["results"].get<std::string>(), std::to_string(kConfigurations));
  EXPECT_EQ(response["predicted_results"].get<std::string>(), std::to_string(predicted));
  int64_t in_cells = 0;
  for (const auto& panel : response["heatmap"]["panels"]) {
    for (const auto& cell : panel["cells"]) {
      const int64_t n = std::stoll(cell["predicted_results"].get<std::string>());
      in_cells += n;
      if (n > 0) {
        EXPECT_LE(cell["predicted_low"].get<double>(), cell["predicted_high"].get<double>());
      }
    }
  }
  EXPECT_EQ(in_cells, predicted);
  with[with.size() - 2] = "table";  // --format table, with --include-predicted
  CommandResult table = cluster.Cli(with);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("~: the median includes predicted results"), std::string::npos)
      << table.out;
}

// The same grid again without a budget takes exactly what the budgeted
// sweep measured and runs the rest; --fresh runs everything.
void ExpectALaterSweepReusesWhatWasMeasured(Cluster& cluster, TempDir& dir, int64_t measured) {
  const std::string plain = dir.File("plain.yaml");
  std::ofstream(plain) << "name: plain\nfamily: fc\nparams:\n"
                          "  layer: {values: [1, 2, 4, 8]}\n"
                          "  node: {values: [16, 32, 64, 128, 256, 512]}\n"
                          "  input: 64\n  output: 8\n"
                          "  batch: {values: [8, 32]}\n";
  std::string id;
  CommandResult watch;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(plain, seconds(180), &id, {}, &watch));
  EXPECT_NE(watch.err.find(std::to_string(measured) + " of " + std::to_string(kConfigurations) +
                           " jobs took results measured by earlier sweeps"),
            std::string::npos)
      << watch.err;
  const std::string& db = cluster.db_path();
  const std::string of_sweep = " FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.sweep_id = ";
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_sweep + id), kConfigurations);
  // Each reused result names a job the budgeted sweep measured itself.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_sweep + id +
                             " AND r.reused_from_job_id IN (SELECT r1.job_id FROM results r1 "
                             "JOIN jobs j1 ON j1.id = r1.job_id WHERE j1.sweep_id != " +
                             id + " AND r1.reused_from_job_id IS NULL)"),
            measured);
  CommandResult status = cluster.Cli({"status", id});
  EXPECT_NE(status.out.find("taken from earlier sweeps"), std::string::npos) << status.out;

  std::string fresh_id;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(plain, seconds(180), &fresh_id, {"--fresh"}));
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_sweep + fresh_id), kConfigurations);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_sweep + fresh_id +
                             " AND r.reused_from_job_id IS NOT NULL"),
            0);
}

class BudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FAKE_RUNNER_ROOFLINE", "1", 1);
    // Each job then takes a while, so that the budget buys some of the grid only.
    setenv("FAKE_RUNNER_DELAY_MS", "400", 1);
  }
  void TearDown() override {
    unsetenv("FAKE_RUNNER_ROOFLINE");
    unsetenv("FAKE_RUNNER_DELAY_MS");
  }
};

TEST_F(BudgetTest, MeasuresSomePredictsTheRestAndEndsOnTime) {
  TempDir dir;
  Cluster cluster(dir);
  // No spot checks: the reuse below is counted exactly (a spot check would
  // measure one in 20 again; tests/unit/db/result_reuse_test.cc has them).
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator({"--reuse-spot-check-every", "0"}));
  ASSERT_NO_FATAL_FAILURE(cluster.StartWorker("b1", {"--runner", PARADNN_FAKE_RUNNER}));
  const std::string sweep = dir.File("budget.yaml");
  std::ofstream(sweep) << "name: budget\nfamily: fc\nparams:\n"
                          "  layer: {values: [1, 2, 4, 8]}\n"
                          "  node: {values: [16, 32, 64, 128, 256, 512]}\n"
                          "  input: 64\n  output: 8\n"
                          "  batch: {values: [8, 32]}\n"
                          "run: {budget: "
                       << kBudgetSeconds << "s}\n";
  std::string id;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(sweep, seconds(180), &id));

  const std::string& db = cluster.db_path();
  const int64_t measured = QueryInt(db, "SELECT COUNT(*) FROM results");
  const int64_t predicted = QueryInt(db, "SELECT COUNT(*) FROM predictions");
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM jobs WHERE state = 7"), predicted);
  EXPECT_EQ(measured + predicted, kConfigurations);
  // The design alone is 2(d+1) = 8 of the 48; the budget buys some more.
  EXPECT_GE(measured, 8);
  EXPECT_GT(predicted, 0) << "a 6 s budget at 0.4 s a job cannot measure all 48";
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM predictions p JOIN results r ON r.job_id = "
                     "p.job_id"),
            0)
      << "a job is measured or predicted, never both";
  // On time: no attempt starts after the budget (the planner looks every
  // second), and the predictions are stored right after it ends.
  const int64_t first = QueryInt(db, "SELECT MIN(started_unix_ms) FROM attempts");
  const int64_t last = QueryInt(db, "SELECT MAX(started_unix_ms) FROM attempts");
  const int64_t predicted_at = QueryInt(db, "SELECT MIN(created_unix_ms) FROM predictions");
  EXPECT_LE(last - first, kBudgetSeconds * 1000 + 1500);
  EXPECT_GE(predicted_at - first, kBudgetSeconds * 1000);
  EXPECT_LE(predicted_at - first, kBudgetSeconds * 1000 + 5000);

  ExpectRowsSourcedAndNearTheTruth(cluster, id, measured, predicted);

  // Fleet goodput counts the measured jobs only.
  CommandResult fleet = cluster.Cli({"fleet", "--sweep", id, "--format", "json"});
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  const nlohmann::json goodput = nlohmann::json::parse(fleet.out);
  EXPECT_EQ(goodput["total"]["jobs"].get<std::string>(), std::to_string(measured)) << fleet.out;

  CommandResult status = cluster.Cli({"status", id});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find(std::to_string(predicted) + " predicted"), std::string::npos)
      << status.out;

  // One configuration off the grid, answered with an interval and neighbours.
  CommandResult predict = cluster.Cli({"predict", id, "--config", "layer=3,node=100,batch=16"});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find("predicted step time"), std::string::npos) << predict.out;
  EXPECT_NE(predict.out.find("nearest measured"), std::string::npos) << predict.out;
  // Far beyond what was measured: answered, and said to be an extrapolation.
  CommandResult beyond = cluster.Cli({"predict", id, "--config", "layer=3,node=4096,batch=16"});
  ASSERT_EQ(beyond.exit_code, 0) << beyond.err;
  EXPECT_NE(beyond.out.find("warning: node 4096 is outside the measured "), std::string::npos)
      << beyond.out;
  CommandResult missing = cluster.Cli({"predict", id, "--config", "layer=3"});
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.err.find("missing 'batch'"), std::string::npos) << missing.err;

  ExpectAnalysesCountPredictions(cluster, id, predicted);
  ExpectALaterSweepReusesWhatWasMeasured(cluster, dir, measured);
  cluster.Stop();
}

}  // namespace
}  // namespace paradnn::testing
