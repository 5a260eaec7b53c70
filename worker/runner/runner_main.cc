// paradnn-runner: builds and times one ParaDnn model with LibTorch
// (docs/contracts.md). Modes: --job-stdin (framed protocol for the worker),
// --platform, --calibrate, and standalone measurement / --describe from flags.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/framing.h"
#include "common/logging.h"
#include "worker/runner/calibration.h"
#include "worker/runner/cli.h"
#include "worker/runner/model_counts.h"
#include "worker/runner/platform_torch.h"
#include "worker/runner/report.h"
#include "worker/runner/trainer.h"
#include "worker/zygote_server.h"

namespace paradnn::runner {
namespace {

constexpr int kExitUsage = 2;

bool WriteStdout(const std::string& text) {
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  return std::fflush(stdout) == 0 && ok;
}

// Streams steps and logs as framed RunnerEvents on `fd`.
class FrameObserver : public JobObserver {
 public:
  explicit FrameObserver(int fd) : fd_(fd) {}

  void OnStep(const v1::StepMetric& step) override {
    v1::RunnerEvent event;
    *event.mutable_step() = step;
    Write(event);
  }
  void OnLog(const std::string& line) override {
    spdlog::info("{}", line);
    v1::RunnerEvent event;
    event.set_log(line);
    Write(event);
  }

 private:
  void Write(const v1::RunnerEvent& event) {
    if (broken_) return;
    if (absl::Status s = common::WriteFrame(fd_, event); !s.ok()) {
      // The reader is gone; keep measuring quietly, the result write reports it.
      spdlog::warn("writing an event frame failed: {}", std::string(s.message()));
      broken_ = true;
    }
  }
  int fd_;
  bool broken_ = false;
};

// Logs only: standalone runs print the result at the end.
class LogObserver : public JobObserver {
 public:
  void OnStep(const v1::StepMetric&) override {}
  void OnLog(const std::string& line) override { spdlog::info("{}", line); }
};

int RunJobStdin() {
  // stdout carries frames only. Keep the real stdout on a private descriptor
  // and point fd 1 at stderr, so that anything a library prints (oneDNN
  // verbose, stray printf) cannot corrupt the frame stream.
  const int frames_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (frames_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    spdlog::error("cannot set up the frame channel on stdout");
    return 1;
  }
  v1::RunnerJob job;
  v1::Measurement result;
  absl::StatusOr<bool> got = common::ReadFrame(STDIN_FILENO, &job);
  if (!got.ok() || !*got) {
    result.set_outcome(v1::ERROR);
    result.set_device("cpu");
    result.set_error(got.ok() ? "reading the RunnerJob: stdin closed before a frame arrived"
                              : "reading the RunnerJob: " + std::string(got.status().message()));
    spdlog::error("{}", result.error());
  } else {
    FrameObserver observer(frames_fd);
    result = RunJob(job, &observer);
    spdlog::info("result: {} {}", v1::Outcome_Name(result.outcome()), result.error());
  }
  v1::RunnerEvent event;
  *event.mutable_result() = std::move(result);
  if (absl::Status s = common::WriteFrame(frames_fd, event); !s.ok()) {
    spdlog::error("writing the result frame failed: {}", std::string(s.message()));
    return 1;
  }
  close(frames_fd);
  return 0;
}

// Runs the job and leaves at once: the result is on its way, and LibTorch's
// teardown at a normal exit (static destructors, thread pools) took about
// 0.2 s per job, which the worker waits for before it reports the result.
[[noreturn]] void RunJobStdinAndExit() {
  const int code = RunJobStdin();
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

int WritePlatform(const v1::Platform& platform, bool framed) {
  if (framed) {
    absl::Status s = common::WriteFrame(STDOUT_FILENO, platform);
    if (!s.ok()) spdlog::error("writing the platform frame failed: {}", std::string(s.message()));
    return s.ok() ? 0 : 1;
  }
  absl::StatusOr<std::string> json = ToJson(platform);
  if (!json.ok()) {
    spdlog::error("{}", std::string(json.status().message()));
    return 1;
  }
  return WriteStdout(*json + "\n") ? 0 : 1;
}

int RunPlatform(bool framed) { return WritePlatform(CollectPlatform(), framed); }

int RunCalibrate(bool framed) {
  return WritePlatform(CalibratedPlatform(CalibrationOptions{}), framed);
}

int RunMeasure(const RunnerCommand& cmd) {
  LogObserver observer;
  const v1::Measurement m = RunJob(cmd.job, &observer);
  std::string text;
  if (cmd.json) {
    absl::StatusOr<std::string> json = ToJson(m);
    if (!json.ok()) {
      spdlog::error("{}", std::string(json.status().message()));
      return 1;
    }
    text = *json + "\n";
  } else {
    text = FormatSummary(m);
  }
  if (!WriteStdout(text)) return 1;
  if (m.outcome() != v1::OK) {
    spdlog::error("{}: {}", v1::Outcome_Name(m.outcome()), m.error());
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  // A worker that goes away must not kill us mid-write; writes report EPIPE.
  signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && std::strcmp(argv[1], "--zygote") == 0) {
    // The worker's zygote (worker/zygote_protocol.h): LibTorch is loaded
    // once here and each job process forked from this single thread runs
    // as --job-stdin would.
    if (absl::Status s = common::ConfigureLogging("paradnn-runner", "info"); !s.ok()) {
      return kExitUsage;
    }
    return worker::ServeZygote(STDIN_FILENO, [] () -> int { RunJobStdinAndExit(); });
  }
  absl::StatusOr<RunnerCommand> cmd = ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    std::fprintf(stderr, "paradnn-runner: %s\n", std::string(cmd.status().message()).c_str());
    return kExitUsage;
  }
  if (cmd->mode == RunnerMode::kHelp) return WriteStdout(cmd->text) ? 0 : 1;
  if (absl::Status s = common::ConfigureLogging("paradnn-runner", cmd->log_level); !s.ok()) {
    std::fprintf(stderr, "paradnn-runner: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  switch (cmd->mode) {
    case RunnerMode::kJobStdin:
      RunJobStdinAndExit();
    case RunnerMode::kPlatform:
      return RunPlatform(cmd->framed);
    case RunnerMode::kCalibrate:
      return RunCalibrate(cmd->framed);
    case RunnerMode::kDescribe:
      return WriteStdout(DescribeJson(cmd->job.config(), CountWork(cmd->spec))) ? 0 : 1;
    case RunnerMode::kMeasure:
      return RunMeasure(*cmd);
    case RunnerMode::kHelp:
      break;
  }
  return 0;
}

}  // namespace
}  // namespace paradnn::runner

int main(int argc, char** argv) { return paradnn::runner::Main(argc, argv); }
