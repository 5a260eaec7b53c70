// The child-process pieces of `paradnn local`, driven with small shell
// scripts standing in for paradnn-coordinator and paradnn-worker.
#include "client/local_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/interrupt.h"
#include "client/local_startup.h"
#include "tests/support/temp_file.h"
#include "tests/support/wait_for.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using SteadyClock = std::chrono::steady_clock;

// How often the tests look at the fake processes' files.
constexpr std::chrono::milliseconds kPoll(10);

// Parses the flags paradnn local passes, writes the arguments it got beside
// the address file, then serves until SIGTERM.
constexpr const char* kFakeCoordinator = R"(#!/bin/sh
listen=""; file=""
for a in "$@"; do echo "$a" >> "$(dirname "$0")/coordinator.args"; done
while [ $# -gt 0 ]; do
  case "$1" in
    --listen) listen="$2"; shift ;;
    --address-file) file="$2"; shift ;;
  esac
  shift
done
echo "fake coordinator listening on $listen" >&2
printf '%s\n' "$listen" > "$file.tmp" && mv "$file.tmp" "$file"
trap 'echo stopping >&2; exit 0' TERM
while :; do sleep 0.05; done
)";

constexpr const char* kFailingCoordinator = R"(#!/bin/sh
echo "cannot open database: disk on fire" >&2
exit 4
)";

constexpr const char* kFakeWorker = R"(#!/bin/sh
echo "$@" >> "$(dirname "$0")/worker.args"
trap 'exit 0' TERM
while :; do sleep 0.05; done
)";

// Ignores SIGTERM: must be killed after the grace period. The file it
// touches says the trap is in place (a SIGTERM before it would end it).
constexpr const char* kStubbornWorker = R"(#!/bin/sh
trap '' TERM
touch "$(dirname "$0")/worker.ignores-term"
while :; do sleep 0.05; done
)";

// Logs, as a refused worker does, a warning on every retry.
constexpr const char* kRefusedWorker = R"sh(#!/bin/sh
trap 'exit 0' TERM
echo "[2026-12-06 15:12:45.039] [paradnn-worker] [info] probing the host" >&2
while :; do
  echo "[2026-12-06 15:12:45.204] [paradnn-worker] [warning] cannot reach the coordinator (INVALID_ARGUMENT: refused)" >&2
  sleep 0.05
done
)sh";

constexpr const char* kCrashingWorker = R"(#!/bin/sh
echo "worker gave up: no runner" >&2
exit 3
)";

class LocalRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/paradnn-local-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteScript(const std::string& name, const char* text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ASSERT_EQ(chmod(path.c_str(), 0755), 0);
  }

  LocalOptions Options(int workers) {
    LocalOptions options;
    options.bin_dir = dir_;
    options.db_path = dir_ + "/test.db";
    options.workers = workers;
    options.startup_timeout = std::chrono::seconds(10);
    options.stop_grace = std::chrono::seconds(1);
    return options;
  }

  // Whether `name` appeared in the folder within `timeout`.
  bool WaitForFile(const std::string& name, std::chrono::seconds timeout) {
    return testing::WaitFor([&] { return std::filesystem::exists(dir_ + "/" + name); }, timeout,
                            kPoll);
  }

  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::string dir_;
};

TEST_F(LocalRunnerTest, StartsCoordinatorAndWorkersAndStopsThem) {
  WriteScript("paradnn-coordinator", kFakeCoordinator);
  WriteScript("paradnn-worker", kFakeWorker);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(Options(2), "cpu", nullptr);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string address = (*cluster)->address();
  EXPECT_THAT(address, ::testing::StartsWith("unix:/"));
  EXPECT_THAT(address, ::testing::EndsWith("/coordinator.sock"));
  const std::string temp_dir = std::filesystem::path(address.substr(5)).parent_path().string();
  EXPECT_TRUE(std::filesystem::is_directory(temp_dir));
  EXPECT_TRUE((*cluster)->CheckAlive().ok());

  const std::string coordinator_args = Read("coordinator.args");
  EXPECT_THAT(coordinator_args, HasSubstr("--db\n" + dir_ + "/test.db\n"));
  EXPECT_THAT(coordinator_args, HasSubstr("--address-file\n"));
  // Workers start after the address is known; wait for both to have run.
  std::string worker_args;
  testing::WaitFor(
      [&] {
        worker_args = Read("worker.args");
        return std::count(worker_args.begin(), worker_args.end(), '\n') >= 2;
      },
      std::chrono::seconds(10), kPoll);
  EXPECT_THAT(worker_args, HasSubstr("--coordinator " + address +
                                     " --worker-id local-1-cpu "
                                     "--device cpu"));
  EXPECT_THAT(worker_args, HasSubstr("--worker-id local-2-cpu"));

  EXPECT_TRUE((*cluster)->Stop().ok());
  EXPECT_FALSE(std::filesystem::exists(temp_dir));
  EXPECT_TRUE((*cluster)->Stop().ok());  // idempotent
}

TEST_F(LocalRunnerTest, ReportsACoordinatorThatExitsBeforeListening) {
  WriteScript("paradnn-coordinator", kFailingCoordinator);
  WriteScript("paradnn-worker", kFakeWorker);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(Options(1), "cpu", nullptr);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(cluster.status().message()),
              HasSubstr("paradnn-coordinator stopped before it listened (exited with status 4)"));
  EXPECT_THAT(std::string(cluster.status().message()), HasSubstr("disk on fire"));
  EXPECT_EQ(Read("worker.args"), "");
}

TEST_F(LocalRunnerTest, MissingBinariesAreNamed) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(Options(1), "cpu", nullptr);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(cluster.status().message()), HasSubstr("paradnn-coordinator"));
}

TEST_F(LocalRunnerTest, NoticesADeadWorkerAndKillsAStubbornOne) {
  WriteScript("paradnn-coordinator", kFakeCoordinator);
  WriteScript("paradnn-worker", kCrashingWorker);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(Options(1), "cpu", nullptr);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::Status alive;
  testing::WaitFor([&] { return !(alive = (*cluster)->CheckAlive()).ok(); },
                   std::chrono::seconds(10), kPoll);
  EXPECT_EQ(alive.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(alive.message()),
              HasSubstr("paradnn-worker local-1-cpu stopped (exited with status 3)"));
  EXPECT_THAT(std::string(alive.message()), HasSubstr("no runner"));
  (*cluster)->Stop().IgnoreError();

  WriteScript("paradnn-worker", kStubbornWorker);
  cluster = LocalCluster::Start(Options(1), "cuda", nullptr);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE(WaitForFile("worker.ignores-term", std::chrono::seconds(10)));
  absl::Status stopped = (*cluster)->Stop();
  EXPECT_THAT(std::string(stopped.message()),
              HasSubstr("paradnn-worker local-1-cuda did not stop within 1 s and was killed"));
}

// paradnn local says how many workers connected and what a missing one's
// log last warned of, once per new warning, rather than wait silently.
TEST_F(LocalRunnerTest, SaysWhichWorkersAreMissingAndWhatTheyLastWarned) {
  WriteScript("paradnn-coordinator", kFakeCoordinator);
  WriteScript("paradnn-worker", kRefusedWorker);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(Options(2), "cpu", nullptr);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ((*cluster)->WorkerLogs().size(), 2u);
  for (const LocalCluster::WorkerLog& worker : (*cluster)->WorkerLogs()) {
    ASSERT_TRUE(testing::WaitFor(
        [&] { return FileTail(worker.log_path).find("[warning]") != std::string::npos; },
        std::chrono::seconds(10), kPoll))
        << worker.name;
  }
  std::vector<v1::WorkerInfo> listed(2);
  listed[0].set_worker_id("local-1-cpu");
  listed[0].set_connected(true);
  listed[1].set_worker_id("local-2-cpu");
  std::ostringstream err;
  CommandContext ctx;
  ctx.err = &err;
  WorkerStartReport report(std::chrono::seconds(0));
  report.MaybeSay(ctx, **cluster, listed, 2);
  EXPECT_THAT(err.str(), HasSubstr("paradnn: 1 of 2 local workers connected after "));
  EXPECT_THAT(err.str(), HasSubstr("  paradnn-worker local-2-cpu: cannot reach the coordinator "
                                   "(INVALID_ARGUMENT: refused)\n"));
  EXPECT_THAT(err.str(), Not(HasSubstr("local-1-cpu:")));
  // The same warning again is not repeated; all connected says nothing.
  err.str("");
  report.MaybeSay(ctx, **cluster, listed, 2);
  EXPECT_THAT(err.str(), Not(HasSubstr("local-2-cpu:")));
  listed[1].set_connected(true);
  err.str("");
  report.MaybeSay(ctx, **cluster, listed, 2);
  EXPECT_EQ(err.str(), "");
}

TEST(LastWarningOfLogTest, TakesTheLastWarningOrErrorWithoutItsStamp) {
  EXPECT_EQ(LastWarningOfLog("[t] [w] [warning] first\n[t] [w] [error] second\n[t] [w] [info] x"),
            "second");
  EXPECT_EQ(LastWarningOfLog("[t] [w] [info] only info"), "");
  EXPECT_EQ(LastWarningOfLog(""), "");
}

TEST(ChildProcessTest, ExitStatusLogAndExecFailure) {
  char pattern[] = "/tmp/paradnn-child-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start("sh", {"/bin/sh", "-c", "echo out; echo err >&2; exit 5"}, dir + "/log");
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_TRUE((*child)->WaitUntil(SteadyClock::now() + std::chrono::seconds(10)));
  EXPECT_FALSE((*child)->Running());
  EXPECT_EQ((*child)->ExitDescription(), "exited with status 5");
  EXPECT_FALSE((*child)->ExitedCleanly());
  EXPECT_EQ(FileTail(dir + "/log"), "out\nerr");

  child = ChildProcess::Start("sleep", {"/bin/sleep", "30"}, dir + "/log2");
  ASSERT_TRUE(child.ok());
  EXPECT_TRUE((*child)->Running());
  (*child)->Terminate();
  EXPECT_TRUE((*child)->WaitUntil(SteadyClock::now() + std::chrono::seconds(10)));
  EXPECT_THAT((*child)->ExitDescription(), HasSubstr("killed by signal 15"));

  child = ChildProcess::Start("nothing", {dir + "/does-not-exist"}, dir + "/log3");
  EXPECT_EQ(child.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(child.status().message()), HasSubstr("No such file or directory"));
  std::filesystem::remove_all(dir);
}

// paradnn local --workers N: each worker its own CPUs, consecutive blocks
// as even as possible, shared in turn when there are more workers than CPUs.
TEST(SplitCpusAmongWorkersTest, ConsecutiveBlocksThenSharedInTurn) {
  using Cpus = std::vector<std::string>;
  EXPECT_EQ(SplitCpusAmongWorkers({0, 1, 2, 3}, 2), (Cpus{"0-1", "2-3"}));
  EXPECT_EQ(SplitCpusAmongWorkers({0, 1}, 4), (Cpus{"0", "0", "1", "1"}));
  EXPECT_EQ(SplitCpusAmongWorkers({0, 1, 2, 3, 4}, 3), (Cpus{"0", "1-2", "3-4"}));
  // One worker takes every CPU: no --cpus.
  EXPECT_TRUE(SplitCpusAmongWorkers({0, 1}, 1).empty());
}

TEST(CheckHostsFitLocalWorkersTest, AGangLargerThanTheWorkersIsRefusedNamingBoth) {
  EXPECT_TRUE(CheckHostsFitLocalWorkers(2, 2).ok());
  EXPECT_TRUE(CheckHostsFitLocalWorkers(1, 1).ok());
  const absl::Status refused = CheckHostsFitLocalWorkers(4, 2);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "params.hosts: 4 needs 4 workers of one platform; paradnn local was given --workers "
            "2; allowed here: 1..2 (or run with --workers 4)");
}

TEST(FileTailTest, KeepsWholeLines) {
  std::string lines;
  for (int i = 0; i < 100; ++i) lines += "line " + std::to_string(i) + "\n";
  const ::paradnn::testing::TempFile log("tail-test", lines);
  ASSERT_FALSE(log.path().empty());
  // The last 30 bytes begin inside "line 96", which is dropped.
  EXPECT_EQ(FileTail(log.path(), 30), "line 97\nline 98\nline 99");
  EXPECT_EQ(FileTail(log.path(), 32), "line 96\nline 97\nline 98\nline 99");
  EXPECT_EQ(FileTail("/nonexistent/log"), "");
}

TEST(InterruptWatcherTest, RunsTheInnermostHandler) {
  InterruptWatcher watcher;
  absl::Mutex mu;  // the handlers count under it; the test reads under it
  absl::CondVar cv;
  int outer = 0, inner = 0;
  ScopedInterruptHandler outer_handler(&watcher, [&] {
    absl::MutexLock lock(&mu);
    ++outer;
    cv.SignalAll();
  });
  {
    ScopedInterruptHandler inner_handler(&watcher, [&] {
      absl::MutexLock lock(&mu);
      ++inner;
      cv.SignalAll();
    });
    ASSERT_EQ(kill(getpid(), SIGINT), 0);
    absl::MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (inner != 1 && !cv.WaitWithDeadline(&mu, deadline)) {
    }
    ASSERT_EQ(inner, 1);
  }
  {
    // Not held while handlers are pushed: the watcher runs them under its
    // own lock, which must never be taken under this one.
    absl::MutexLock lock(&mu);
    EXPECT_EQ(outer, 0);
  }
  EXPECT_TRUE(watcher.interrupted());
  EXPECT_EQ(watcher.signal_number(), SIGINT);
  // A handler installed after the signal runs at once.
  bool late = false;
  ScopedInterruptHandler late_handler(&watcher, [&] { late = true; });
  EXPECT_TRUE(late);
}

}  // namespace
}  // namespace paradnn::client
