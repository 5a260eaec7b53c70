// `paradnn local` stopped with Ctrl-C and run again: the real CLI, its
// private coordinator and worker on a SQLite file. The interrupted sweep is
// marked so in the file, a second run on the file meanwhile is refused
// (the file's lock), and the same command again continues the sweep: one
// sweep, every job measured once, instead of a new full sweep beside it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {
namespace {

using std::chrono::seconds;

constexpr int kJobs = 30;  // 6 widths x 5 batch sizes
constexpr int kSweepInterrupted = 4;
constexpr int kSweepDone = 2;

TEST(LocalResumeTest, CtrlCLeavesTheSweepInterruptedAndTheSameCommandContinuesIt) {
  TempDir dir;
  const std::string sweep_file = dir.File("resume.yaml");
  const std::string db = dir.File("local.db");
  std::ofstream(sweep_file) << "name: resume-me\nfamily: fc\nparams:\n  layer: 2\n"
                               "  node: {values: [16, 32, 64, 128, 256, 512]}\n"
                               "  input: 32\n  output: 8\n"
                               "  batch: {values: [4, 8, 16, 32, 64]}\n"
                               "run: {max_seconds: 0.3, warmup_steps: 1}\n";
  const std::vector<std::string> local = {BinDir() + "/paradnn", "local", sweep_file, "--db", db};

  ChildProcess first;
  first.Start(local, dir.File("first.log"));
  auto results = [&] { return QueryInt(db, "SELECT count(*) FROM results"); };
  // The private coordinator creates the file and then its tables: until then
  // the count is missing, not an error.
  ASSERT_TRUE(
      WaitFor([&] { return TryQueryInt(db, "SELECT count(*) FROM results").value_or(0) >= 3; },
              seconds(240)))
      << ReadFile(first.log_path());

  // The file is the running one's: a second run is refused, adding nothing.
  CommandResult second = RunCommand(local, seconds(60));
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("is in use"), std::string::npos) << second.err;

  first.Signal(SIGINT);
  std::optional<int> status = first.Wait(seconds(60));
  ASSERT_TRUE(status.has_value()) << "paradnn local did not stop after SIGINT";
  ASSERT_TRUE(WIFEXITED(*status)) << ReadFile(first.log_path());
  EXPECT_EQ(WEXITSTATUS(*status), 130) << ReadFile(first.log_path());
  const std::string log = ReadFile(first.log_path());
  EXPECT_NE(log.find("interrupted with"), std::string::npos) << log;
  EXPECT_NE(log.find("--resume"), std::string::npos) << log;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT state FROM sweeps"), kSweepInterrupted);
  const int64_t measured = results();
  ASSERT_LT(measured, kJobs) << "the sweep finished before the interrupt; nothing was resumed";

  CommandResult again = RunCommand(local, seconds(300));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find(absl::StrCat("continuing, ", measured, " of ", kJobs)),
            std::string::npos)
      << again.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT state FROM sweeps"), kSweepDone);
  EXPECT_EQ(results(), kJobs);
  EXPECT_EQ(QueryInt(db, "SELECT count(DISTINCT job_id) FROM results"), kJobs);

  // Nothing is left to resume now.
  CommandResult resume =
      RunCommand({BinDir() + "/paradnn", "local", "--resume", "--db", db}, seconds(60));
  EXPECT_EQ(resume.exit_code, 2) << resume.err;
  EXPECT_NE(resume.err.find("no interrupted sweep"), std::string::npos) << resume.err;
}

}  // namespace
}  // namespace paradnn::testing
