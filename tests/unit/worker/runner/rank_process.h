// Real paradnn-runner --job-stdin processes for the gang tests (gang_test,
// allreduce_test): one per rank, its job written to stdin, its RunnerEvents
// read on a thread of its own; and what gangs on 127.0.0.1 need (a free
// port, one CPU each).
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_RANK_PROCESS_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_RANK_PROCESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/address.h"
#include "common/cpu_list.h"
#include "common/framing.h"
#include "common/subprocess.h"
#include "paradnn/v1/metrics.pb.h"
#include "tests/support/wait_for.h"

namespace paradnn::runner {

inline constexpr std::chrono::milliseconds kResultDeadline(
    90'000);  // generous: the host may be busy

// A loopback port nobody listens on now; -1 if none could be bound.
inline int FreePort() { return common::FreeTcpPort("127.0.0.1").value_or(-1); }

// CPU `i` of those this test may use, as a RunnerJob.cpus list.
inline std::string OneAllowedCpu(int i) {
  const std::vector<int> cpus = common::AllowedCpus();
  return absl::StrCat(cpus.at(static_cast<size_t>(i) % cpus.size()));
}

// Makes `job` rank `host_rank` of a gang of `hosts` meeting on
// 127.0.0.1:`port` under `tag`, on its own CPU where the host has several.
inline void JoinTestGang(v1::RunnerJob* job, int host_rank, int hosts, int port,
                         const std::string& tag) {
  job->set_cpus(OneAllowedCpu(host_rank));
  v1::GangRole& gang = *job->mutable_gang();
  gang.set_host_rank(host_rank);
  gang.set_hosts(hosts);
  gang.set_devices_per_host(1);
  gang.set_rendezvous_host("127.0.0.1");
  gang.set_rendezvous_port(port);
  gang.set_secret("s3cret");
  gang.set_gang_tag(tag);
  gang.set_collective_timeout_s(20);
  for (int r = 0; r < hosts; ++r) gang.add_worker_ids(absl::StrCat("w", r));
}

// One paradnn-runner --job-stdin process: its job written to stdin, its
// RunnerEvents read on a thread of their own.
class RankProcess {
 public:
  explicit RankProcess(const v1::RunnerJob& job) {
    const char* dir = std::getenv("PARADNN_BIN_DIR");
    const std::string runner = std::string(dir != nullptr ? dir : "bin") + "/paradnn-runner";
    common::SpawnOptions options;
    absl::StatusOr<common::ScopedFd> quiet = common::OpenForChild("/dev/null", O_WRONLY);
    if (quiet.ok()) options.stderr_fd = quiet->get();
    absl::StatusOr<common::SpawnedChild> child =
        common::SpawnChild({runner, "--job-stdin", "--log-level", "warn"}, options);
    if (!child.ok()) {
      ADD_FAILURE() << child.status();
      return;
    }
    pid_ = child->pid;
    const std::string frame = common::EncodeFrame(job);
    EXPECT_EQ(write(child->stdin_fd.get(), frame.data(), frame.size()),
              static_cast<ssize_t>(frame.size()));
    child->stdin_fd.Reset();
    reader_ = std::thread([this, out = std::move(child->stdout_fd)]() mutable { Read(out.get()); });
  }
  ~RankProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);  // a no-op for a rank that has exited
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
  }

  void Kill() { kill(pid_, SIGKILL); }
  bool ended() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return ended_;
  }
  int steps() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return steps_;
  }
  std::vector<std::string> logs() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return logs_;
  }
  // The result, once it arrived within kResultDeadline.
  std::optional<v1::Measurement> Result() ABSL_LOCKS_EXCLUDED(mu_) {
    const bool arrived = testing::WaitFor(
        [this] {
          absl::MutexLock lock(&mu_);
          return result_.has_value() || ended_;
        },
        kResultDeadline);
    absl::MutexLock lock(&mu_);
    EXPECT_TRUE(arrived) << "no result within the deadline";
    return result_;
  }

 private:
  void Read(int fd) ABSL_LOCKS_EXCLUDED(mu_) {
    common::FrameDecoder decoder;
    char buffer[65536];
    for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || !decoder.Append(buffer, static_cast<size_t>(n)).ok()) break;
      for (std::string payload; decoder.Next(&payload);) {
        v1::RunnerEvent event;
        if (!event.ParseFromString(payload)) continue;
        absl::MutexLock lock(&mu_);
        if (event.has_step()) ++steps_;
        if (event.has_log()) logs_.push_back(event.log());
        if (event.has_result()) result_ = event.result();
      }
    }
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }

  pid_t pid_ = -1;
  std::thread reader_;
  absl::Mutex mu_;
  int steps_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> logs_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::Measurement> result_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

// Starts one runner per job.
inline std::vector<std::unique_ptr<RankProcess>> StartRanks(
    const std::vector<v1::RunnerJob>& jobs) {
  std::vector<std::unique_ptr<RankProcess>> ranks;
  for (const v1::RunnerJob& job : jobs) ranks.push_back(std::make_unique<RankProcess>(job));
  return ranks;
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_RANK_PROCESS_H_
