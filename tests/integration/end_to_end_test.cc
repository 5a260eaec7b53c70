// The whole path on loopback: a real paradnn-coordinator, two real
// paradnn-worker processes (each running real paradnn-runner children), the
// paradnn CLI, and the SQLite file they leave behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/cpu_list.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Splits one CSV record (RFC 4180 quoting).
std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// NOLINTNEXTLINE(readability-function-size): one scenario whose steps share the processes.
TEST(EndToEndTest, QuickSweepOnTwoWorkersStoresOneResultPerJob) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  // Disjoint CPUs where the host has two, so that both measure at once
  // (workers of one host whose CPUs overlap take turns).
  const std::vector<int> cpus = common::AllowedCpus();
  auto own_cpu = [&cpus](size_t i) {
    return cpus.size() >= 2 ? std::vector<std::string>{"--cpus", std::to_string(cpus[i])}
                            : std::vector<std::string>{};
  };
  cluster.StartWorker("it-worker-1", own_cpu(0));
  cluster.StartWorker("it-worker-2", own_cpu(1));

  std::string sweep_id;
  ASSERT_NO_FATAL_FAILURE(
      cluster.SubmitAndWatch(SourceDir() + "/examples/quick.yaml", seconds(420), &sweep_id));
  ASSERT_FALSE(sweep_id.empty());
  ASSERT_GT(std::stoll(sweep_id), 0);

  const int64_t jobs =
      QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE sweep_id = " + sweep_id);
  EXPECT_GE(jobs, 12);
  EXPECT_LE(jobs, 20);
  // Exactly one stored result per job, none orphaned.
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id "
                     "WHERE j.sweep_id = " +
                         sweep_id),
            jobs);
  EXPECT_EQ(
      QueryInt(
          cluster.db_path(),
          "SELECT count(*) FROM (SELECT job_id FROM results GROUP BY job_id HAVING count(*) > 1)"),
      0);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE examples_per_sec <= 0"),
            0);
  EXPECT_GT(QueryInt(cluster.db_path(), "SELECT count(*) FROM samples"), jobs);

  CommandResult json_out = cluster.Cli({"results", sweep_id, "--format", "json"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  nlohmann::json rows = nlohmann::json::parse(json_out.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(static_cast<int64_t>(rows.size()), jobs);
  std::map<std::string, int> per_worker;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("outcome"), "OK") << row.dump();
    EXPECT_GT(row.at("examples_per_sec").get<double>(), 0) << row.dump();
    EXPECT_TRUE(row.at("node").is_number()) << row.dump();
    EXPECT_TRUE(row.at("batch").is_number()) << row.dump();
    per_worker[row.at("worker").get<std::string>()]++;
  }
  if (cpus.size() >= 2) {
    EXPECT_EQ(per_worker.size(), 2u) << "both workers should have run jobs";
  }

  CommandResult csv_out = cluster.Cli({"results", sweep_id, "--format", "csv"});
  ASSERT_EQ(csv_out.exit_code, 0) << csv_out.err;
  std::istringstream csv(csv_out.out);
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  const std::vector<std::string> header = SplitCsvLine(line);
  EXPECT_NE(std::find(header.begin(), header.end(), "examples_per_sec"), header.end());
  EXPECT_NE(std::find(header.begin(), header.end(), "layer"), header.end());
  int data_lines = 0;
  while (std::getline(csv, line)) {
    if (line.empty()) continue;
    EXPECT_EQ(SplitCsvLine(line).size(), header.size()) << line;
    ++data_lines;
  }
  EXPECT_EQ(data_lines, jobs);

  CommandResult workers = cluster.Cli({"workers"});
  ASSERT_EQ(workers.exit_code, 0) << workers.err;
  EXPECT_NE(workers.out.find("it-worker-1"), std::string::npos) << workers.out;
  EXPECT_NE(workers.out.find("it-worker-2"), std::string::npos) << workers.out;

  ASSERT_NO_FATAL_FAILURE(cluster.Stop());

  // A coordinator started later on the same file serves the same results.
  Cluster again(dir);
  ASSERT_NO_FATAL_FAILURE(again.StartCoordinator());
  CommandResult json_again = again.Cli({"results", sweep_id, "--format", "json"});
  ASSERT_EQ(json_again.exit_code, 0) << json_again.err;
  EXPECT_EQ(nlohmann::json::parse(json_again.out).size(), rows.size());
  CommandResult status = again.Cli({"status", sweep_id});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  ASSERT_NO_FATAL_FAILURE(again.Stop());
}

TEST(EndToEndTest, BadSweepIsRefusedByCliAndCoordinatorWithoutTouchingTheStore) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  std::ofstream(dir.File("good.yaml"))
      << "name: tiny\nfamily: fc\nparams: {layer: 1, node: 8, input: 8, "
         "output: 4, batch: 4}\nrun: {max_seconds: 0.2}\n";
  CommandResult good = cluster.Cli({"submit", dir.File("good.yaml"), "-q"});
  ASSERT_EQ(good.exit_code, 0) << good.err;

  cluster.ExpectSubmitRefused("bad.yaml",
                              "name: bad\nfamily: fc\nparams:\n  layer: 4\n"
                              "  node: {min: 512, max: 32, mul: 2}\n  input: 8\n  output: 4\n"
                              "  batch: 4\n",
                              "params.node");
  cluster.ExpectSubmitRefused("unknown.yaml",
                              "name: u\nfamily: fc\nparams: {layer: 1, node: 8, input: 8, "
                              "output: 4, batch: 4, depth: 3}\n",
                              "depth");

  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST(EndToEndTest, LocalRunsASweepWithEmbeddedCoordinatorAndWorker) {
  TempDir dir;
  std::ofstream(dir.File("two.yaml"))
      << "name: two\nfamily: fc\nparams:\n  layer: 2\n"
         "  node: {values: [16, 32]}\n  input: 32\n  output: 8\n  batch: 16\n"
         "run: {max_seconds: 0.3, warmup_steps: 1}\n";
  CommandResult local = RunCommand({BinDir() + "/paradnn", "local", dir.File("two.yaml"), "--db",
                                    dir.File("local.db"), "--format", "json"},
                                   seconds(240));
  ASSERT_EQ(local.exit_code, 0) << local.out << local.err;
  EXPECT_EQ(QueryInt(dir.File("local.db"), "SELECT count(*) FROM results WHERE outcome = 1"), 2);
  EXPECT_NE(local.out.find("examples_per_sec"), std::string::npos) << local.out;
}

TEST(EndToEndTest, RepeatsAndProfilesAreStoredAndShown) {
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("rp-worker-1");
  std::ofstream(dir.File("rp.yaml")) << "name: rp\nfamily: fc\nparams:\n  layer: 2\n"
                                        "  node: {values: [64, 256]}\n  input: 256\n  output: 16\n"
                                        "  batch: 64\nrepeats: 3\nprofile: true\n"
                                        "run: {max_seconds: 0.3, warmup_steps: 1}\n";
  std::string sweep_id;
  ASSERT_NO_FATAL_FAILURE(cluster.SubmitAndWatch(dir.File("rp.yaml"), seconds(300), &sweep_id));

  // 2 configurations x 3 repeats, every round finished before the next began.
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN jobs j ON "
                     "j.id = r.job_id WHERE r.outcome = 1"),
            6);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(DISTINCT repeat) FROM jobs"), 3);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM jobs a JOIN jobs b ON a.repeat < b.repeat "
                     "JOIN results ra ON ra.job_id = a.id JOIN results rb ON rb.job_id = b.id "
                     "WHERE ra.created_unix_ms > rb.created_unix_ms"),
            0);

  // Default view: one row per configuration with the spread across repeats.
  CommandResult summary = cluster.Cli({"results", sweep_id, "--format", "json"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const nlohmann::json configs = nlohmann::json::parse(summary.out);
  ASSERT_EQ(configs.size(), 2u) << summary.out;
  for (const nlohmann::json& row : configs) {
    EXPECT_EQ(row["repeats_ok"], 3) << row;
    EXPECT_LE(row["examples_per_sec_min"].get<double>(),
              row["examples_per_sec_median"].get<double>());
    EXPECT_GE(row["examples_per_sec_max"].get<double>(),
              row["examples_per_sec_median"].get<double>());
    EXPECT_TRUE(row["cv_pct"].is_number()) << row;
  }
  CommandResult jobs = cluster.Cli({"results", sweep_id, "--jobs", "--format", "json"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(nlohmann::json::parse(jobs.out).size(), 6u);

  // Every job was profiled; the GEMMs lead the breakdown of each.
  CommandResult ops = cluster.Cli({"results", sweep_id, "--ops", "--top", "3", "--format", "json"});
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  const nlohmann::json op_rows = nlohmann::json::parse(ops.out);
  ASSERT_EQ(op_rows.size(), 6u * 3) << ops.out;
  int matmul_rows = 0;
  for (const nlohmann::json& row : op_rows) {
    const std::string name = row["operator"];
    if (name == "aten::mm" || name == "aten::addmm") ++matmul_rows;
    EXPECT_GT(row["self_share_pct"].get<double>(), 0) << row;
  }
  EXPECT_GE(matmul_rows, 6) << ops.out;
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

}  // namespace
}  // namespace paradnn::testing
