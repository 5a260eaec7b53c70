// Fault tests at sweep scale, with real processes and a real SQLite file
// (they replace the smaller kill tests of the first issue):
// a 200-job sweep on 4 workers while a chaos loop SIGKILLs workers and
// restarts them under the same id (and, in the second test, kills and
// restarts the coordinator three times as well); runners that crash, hang,
// get SIGKILLed (as by the OOM killer) or write garbage; a SIGTERM that
// drains the job in flight; and a cancel that reaches a running job. Workers
// run the LibTorch-free fake runner. Each chaos test prints its counts (jobs,
// kills, results, duplicates dropped) on one "chaos:" line.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "paradnn/v1/coordinator.grpc.pb.h"
#include "tests/fault/hostile_peers.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_processes.h"
#include "tests/support/health_check.h"

namespace paradnn::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A sweep of `jobs` FC configurations, node = 8, 9, ...; `run` is the
// sweep's run mapping.
std::string WriteSweep(const TempDir& dir, int jobs, const std::string& run = "{}") {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(8 + i);
  const std::string path = dir.File("sweep.yaml");
  std::ofstream(path) << "name: chaos\nfamily: fc\nparams:\n  layer: 1\n  node: {values: ["
                      << values << "]}\n  input: 8\n  output: 4\n  batch: 4\nrun: " << run << "\n";
  return path;
}

// Submits WriteSweep(dir, jobs, run) through the CLI; its id in `sweep_id`.
void Submit(Cluster& cluster, const TempDir& dir, int jobs, const std::string& run = "{}",
            std::string* sweep_id = nullptr) {
  CommandResult submit = cluster.Cli({"submit", WriteSweep(dir, jobs, run), "-q"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  if (sweep_id != nullptr) *sweep_id = submit.out.substr(0, submit.out.find('\n'));
}

// Waits until the first job is leased (its attempt recorded).
bool FirstJobLeased(Cluster& cluster) {
  return WaitFor([&] { return QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts") >= 1; },
                 seconds(60));
}

int64_t ResultCount(const Cluster& cluster) {
  return QueryInt(cluster.db_path(), "SELECT count(*) FROM results");
}

// The outcome (v1::Outcome number) stored for the job with params.node = node.
int64_t OutcomeOfNode(const Cluster& cluster, int node) {
  return QueryInt(cluster.db_path(),
                  "SELECT r.outcome FROM results r JOIN job_params p ON p.job_id = r.job_id "
                  "AND p.key = 'node' WHERE p.int_value = " +
                      std::to_string(node));
}

int64_t CountLines(const std::string& text, const std::string& needle) {
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

void ExpectExactlyOneResultPerJob(const Cluster& cluster, int jobs) {
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs"), jobs);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 3"), jobs)
      << "every job done";
  EXPECT_EQ(ResultCount(cluster), jobs);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM (SELECT job_id FROM results GROUP BY job_id "
                     "HAVING count(*) > 1)"),
            0);
  // Each result belongs to an attempt of its own job, and was reported by
  // the worker that attempt was leased to.
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results r JOIN attempts a ON a.id = r.attempt_id "
                     "WHERE a.job_id = r.job_id AND a.worker_id = r.worker_id"),
            jobs);
}

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FAKE_RUNNER_DELAY_MS", "100", 1);
    seed_ = std::random_device()();
    rng_.seed(seed_);
    std::printf("chaos seed %u\n", seed_);
  }
  void TearDown() override {
    unsetenv("FAKE_RUNNER_DELAY_MS");
    unsetenv("FAKE_RUNNER_BEHAVIOR_BY_NODE");
    unsetenv("PARADNN_TOKEN");
  }
  static std::vector<std::string> FakeRunner() { return {"--runner", PARADNN_FAKE_RUNNER}; }

  // Starts worker slot `slot` ("w<slot>", with worker_flags_) and
  // remembers its process index.
  void StartWorker(Cluster& cluster, size_t slot) {
    if (live_.size() <= slot) live_.resize(slot + 1);
    cluster.StartWorker("w" + std::to_string(slot), worker_flags_);
    live_[slot] = started_++;
  }

  // SIGKILLs a random worker and starts it again under the same id.
  void KillAndRestartAWorker(Cluster& cluster) {
    const size_t slot = std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng_);
    ASSERT_NO_FATAL_FAILURE(cluster.KillWorker(live_[slot]));
    ++worker_kills_;
    StartWorker(cluster, slot);
  }

  void Pause(int min_ms, int max_ms) {
    std::this_thread::sleep_for(
        milliseconds(std::uniform_int_distribution<int>(min_ms, max_ms)(rng_)));
  }

  std::vector<std::string> worker_flags_ = FakeRunner();
  unsigned seed_ = 0;
  std::mt19937 rng_;
  std::vector<size_t> live_;  // per slot, the worker's index in start order
  size_t started_ = 0;
  int worker_kills_ = 0;
  int coordinator_kills_ = 0;
};

TEST_F(ChaosTest, WorkersKilledAndRestartedAtRandomStoreEveryJobOnce) {
  constexpr int kJobs = 200;
  TempDir dir;
  Cluster cluster(dir);
  // Kills are infrastructure failures; a job unlucky enough to be killed
  // repeatedly must still finish, not fail, for this test's count.
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator({"--max-attempts", "100"}));
  for (size_t slot = 0; slot < 4; ++slot) StartWorker(cluster, slot);
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, kJobs));

  const auto give_up = std::chrono::steady_clock::now() + seconds(400);
  while (ResultCount(cluster) < kJobs && std::chrono::steady_clock::now() < give_up) {
    Pause(200, 800);
    // Stop killing near the end so the last jobs are not starved.
    if (ResultCount(cluster) < kJobs - 10) {
      ASSERT_NO_FATAL_FAILURE(KillAndRestartAWorker(cluster));
    }
  }
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= kJobs; }, seconds(120)))
      << "results " << ResultCount(cluster) << "\n"
      << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, kJobs);
  EXPECT_GT(worker_kills_, 5);
  // Kills landed mid-job: some jobs needed more than one attempt.
  const int64_t attempts = QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts");
  EXPECT_GT(attempts, kJobs);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  const int64_t duplicates = CountLines(cluster.CoordinatorLogs(), "is a duplicate; dropped");
  EXPECT_EQ(
      QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts WHERE finished_unix_ms IS NULL"),
      0);
  std::printf(
      "chaos: jobs %d, worker kills %d, attempts %lld, results %lld, duplicates dropped %lld\n",
      kJobs, worker_kills_, static_cast<long long>(attempts),
      static_cast<long long>(ResultCount(cluster)), static_cast<long long>(duplicates));
  RecordProperty("worker_kills", worker_kills_);
  RecordProperty("duplicates", static_cast<int>(duplicates));
}

// Writes `text` to `path`, readable by its owner only (as token files must
// be); returns the path.
std::string WriteSecret(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

// The same grid again with the honest workers only (after the liar's
// test): it reuses the fleet's results and none of evil-1's, and each
// domain's platform row is its own.
void ExpectTheSameGridAgainReusesNoneOfTheLiars(Cluster& cluster, const TempDir& dir, int jobs) {
  std::string again;
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, jobs, "{}", &again));
  const std::string of_again =
      " FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.sweep_id = " + again;
  ASSERT_TRUE(
      WaitFor([&] { return QueryInt(cluster.db_path(), "SELECT count(*)" + of_again) >= jobs; },
              seconds(120)))
      << cluster.Logs();
  EXPECT_EQ(
      QueryInt(cluster.db_path(), "SELECT count(*)" + of_again + " AND r.worker_id = 'evil-1'"), 0)
      << "no reused result comes from the liar";
  EXPECT_GT(QueryInt(cluster.db_path(),
                     "SELECT count(*)" + of_again + " AND r.reused_from_job_id IS NOT NULL"),
            0)
      << "the fleet's results are reused";
  // Each domain's platform row is its own, named by the domain, whoever
  // said hello first: the liar's claim never touched the fleet's.
  const auto platform_of = [&](const std::string& worker) {
    return QueryText(cluster.db_path(),
                     "SELECT p.fingerprint FROM workers w JOIN platforms p ON p.id = "
                     "w.platform_id WHERE w.id = '" +
                         worker + "'");
  };
  const std::string fleet_fingerprint = platform_of("w0");
  const std::string fingerprint = fleet_fingerprint.substr(0, fleet_fingerprint.find('@'));
  EXPECT_EQ(fleet_fingerprint, fingerprint + "@forger,w*");
  EXPECT_EQ(platform_of("evil-1"), fingerprint + "@evil-*");
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM workers WHERE reuse_refused != ''"),
            0)
      << "no honest worker refused";
}

// Beside the honest workers, with tokens: a forger (a stolen fleet token:
// results for others' attempts), a twin (a second process with w1's id)
// and a liar (a token of its own, bound to `evil-*`: made-up results on the
// fleet's platform). A second sweep of the same grid reuses the fleet's
// results and none of the liar's, and the fleet's platform row stays the
// fleet's.
TEST_F(ChaosTest, AForgerATwinAndALiarAlongsideHonestWorkersChangeNoResult) {
  constexpr int kJobs = 120;
  TempDir dir;
  Cluster cluster(dir);
  const std::string fleet_token = "fleet-token-5d1c", evil_token = "evil-token-9a7e";
  const std::string worker_tokens = WriteSecret(
      dir.File("worker-tokens"), fleet_token + " w* forger\n" + evil_token + " evil-*\n");
  const std::string client_tokens = WriteSecret(dir.File("client-tokens"), "client-token-3b8f\n");
  const std::string fleet_token_file = WriteSecret(dir.File("fleet.token"), fleet_token + "\n");
  setenv("PARADNN_TOKEN", "client-token-3b8f", 1);  // the CLI's
  worker_flags_ = FakeRunner();
  worker_flags_.insert(worker_flags_.end(), {"--token-file", fleet_token_file});
  ASSERT_NO_FATAL_FAILURE(
      cluster.StartCoordinator({"--max-attempts", "100", "--worker-token-file", worker_tokens,
                                "--client-token-file", client_tokens}));
  for (size_t slot = 0; slot < 3; ++slot) StartWorker(cluster, slot);
  ASSERT_TRUE(WaitFor(
      [&] {
        return QueryInt(cluster.db_path(), "SELECT count(*) FROM workers WHERE connected = 1") == 3;
      },
      seconds(30)));
  // A second process with w1's id: refused while w1 is connected, it
  // stops on its own (exit status 3).
  cluster.StartWorker("w1", worker_flags_);
  const size_t twin = started_++;
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, kJobs));
  int64_t forged = 0, forged_acks = 0;
  int lies = 0;
  {
    Forger forger(cluster.address(), cluster.db_path(), fleet_token);
    Liar liar(cluster.address(), cluster.db_path(), evil_token);
    const auto give_up = std::chrono::steady_clock::now() + seconds(300);
    while (ResultCount(cluster) < kJobs && std::chrono::steady_clock::now() < give_up) {
      Pause(300, 900);
      // Honest chaos too: w0 and w2 (never w1, whose twin waits for its id).
      if (ResultCount(cluster) < kJobs - 10) {
        const size_t slot = std::uniform_int_distribution<size_t>(0, 1)(rng_) == 0 ? 0 : 2;
        ASSERT_NO_FATAL_FAILURE(cluster.KillWorker(live_[slot]));
        ++worker_kills_;
        StartWorker(cluster, slot);
      }
    }
    forged = forger.sent();
    forged_acks = forger.acks();
    lies = liar.lies();
  }
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= kJobs; }, seconds(120)))
      << "results " << ResultCount(cluster) << "\n"
      << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, kJobs);
  EXPECT_EQ(QueryInt(cluster.db_path(),
                     "SELECT count(*) FROM results WHERE worker_id = 'forger' "
                     "OR examples_per_sec < 0"),
            0);
  EXPECT_GT(forged, 20);
  EXPECT_GT(forged_acks, 0) << "refused forgeries are acked";
  std::optional<int> twin_status = cluster.WaitWorker(twin, seconds(60));
  ASSERT_TRUE(twin_status.has_value()) << cluster.WorkerLog(twin);
  EXPECT_TRUE(WIFEXITED(*twin_status) && WEXITSTATUS(*twin_status) == 3) << cluster.WorkerLog(twin);
  ASSERT_GT(lies, 0) << "the liar measured some of the sweep";

  ASSERT_NO_FATAL_FAILURE(ExpectTheSameGridAgainReusesNoneOfTheLiars(cluster, dir, kJobs));
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  std::printf(
      "forger: %lld forged reports, %lld acked and refused; twin exited 3; liar: %d made-up "
      "results, none reused; %d kills\n",
      static_cast<long long>(forged), static_cast<long long>(forged_acks), lies, worker_kills_);
}

TEST_F(ChaosTest, CoordinatorKilledThreeTimesDuringWorkerChaosLosesNothing) {
  constexpr int kJobs = 200;
  TempDir dir;
  Cluster cluster(dir);
  const std::vector<std::string> flags = {"--max-attempts", "100"};
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(flags));
  for (size_t slot = 0; slot < 4; ++slot) StartWorker(cluster, slot);
  std::string sweep_id;
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, kJobs, "{}", &sweep_id));
  // `paradnn watch` rides through the coordinator's deaths, as workers do.
  ChildProcess watch;
  watch.Start({BinDir() + "/paradnn", "--coordinator", cluster.address(), "watch", sweep_id},
              dir.File("watch.log"));
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir.File("watch.log")).empty(); }, seconds(30)));

  std::vector<int64_t> coordinator_kill_at = {50, 100, 150};
  const auto give_up = std::chrono::steady_clock::now() + seconds(400);
  while (ResultCount(cluster) < kJobs && std::chrono::steady_clock::now() < give_up) {
    Pause(200, 800);
    const int64_t stored = ResultCount(cluster);
    if (!coordinator_kill_at.empty() && stored >= coordinator_kill_at.front()) {
      coordinator_kill_at.erase(coordinator_kill_at.begin());
      ASSERT_NO_FATAL_FAILURE(cluster.KillCoordinator());
      ++coordinator_kills_;
      EXPECT_GE(ResultCount(cluster), stored) << "a committed result was lost";
      // Workers keep running (and finishing) jobs while it is down.
      ASSERT_NO_FATAL_FAILURE(KillAndRestartAWorker(cluster));
      Pause(200, 1000);
      ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(flags));
    } else if (stored < kJobs - 10) {
      ASSERT_NO_FATAL_FAILURE(KillAndRestartAWorker(cluster));
    }
  }
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= kJobs; }, seconds(120)))
      << "results " << ResultCount(cluster) << "\n"
      << cluster.Logs();
  EXPECT_EQ(coordinator_kills_, 3);
  ExpectExactlyOneResultPerJob(cluster, kJobs);
  std::optional<int> watched = watch.Wait(seconds(60));
  const std::string watch_log = ReadFile(dir.File("watch.log"));
  ASSERT_TRUE(watched.has_value()) << "paradnn watch did not end with the sweep\n" << watch_log;
  EXPECT_TRUE(WIFEXITED(*watched) && WEXITSTATUS(*watched) == 0) << watch_log;
  EXPECT_GE(CountLines(watch_log, "lost the coordinator"), 1) << watch_log;
  EXPECT_GE(CountLines(watch_log, "is back; watching sweep"), 1) << watch_log;
  // The sweep is still known and finished after the restarts.
  CommandResult status = cluster.Cli({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("done"), std::string::npos) << status.out;
  const int64_t attempts = QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts");
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
  const int64_t duplicates = CountLines(cluster.CoordinatorLogs(), "is a duplicate; dropped");
  std::printf(
      "chaos: jobs %d, coordinator kills %d, worker kills %d, attempts %lld, results "
      "%lld, duplicates dropped %lld\n",
      kJobs, coordinator_kills_, worker_kills_, static_cast<long long>(attempts),
      static_cast<long long>(ResultCount(cluster)), static_cast<long long>(duplicates));
  RecordProperty("coordinator_kills", coordinator_kills_);
  RecordProperty("worker_kills", worker_kills_);
  RecordProperty("duplicates", static_cast<int>(duplicates));
}

// A worker that stops answering mid-job (SIGSTOP: its connection stays
// open, as in a network cut) loses its lease after the lease timeout; the
// job runs again elsewhere; when the worker wakes up and sends its stale
// result, the coordinator keeps one result per job.
TEST_F(ChaosTest, SilentWorkerLosesItsLeaseAndItsLateResultIsNotStoredTwice) {
  setenv("FAKE_RUNNER_DELAY_MS", "1500", 1);
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());  // leases time out after 5 s
  StartWorker(cluster, 0);
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, 4));
  ASSERT_TRUE(FirstJobLeased(cluster)) << cluster.Logs();
  cluster.SignalWorker(live_[0], SIGSTOP);
  StartWorker(cluster, 1);
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 4; }, seconds(120))) << cluster.Logs();
  // The stopped worker's attempt expired and its job went to w1.
  EXPECT_EQ(
      QueryInt(cluster.db_path(),
               "SELECT count(*) FROM attempts WHERE worker_id = 'w0' AND outcome IS NOT 'OK'"),
      1);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE worker_id = 'w1'"), 4);

  cluster.SignalWorker(live_[0], SIGCONT);
  // w0 finishes its runner, reconnects and delivers the stale result.
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string logs = cluster.CoordinatorLogs();
        return CountLines(logs, "is a duplicate; dropped") + CountLines(logs, "late result") > 0;
      },
      seconds(60)))
      << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, 4);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(ChaosTest, RunnersThatCrashHangOrAreKilledAreResultsAndTheWorkerStaysUp) {
  // node 8..15; five misbehave, three are fine.
  setenv("FAKE_RUNNER_BEHAVIOR_BY_NODE", "9=crash,10=hang,11=sigkill,12=exit3,13=garbage", 1);
  setenv("FAKE_RUNNER_DELAY_MS", "0", 1);
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  StartWorker(cluster, 0);
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, 8, "{max_seconds: 1, timeout_seconds: 3}"));
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 8; }, seconds(120))) << cluster.Logs();

  constexpr int kOk = 1, kTimeout = 4, kCrashed = 7;
  for (int node : {8, 14, 15}) EXPECT_EQ(OutcomeOfNode(cluster, node), kOk) << node;
  for (int node : {9, 11, 12, 13}) EXPECT_EQ(OutcomeOfNode(cluster, node), kCrashed) << node;
  EXPECT_EQ(OutcomeOfNode(cluster, 10), kTimeout);
  auto error_of = [&](int node, const std::string& needle) {
    return QueryInt(cluster.db_path(),
                    "SELECT count(*) FROM results r JOIN job_params p ON p.job_id = r.job_id "
                    "AND p.key = 'node' WHERE p.int_value = " +
                        std::to_string(node) + " AND instr(r.error, '" + needle + "') > 0");
  };
  EXPECT_EQ(error_of(9, "SIGABRT"), 1);
  EXPECT_EQ(error_of(10, "deadline"), 1);
  EXPECT_EQ(error_of(11, "memory"), 1) << "a SIGKILL hints at the OOM killer";
  EXPECT_EQ(error_of(12, "out of cheese"), 1) << "stderr is kept";
  EXPECT_EQ(error_of(13, "invalid output"), 1);
  // Benchmark outcomes are results: never retried as infrastructure failures.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts"), 8);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT max(attempts) FROM jobs"), 1);
  // One worker process ran all eight, misbehaving runners included.
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(DISTINCT worker_id) FROM results"), 1);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());  // the worker exits cleanly: it was up
}

TEST_F(ChaosTest, SigtermStopsAssigningAndWaitsForTheJobInFlight) {
  setenv("FAKE_RUNNER_DELAY_MS", "2500", 1);
  TempDir dir;
  Cluster cluster(dir);
  const std::vector<std::string> flags = {"--shutdown-grace-seconds", "30"};
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(flags));
  StartWorker(cluster, 0);
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, 3));
  ASSERT_TRUE(FirstJobLeased(cluster)) << cluster.Logs();
  ASSERT_EQ(ResultCount(cluster), 0) << "the first job should still be running";

  auto channel = grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials());
  std::future<std::optional<int>> stopped =
      std::async(std::launch::async, [&] { return cluster.TerminateCoordinator(seconds(60)); });
  int serving = -1;
  bool saw_not_serving = false;
  while (stopped.wait_for(milliseconds(50)) != std::future_status::ready && !saw_not_serving) {
    if (HealthCheck(channel, &serving).ok() && serving == kNotServing) saw_not_serving = true;
  }
  std::optional<int> status = stopped.get();
  ASSERT_TRUE(status.has_value()) << "coordinator did not stop";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << cluster.CoordinatorLogs();
  EXPECT_TRUE(saw_not_serving) << "health said NOT_SERVING while draining";
  // The job in flight was waited for and stored; nothing more was assigned.
  EXPECT_EQ(ResultCount(cluster), 1) << cluster.CoordinatorLogs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts"), 1);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 1"), 2);

  // A new start finishes the rest with the same worker.
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator(flags));
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 3; }, seconds(60))) << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, 3);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());
}

TEST_F(ChaosTest, WorkerStoppedMidJobHandsItBackForAnotherWorker) {
  // The job must still be running when SIGTERM arrives: at 3 s it once
  // finished first under ctest -j2 beside a LibTorch test (the worker then
  // stopped with an unacknowledged result instead of handing the job back).
  // The worker kills the runner after its 0.5 s drain, so a long delay
  // costs nothing.
  setenv("FAKE_RUNNER_DELAY_MS", "15000", 1);
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  cluster.StartWorker("leaving", {"--runner", PARADNN_FAKE_RUNNER, "--drain-seconds", "0.5"});
  ASSERT_NO_FATAL_FAILURE(Submit(cluster, dir, 2));
  // The worker has the job (its "job N attempt M (sweep S) starting" line),
  // not only the coordinator's lease of it: a SIGTERM between the two, under
  // ctest -j2 beside tidy and a LibTorch test, found the worker idle, and it
  // stopped without the assignment in flight to hand back.
  ASSERT_TRUE(WaitFor([&] { return cluster.WorkerLog(0).find(" (sweep ") != std::string::npos; },
                      seconds(60)))
      << cluster.Logs();
  cluster.SignalWorker(0, SIGTERM);
  ASSERT_TRUE(WaitFor(
      [&] {
        return QueryInt(cluster.db_path(),
                        "SELECT count(*) FROM attempts WHERE outcome LIKE 'handed back:%'") == 1;
      },
      seconds(60)))
      << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 5"), 0)
      << "a job stopped by a worker's shutdown is not cancelled";
  setenv("FAKE_RUNNER_DELAY_MS", "100", 1);
  cluster.StartWorker("staying", FakeRunner());
  ASSERT_TRUE(WaitFor([&] { return ResultCount(cluster) >= 2; }, seconds(60))) << cluster.Logs();
  ExpectExactlyOneResultPerJob(cluster, 2);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM results WHERE worker_id = 'staying'"),
            2);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());  // "leaving" exited 0 on its own
}

TEST_F(ChaosTest, CancelStopsPendingJobsAndTheRunningOne) {
  // Every job would hang for a minute; cancel must not wait for that.
  setenv("FAKE_RUNNER_BEHAVIOR_BY_NODE", "8=hang,9=hang,10=hang,11=hang,12=hang", 1);
  TempDir dir;
  Cluster cluster(dir);
  ASSERT_NO_FATAL_FAILURE(cluster.StartCoordinator());
  StartWorker(cluster, 0);
  std::string sweep_id;
  ASSERT_NO_FATAL_FAILURE(
      Submit(cluster, dir, 5, "{max_seconds: 1, timeout_seconds: 600}", &sweep_id));
  ASSERT_TRUE(WaitFor(
      [&] { return QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 2") == 1; },
      seconds(60)))
      << cluster.Logs();

  CommandResult cancel = cluster.Cli({"cancel", sweep_id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  ASSERT_TRUE(WaitFor(
      [&] { return QueryInt(cluster.db_path(), "SELECT count(*) FROM jobs WHERE state = 5") == 5; },
      seconds(60)))
      << "every job cancelled, the running one included\n"
      << cluster.Logs();
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT state FROM sweeps"), 3) << "SWEEP_CANCELLED";
  EXPECT_EQ(ResultCount(cluster), 0);
  EXPECT_EQ(QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts"), 1);
  EXPECT_EQ(
      QueryInt(cluster.db_path(), "SELECT count(*) FROM attempts WHERE finished_unix_ms IS NULL"),
      0);
  ASSERT_NO_FATAL_FAILURE(cluster.Stop());  // the worker is up and exits cleanly
}

}  // namespace
}  // namespace paradnn::testing
