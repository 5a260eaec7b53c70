// The paradnn-worker binary itself: flag validation, start-up (platform from
// the runner), one job against the in-process fake gateway, a clean exit 0
// on SIGTERM, and a --cpus worker confined with its runners, which report
// only its CPUs (the real paradnn-runner, where it is built beside the
// worker).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_list.h"
#include "common/subprocess.h"
#include "tests/support/temp_file.h"
#include "tests/unit/worker/fake_gateway.h"
#include "tests/unit/worker/fake_runner_path.h"
#include "worker/platform_probe.h"

#ifndef PARADNN_WORKER_BINARY
#error "PARADNN_WORKER_BINARY must name the paradnn-worker executable"
#endif

namespace paradnn::worker {

using common::DescribeWaitStatus;
using common::SpawnChild;
using common::SpawnedChild;
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// paradnn-worker as a child with its output collected by two threads (so
// that it never blocks on a full pipe).
class WorkerProcess {
 public:
  explicit WorkerProcess(std::vector<std::string> args) {
    args.insert(args.begin(), PARADNN_WORKER_BINARY);
    absl::StatusOr<SpawnedChild> child = SpawnChild(args);
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return;
    pid_ = child->pid;
    child->stdin_fd.Reset();
    stdout_thread_ = std::thread(Drain, child->stdout_fd.Release(), &stdout_);
    stderr_thread_ = std::thread(Drain, child->stderr_fd.Release(), &stderr_);
  }

  ~WorkerProcess() {
    if (pid_ > 0 && !status_.has_value()) {
      ::killpg(pid_, SIGKILL);
      Wait(milliseconds(kWait));
    }
    if (stdout_thread_.joinable()) stdout_thread_.join();
    if (stderr_thread_.joinable()) stderr_thread_.join();
  }

  void Signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }

  // The wait status once the process has exited within `timeout`.
  std::optional<int> Wait(milliseconds timeout) {
    const steady_clock::time_point deadline = steady_clock::now() + timeout;
    while (!status_.has_value() && steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = status;
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (status_.has_value()) {
      if (stdout_thread_.joinable()) stdout_thread_.join();
      if (stderr_thread_.joinable()) stderr_thread_.join();
    }
    return status_;
  }

  // Only complete after Wait() returned a status.
  const std::string& err() const { return stderr_; }

 private:
  static void Drain(int fd, std::string* out) {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) out->append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
  }

  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string stdout_;
  std::string stderr_;
  std::thread stdout_thread_;
  std::thread stderr_thread_;
};

// Starts the worker with `args` and expects it to exit at once with the
// usage status 2 and `message` on stderr.
void ExpectUsageError(const std::vector<std::string>& args, const std::string& message) {
  WorkerProcess worker(args);
  std::optional<int> status = worker.Wait(kWait);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 2);
  EXPECT_NE(worker.err().find(message), std::string::npos) << worker.err();
}

// Sends `signal` to `worker` and expects it to exit with status 0 within
// kWait, having ended its stream to `gateway`.
void ExpectCleanExitOn(int signal, WorkerProcess& worker, FakeGateway& gateway) {
  worker.Signal(signal);
  std::optional<int> status = worker.Wait(kWait);
  ASSERT_TRUE(status.has_value()) << "paradnn-worker did not exit after signal " << signal;
  EXPECT_TRUE(WIFEXITED(*status)) << DescribeWaitStatus(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 0) << worker.err();
  EXPECT_TRUE(gateway.WaitForEndedStreams(1));
}

TEST(WorkerMainTest, RejectsAnUnknownDeviceNamingTheFlag) {
  ExpectUsageError({"--device", "gpu", "--runner", PARADNN_FAKE_RUNNER},
                   "--device: 'gpu' is not one of cpu|cuda|cuda:N|tpu");
}

TEST(WorkerMainTest, RejectsAnUnknownCalibrateMode) {
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--calibrate", "sometimes"},
                   "--calibrate: 'sometimes' is not one of auto|always|never");
}

TEST(WorkerMainTest, RejectsARunnerThatIsNotExecutable) {
  ExpectUsageError({"--runner", "/nonexistent/paradnn-runner"}, "--runner");
}

// A 300-character id once retried forever with a message about the
// coordinator; the coordinator's rule is said up front.
TEST(WorkerMainTest, RejectsAWorkerIdTheCoordinatorWouldRefuse) {
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--worker-id", std::string(300, 'w')},
                   "--worker-id: 300 characters; must be 1..256 characters");
}

TEST(WorkerMainTest, RejectsBadGangFlagsNamingThem) {
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--cpus", "3-1"},
                   "--cpus: '3-1' is not a CPU list: a reversed range '3-1'");
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--cpus", "0,x"},
                   "--cpus: '0,x' is not a CPU list");
  // CPU 1023 is beyond any affinity this test runs with.
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--cpus", "0,1023"},
                   "--cpus: CPU 1023 is outside this process's affinity; allowed: CPU");
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--rendezvous-port", "70000"},
                   "--rendezvous-port: 70000 is out of range; allowed: 1..65535, or 0");
  ExpectUsageError({"--runner", PARADNN_FAKE_RUNNER, "--advertise-address", "10.0.0.1:29500"},
                   "--advertise-address: '10.0.0.1:29500'");
}

// Starts paradnn-worker with `args` and returns the hello it sends to
// `gateway` (empty if none came).
v1::WorkerHello StartAndHello(FakeGateway& gateway, const std::vector<std::string>& args,
                              std::unique_ptr<WorkerProcess>* worker) {
  const size_t before = gateway.received().size();
  *worker = std::make_unique<WorkerProcess>(args);
  const int at = gateway.WaitFor(IsHello, before);
  EXPECT_GE(at, 0);
  return at < 0 ? v1::WorkerHello() : gateway.received()[at].hello();
}

// Two workers started alike on one host (the ranks of a gang sharing it)
// get distinct default ids; one restarted gets its old id back.
TEST(WorkerMainTest, WorkersOfOneHostGetDistinctStableDefaultIds) {
  GatewayServer gateway;
  gateway.Start(0);
  testing::TempFolder state("worker-state");
  const std::vector<std::string> args = {
      "--coordinator", "127.0.0.1:" + std::to_string(gateway.port),
      "--runner",      PARADNN_FAKE_RUNNER,
      "--calibrate",   "never",
      "--state-dir",   state.path()};
  FakeGateway& service = *gateway.service;
  std::unique_ptr<WorkerProcess> first, second, restarted, pinned;
  const v1::WorkerHello first_hello = StartAndHello(service, args, &first);
  const v1::WorkerHello second_hello = StartAndHello(service, args, &second);
  ASSERT_FALSE(first_hello.worker_id().empty());
  EXPECT_EQ(second_hello.worker_id(), first_hello.worker_id() + "-2");
  // Each chose a rendezvous port; no --cpus: every CPU.
  EXPECT_GT(first_hello.rendezvous_port(), 0);
  EXPECT_GT(second_hello.rendezvous_port(), 0);
  EXPECT_EQ(first_hello.cpus(), "");
  EXPECT_EQ(first_hello.rendezvous_address(), "");

  ExpectCleanExitOn(SIGTERM, *first, service);
  EXPECT_EQ(StartAndHello(service, args, &restarted).worker_id(), first_hello.worker_id());

  // --cpus is part of the default id and said in the hello.
  std::vector<std::string> pinned_args = args;
  pinned_args.insert(pinned_args.end(), {"--cpus", "0", "--rendezvous-port", "29517",
                                         "--advertise-address", "127.0.0.1"});
  const v1::WorkerHello pinned_hello = StartAndHello(service, pinned_args, &pinned);
  EXPECT_EQ(pinned_hello.worker_id(), first_hello.worker_id() + "-cpus0");
  EXPECT_EQ(pinned_hello.cpus(), "0");
  EXPECT_EQ(pinned_hello.rendezvous_port(), 29517);
  EXPECT_EQ(pinned_hello.rendezvous_address(), "127.0.0.1");
}

TEST(WorkerMainTest, RunsAJobAndExitsCleanlyOnSigterm) {
  GatewayServer gateway;
  gateway.Start(0);
  testing::TempFolder state("worker-state");
  ASSERT_FALSE(state.path().empty());
  const std::string& state_dir = state.path();
  WorkerProcess worker({"--coordinator", "127.0.0.1:" + std::to_string(gateway.port), "--runner",
                        PARADNN_FAKE_RUNNER, "--device", "cuda:1", "--max-backoff-ms", "500",
                        "--state-dir", state_dir});

  const int hello_at = gateway.service->WaitFor(IsHello);
  ASSERT_GE(hello_at, 0);
  const v1::WorkerHello hello = gateway.service->received()[hello_at].hello();
  EXPECT_EQ(hello.device_kind(), "cuda");
  EXPECT_EQ(hello.platform().fingerprint(),
            "fake-fingerprint");  // from `fake_runner --platform --framed`
  // From `fake_runner --calibrate --framed` (no cache yet), then cached.
  ASSERT_EQ(hello.platform().matmul_roofs_size(), 1);
  EXPECT_EQ(hello.platform().matmul_roofs(0).dtype(), "float32");
  EXPECT_EQ(hello.platform().calibrated_unix_ms(), 1'700'000'000'000);
  EXPECT_EQ(::access((state_dir + "/calibration-v2-fake-fingerprint.binpb").c_str(), R_OK), 0);
  char host[256] = {0};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  // <hostname>-<device>, then the machine id's first 8 hex digits where
  // the host has one (two hosts named alike do not collide).
  std::string machine_id;
  std::ifstream("/etc/machine-id") >> machine_id;
  const std::string expected =
      std::string(host) + "-cuda:1" + (machine_id.size() >= 8 ? "-" + machine_id.substr(0, 8) : "");
  EXPECT_EQ(hello.worker_id(), expected);

  ASSERT_TRUE(gateway.service->Send(HelloAck()));
  ASSERT_TRUE(gateway.service->Send(Assignment(5, 1, "ok")));
  const int result_at = gateway.service->WaitFor(IsResult(5));
  ASSERT_GE(result_at, 0);
  const v1::Measurement m = gateway.service->received()[result_at].result().measurement();
  EXPECT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.device(), "cuda:1");  // the worker's own device, whatever the assignment said
  ASSERT_TRUE(gateway.service->Send(Ack(5, 1)));

  ExpectCleanExitOn(SIGTERM, worker, *gateway.service);
}

TEST(WorkerMainTest, ExitsOnSigintBeforeTheHandshake) {
  GatewayServer gateway;
  gateway.Start(0);
  WorkerProcess worker({"--coordinator", "127.0.0.1:" + std::to_string(gateway.port), "--runner",
                        PARADNN_FAKE_RUNNER, "--calibrate", "never"});
  // Its hello proves the signal handlers are installed; no hello_ack follows.
  ASSERT_GE(gateway.service->WaitFor(IsHello), 0);
  ExpectCleanExitOn(SIGINT, worker, *gateway.service);
}

// Confines the calling thread (and so the children it spawns) to `cpus`
// while it lives; restores the set it found.
class ScopedAffinity {
 public:
  explicit ScopedAffinity(const std::vector<int>& cpus) {
    CPU_ZERO(&saved_);
    EXPECT_EQ(::sched_getaffinity(0, sizeof(saved_), &saved_), 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) CPU_SET(cpu, &set);
    EXPECT_EQ(::sched_setaffinity(0, sizeof(set), &set), 0);
  }
  ~ScopedAffinity() { ::sched_setaffinity(0, sizeof(saved_), &saved_); }

 private:
  cpu_set_t saved_;
};

// paradnn-runner where the worker looks for it (beside paradnn-worker); ""
// where it is not built (PARADNN_BUILD_RUNNER=OFF).
std::string RealRunner() {
  const std::string path =
      std::filesystem::path(PARADNN_WORKER_BINARY).parent_path() / "paradnn-runner";
  return ::access(path.c_str(), X_OK) == 0 ? path : "";
}

// `paradnn-runner --platform` started under an affinity of `cpus`.
v1::Platform RunnerPlatformOn(const std::string& runner, const std::vector<int>& cpus) {
  ScopedAffinity affinity(cpus);
  absl::StatusOr<v1::Platform> platform = QueryRunnerPlatform(runner, milliseconds(60'000));
  EXPECT_TRUE(platform.ok()) << platform.status();
  return platform.ok() ? *platform : v1::Platform();
}

// A pinned worker is measured as what it is: a runner confined to one CPU
// reports one CPU (and one core's silicon peak) under a fingerprint of its
// own, and any two single CPUs of a host are one platform (the ranks of a
// gang), the CPU ids being no part of it.
TEST(WorkerMainTest, TheRunnersPlatformCountsOnlyTheCpusItMayUse) {
  const std::string runner = RealRunner();
  if (runner.empty()) GTEST_SKIP() << "paradnn-runner is not built beside paradnn-worker";
  const std::vector<int> cpus = common::AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs in this test's affinity";
  const v1::Platform one = RunnerPlatformOn(runner, {cpus[0]});
  const v1::Platform two = RunnerPlatformOn(runner, {cpus[0], cpus[1]});
  const v1::Platform other_one = RunnerPlatformOn(runner, {cpus[1]});
  EXPECT_EQ(one.logical_cpus(), 1);
  EXPECT_EQ(one.cores(), 1);
  EXPECT_EQ(one.sockets(), 1);
  EXPECT_EQ(one.default_intra_op_threads(), 1);
  EXPECT_EQ(two.logical_cpus(), 2);
  EXPECT_GE(two.cores(), 1);
  EXPECT_LE(two.cores(), 2);
  EXPECT_LE(two.default_intra_op_threads(), 2);
  ASSERT_GT(one.silicon_peaks_size(), 0);
  EXPECT_EQ(one.silicon_peaks(0).basis().rfind("1 core x", 0), 0u) << one.silicon_peaks(0).basis();
  EXPECT_NE(one.fingerprint(), two.fingerprint());
  EXPECT_EQ(one.fingerprint(), other_one.fingerprint());
}

// The Cpus_allowed_list of every thread of process `pid`.
std::set<std::string> AllowedCpuLists(pid_t pid) {
  std::set<std::string> lists;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) lists.insert(line.substr(line.find('\t') + 1));
    }
  }
  return lists;
}

// The children of process `pid` (those of each of its threads); empty where
// the kernel does not list them.
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) children.push_back(child);
  }
  return children;
}

// --cpus confines the worker itself before it starts a child: the platform
// probe, the zygote and every runner inherit the set, and the hello
// reports that many CPUs.
TEST(WorkerMainTest, AWorkerWithCpusConfinesItselfAndItsRunners) {
  const std::string real_runner = RealRunner();
  const std::string cpu = std::to_string(common::AllowedCpus().back());
  GatewayServer gateway;
  gateway.Start(0);
  testing::TempFolder state("worker-state");
  std::unique_ptr<WorkerProcess> worker;
  const v1::WorkerHello hello =
      StartAndHello(*gateway.service,
                    {"--coordinator", "127.0.0.1:" + std::to_string(gateway.port), "--runner",
                     real_runner.empty() ? std::string(PARADNN_FAKE_RUNNER) : real_runner,
                     "--calibrate", "never", "--state-dir", state.path(), "--cpus", cpu},
                    &worker);
  EXPECT_EQ(hello.cpus(), cpu);
  EXPECT_EQ(AllowedCpuLists(worker->pid()), std::set<std::string>{cpu});
  for (pid_t child : ChildrenOf(worker->pid())) {
    EXPECT_EQ(AllowedCpuLists(child), std::set<std::string>{cpu}) << "child " << child;
  }
  if (!real_runner.empty()) {
    EXPECT_EQ(hello.platform().logical_cpus(), 1);
    EXPECT_EQ(hello.platform().cores(), 1);
  }
  ExpectCleanExitOn(SIGTERM, *worker, *gateway.service);
}

}  // namespace
}  // namespace paradnn::worker
