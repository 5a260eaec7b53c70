// RunnerZygote against the fake runner's zygote mode: job processes are
// children of this process, in their own process groups, with the
// requested address-space limit; they speak the runner protocol; a runner
// without the mode, or a zygote that died, is reported as unavailable and
// the supervisor then starts a fresh runner.
#include "worker/runner_zygote.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "common/framing.h"
#include "paradnn/v1/metrics.pb.h"
#include "tests/unit/worker/fake_runner_path.h"
#include "worker/runner_supervisor.h"

namespace paradnn::worker {

using common::SpawnedChild;
namespace {

using std::chrono::seconds;

// Field 4 of /proc/PID/stat: the parent pid.
pid_t ParentOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(text.substr(close_paren + 2));
  std::string state;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

std::string AddressSpaceLimitLine(pid_t pid) {
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(limits, line);) {
    if (line.rfind("Max address space", 0) == 0) return line;
  }
  return "";
}

v1::RunnerJob OkJob() {
  v1::RunnerJob job;
  job.mutable_config()->set_family("fc");
  (*job.mutable_config()->mutable_params())["layer"] = 4;
  (*job.mutable_config()->mutable_options())["behavior"] = "ok";
  job.mutable_settings()->set_timeout_seconds(20);
  job.set_device("cpu");
  return job;
}

TEST(RunnerZygoteTest, ForksJobProcessesThatAreOurChildrenInTheirOwnGroups) {
  absl::StatusOr<std::unique_ptr<RunnerZygote>> zygote =
      RunnerZygote::Start(PARADNN_FAKE_RUNNER, seconds(20));
  ASSERT_TRUE(zygote.ok()) << zygote.status();
  for (int job = 0; job < 3; ++job) {
    absl::StatusOr<SpawnedChild> child = (*zygote)->Spawn(int64_t{512} << 20);
    ASSERT_TRUE(child.ok()) << child.status();
    EXPECT_NE(child->pid, (*zygote)->pid());
    EXPECT_EQ(ParentOf(child->pid), ::getpid()) << "adopted by this process (subreaper)";
    EXPECT_EQ(::getpgid(child->pid), child->pid) << "leader of its own process group";
    // The job process sets its limit itself, possibly after the reply.
    std::string limit_line;
    for (int i = 0; i < 500; ++i) {
      limit_line = AddressSpaceLimitLine(child->pid);
      if (limit_line.find("536870912") != std::string::npos) break;
      ::usleep(10'000);
    }
    EXPECT_NE(limit_line.find("536870912"), std::string::npos) << limit_line;

    ASSERT_TRUE(common::WriteFrame(child->stdin_fd.get(), OkJob()).ok());
    child->stdin_fd.Reset();
    v1::RunnerEvent event;
    bool got_result = false;
    for (;;) {
      absl::StatusOr<bool> read = common::ReadFrame(child->stdout_fd.get(), &event);
      ASSERT_TRUE(read.ok()) << read.status();
      if (!*read) break;
      if (event.has_result()) got_result = true;
    }
    EXPECT_TRUE(got_result);
    EXPECT_EQ(event.result().outcome(), v1::OK);
    int status = 0;
    ASSERT_EQ(::waitpid(child->pid, &status, 0), child->pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
}

TEST(RunnerZygoteTest, RunnerWithoutTheModeIsUnavailable) {
  ::setenv("FAKE_RUNNER_ZYGOTE", "off", 1);
  absl::StatusOr<std::unique_ptr<RunnerZygote>> zygote =
      RunnerZygote::Start(PARADNN_FAKE_RUNNER, seconds(20));
  ::unsetenv("FAKE_RUNNER_ZYGOTE");
  ASSERT_FALSE(zygote.ok());
  EXPECT_EQ(zygote.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(zygote.status().message().find("no zygote mode"), std::string::npos) << zygote.status();
}

TEST(RunnerZygoteTest, SupervisorStartsAFreshRunnerWhenTheZygoteDied) {
  absl::StatusOr<std::unique_ptr<RunnerZygote>> started =
      RunnerZygote::Start(PARADNN_FAKE_RUNNER, seconds(20));
  ASSERT_TRUE(started.ok()) << started.status();
  std::shared_ptr<RunnerZygote> zygote = std::move(*started);
  ASSERT_EQ(::kill(zygote->pid(), SIGKILL), 0);
  EXPECT_FALSE(zygote->Spawn(0).ok());

  RunnerSupervisorOptions options;
  options.runner_path = PARADNN_FAKE_RUNNER;
  options.zygote = zygote;
  boost::asio::io_context io;
  v1::Measurement result;
  auto supervisor = RunnerSupervisor::Start(io, options, OkJob(), nullptr,
                                            [&](v1::Measurement m) { result = std::move(m); });
  io.run_for(seconds(20));
  EXPECT_TRUE(supervisor->completed());
  EXPECT_EQ(result.outcome(), v1::OK) << result.error();
}

}  // namespace
}  // namespace paradnn::worker
