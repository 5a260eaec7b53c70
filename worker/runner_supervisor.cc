#include "worker/runner_supervisor.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/run_settings.h"
#include "common/subprocess.h"

namespace paradnn::worker {

using common::DescribeWaitStatus;
using common::IgnoreSigpipe;
using common::SpawnChild;
using common::SpawnedChild;
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kMaxPollInterval{100};
// Longest single stderr line logged as one entry.
constexpr size_t kMaxStderrLine = 4096;

std::string DescribeConfig(const v1::RunnerJob& job) {
  std::string out = job.config().family().empty() ? "?" : job.config().family();
  for (const auto& [name, value] : job.config().params())
    absl::StrAppend(&out, " ", name, "=", value);
  return out;
}

}  // namespace

std::shared_ptr<RunnerSupervisor> RunnerSupervisor::Start(boost::asio::io_context& io,
                                                          RunnerSupervisorOptions options,
                                                          v1::RunnerJob job, StepCallback on_step,
                                                          CompletionCallback on_complete) {
  std::shared_ptr<RunnerSupervisor> supervisor(new RunnerSupervisor(
      io, std::move(options), std::move(job), std::move(on_step), std::move(on_complete)));
  supervisor->Launch();
  return supervisor;
}

RunnerSupervisor::RunnerSupervisor(boost::asio::io_context& io, RunnerSupervisorOptions options,
                                   v1::RunnerJob job, StepCallback on_step,
                                   CompletionCallback on_complete)
    : io_(io),
      options_(std::move(options)),
      job_(std::move(job)),
      on_step_(std::move(on_step)),
      on_complete_(std::move(on_complete)),
      stdin_(io),
      stdout_(io),
      stderr_(io),
      deadline_timer_(io),
      poll_timer_(io),
      drain_timer_(io),
      kill_timer_(io) {}

RunnerSupervisor::~RunnerSupervisor() {
  if (pid_ <= 0 || exited_) return;
  // Only reached when the io_context is torn down with the job still
  // running: leave no runner behind, and wait (bounded) for it to go.
  ::killpg(pid_, SIGKILL);
  const Clock::time_point give_up = Clock::now() + options_.kill_grace;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0 && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void RunnerSupervisor::Launch() {
  if (options_.deadline.has_value()) {
    deadline_ = *options_.deadline;
  } else {
    deadline_ = std::chrono::duration<double>(common::JobDeadlineSeconds(job_.settings()));
  }
  IgnoreSigpipe();
  absl::StatusOr<SpawnedChild> child = absl::UnavailableError("no runner zygote");
  if (!job_.config().stack().empty()) {
    // The libraries read their settings when the process starts: a fresh
    // runner in the job's environment, never the zygote.
    absl::StatusOr<std::vector<std::string>> environment =
        JobEnvironment(CurrentEnvironment(), options_.stack_choices, job_.config().stack());
    if (!environment.ok()) {
      stack_error_ = std::string(environment.status().message());
      spdlog::error("job ({}): {}", DescribeConfig(job_), stack_error_);
      boost::asio::post(io_, [self = shared_from_this()] { self->Complete(); });
      return;
    }
    common::SpawnOptions spawn;
    spawn.address_space_limit_bytes = options_.memory_limit_bytes;
    spawn.environment = &*environment;
    child = SpawnChild({options_.runner_path, "--job-stdin"}, spawn);
  } else {
    if (options_.zygote) {
      child = options_.zygote->Spawn(options_.memory_limit_bytes);
      if (!child.ok()) {
        spdlog::warn("{}; starting the runner afresh", std::string(child.status().message()));
      }
    }
    if (!child.ok()) {
      common::SpawnOptions spawn;
      spawn.address_space_limit_bytes = options_.memory_limit_bytes;
      child = SpawnChild({options_.runner_path, "--job-stdin"}, spawn);
    }
  }
  if (!child.ok()) {
    spawn_error_ = std::string(child.status().message());
    spdlog::error("could not start the runner for job ({}): {}", DescribeConfig(job_),
                  spawn_error_);
    // The completion callback always runs from the io_context, never from
    // inside Start.
    boost::asio::post(io_, [self = shared_from_this()] { self->Complete(); });
    return;
  }
  pid_ = child->pid;
  stdin_.assign(child->stdin_fd.Release());
  stdout_.assign(child->stdout_fd.Release());
  stderr_.assign(child->stderr_fd.Release());
  stdout_open_ = true;
  stderr_open_ = true;
  spdlog::info("runner pid {} started: {} on {}{}{} (deadline {:.1f} s)", pid_,
               DescribeConfig(job_), job_.device().empty() ? "default device" : job_.device(),
               job_.cpus().empty() ? "" : ", CPUs " + job_.cpus(),
               job_.has_gang()
                   ? absl::StrCat(", gang rank ", job_.gang().host_rank(), " of ",
                                  job_.gang().hosts(), " (", job_.gang().gang_tag(), ")")
                   : "",
               deadline_.count());

  WriteJob();
  ReadStdout();
  ReadStderr();
  ArmDeadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(deadline_));
  SchedulePoll(poll_interval_);
}

void RunnerSupervisor::WriteJob() {
  job_frame_ = common::EncodeFrame(job_);
  boost::asio::async_write(
      stdin_, boost::asio::buffer(job_frame_),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
        if (ec && ec != boost::asio::error::operation_aborted) {
          // The runner died before reading its job; its
          // exit status tells the story.
          spdlog::warn("runner pid {}: writing the job to stdin failed: {}", self->pid_,
                       ec.message());
        }
        boost::system::error_code ignored;
        self->stdin_.close(ignored);
      });
}

void RunnerSupervisor::ReadStdout() {
  stdout_.async_read_some(boost::asio::buffer(stdout_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      size_t bytes) { self->OnStdout(ec, bytes); });
}

void RunnerSupervisor::OnStdout(const boost::system::error_code& ec, size_t bytes) {
  if (!stdout_open_) return;  // closed by us (protocol error, drain grace, completion)
  if (bytes > 0) {
    if (absl::Status s = decoder_.Append(stdout_buffer_.data(), bytes); !s.ok()) {
      ProtocolError(absl::StrCat("stdout is not a stream of length-prefixed RunnerEvent frames (",
                                 s.message(), ")"));
      return;
    }
    std::string payload;
    while (stdout_open_ && decoder_.Next(&payload)) HandleEvent(payload);
    if (!stdout_open_) return;
  }
  if (ec) {
    if (ec != boost::asio::error::eof) {
      spdlog::warn("runner pid {}: reading stdout failed: {}", pid_, ec.message());
    }
    if (decoder_.buffered_bytes() > 0 && protocol_error_.empty()) {
      protocol_error_ = absl::StrCat("stdout ended inside a frame (", decoder_.buffered_bytes(),
                                     " bytes left over)");
    }
    stdout_open_ = false;
    boost::system::error_code ignored;
    stdout_.close(ignored);
    // The runner usually exits right as its stdout closes: look now.
    poll_interval_ = std::chrono::milliseconds(1);
    SchedulePoll(std::chrono::milliseconds(0));
    MaybeComplete();
    return;
  }
  ReadStdout();
}

void RunnerSupervisor::HandleEvent(const std::string& payload) {
  v1::RunnerEvent event;
  if (!event.ParseFromString(payload)) {
    ProtocolError(absl::StrCat("a ", payload.size(),
                               "-byte frame on stdout does not parse as a RunnerEvent"));
    return;
  }
  switch (event.event_case()) {
    case v1::RunnerEvent::kStep:
      if (on_step_ && !completed_) on_step_(event.step());
      break;
    case v1::RunnerEvent::kResult:
      if (result_.has_value()) {
        spdlog::warn("runner pid {} wrote a second result; keeping the first", pid_);
        break;
      }
      result_ = event.result();
      spdlog::debug("runner pid {} reported outcome {}", pid_,
                    v1::Outcome_Name(result_->outcome()));
      // The result is in; the runner now only has to exit.
      ArmDeadline(std::min(
          deadline_timer_.expiry(),
          Clock::now() + std::chrono::duration_cast<Clock::duration>(options_.post_result_grace)));
      break;
    case v1::RunnerEvent::kLog:
      spdlog::info("runner[{}]: {}", pid_, event.log());
      break;
    case v1::RunnerEvent::EVENT_NOT_SET:
      // An event kind from a newer runner; nothing this worker can use.
      spdlog::debug("runner pid {}: ignoring an event of unknown kind", pid_);
      break;
  }
}

void RunnerSupervisor::ReadStderr() {
  stderr_.async_read_some(boost::asio::buffer(stderr_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      size_t bytes) { self->OnStderr(ec, bytes); });
}

void RunnerSupervisor::OnStderr(const boost::system::error_code& ec, size_t bytes) {
  if (!stderr_open_) return;
  if (bytes > 0) {
    stderr_tail_.append(stderr_buffer_.data(), bytes);
    if (stderr_tail_.size() > kStderrTailBytes)
      stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
    stderr_line_.append(stderr_buffer_.data(), bytes);
    size_t newline;
    while ((newline = stderr_line_.find('\n')) != std::string::npos) {
      LogStderrLine(stderr_line_.substr(0, newline));
      stderr_line_.erase(0, newline + 1);
    }
    if (stderr_line_.size() > kMaxStderrLine) {
      LogStderrLine(stderr_line_);
      stderr_line_.clear();
    }
  }
  if (ec) {
    if (!stderr_line_.empty()) LogStderrLine(stderr_line_);
    stderr_line_.clear();
    stderr_open_ = false;
    boost::system::error_code ignored;
    stderr_.close(ignored);
    MaybeComplete();
    return;
  }
  ReadStderr();
}

void RunnerSupervisor::LogStderrLine(const std::string& line) {
  if (absl::StripAsciiWhitespace(line).empty()) return;
  spdlog::info("runner[{}] stderr: {}", pid_,
               std::string(absl::StripTrailingAsciiWhitespace(line)));
}

void RunnerSupervisor::ArmDeadline(Clock::time_point when) {
  deadline_timer_.expires_at(when);
  deadline_timer_.async_wait(
      [self = shared_from_this()](const boost::system::error_code& ec) { self->OnDeadline(ec); });
}

void RunnerSupervisor::OnDeadline(const boost::system::error_code& ec) {
  if (ec == boost::asio::error::operation_aborted || completed_ || exited_) return;
  // A handler queued just before a re-arm to a later time is stale.
  if (deadline_timer_.expiry() > Clock::now()) return;
  if (result_.has_value()) {
    spdlog::warn("runner pid {} wrote its result but did not exit within {} ms; killing it", pid_,
                 options_.post_result_grace.count());
    Kill(StopReason::kLingered);
  } else {
    spdlog::warn("runner pid {} passed the job deadline of {:.1f} s; killing its process group",
                 pid_, deadline_.count());
    Kill(StopReason::kTimeout);
  }
}

void RunnerSupervisor::SchedulePoll(std::chrono::milliseconds delay) {
  poll_timer_.expires_after(delay);
  poll_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    self->PollExit();
  });
}

void RunnerSupervisor::PollExit() {
  if (exited_ || pid_ <= 0) return;
  // Peek first (WNOWAIT): while the exited leader is an unreaped zombie its
  // process-group id cannot be reused, so killing the group is safe.
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  int r;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    // ECHILD: someone else in this process reaped it (waitpid(-1) or
    // SIGCHLD set to SIG_IGN); the status is lost but the runner is gone.
    spdlog::error("runner pid {}: waitid failed ({}); treating it as exited", pid_,
                  std::strerror(errno));
    exited_ = true;
    wait_status_ = -1;
  } else if (info.si_pid == pid_) {
    // Descendants left in the group would disturb the next measurement.
    ::killpg(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exited_ = true;
    wait_status_ = status;
    spdlog::debug("runner pid {} {}", pid_, DescribeWaitStatus(status));
  }
  if (!exited_) {
    poll_interval_ = std::min(poll_interval_ * 2, kMaxPollInterval);
    SchedulePoll(poll_interval_);
    return;
  }
  kill_timer_.cancel();
  if (completed_) return;  // gave up waiting earlier; now it is reaped
  if (stdout_open_ || stderr_open_) {
    // Normally EOF follows at once; a descendant that escaped the group
    // could hold the pipes open forever.
    drain_timer_.expires_after(options_.pipe_drain_grace);
    drain_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->completed_) return;
      spdlog::warn("runner pid {} exited but its output pipes stayed open for {} ms; closing them",
                   self->pid_, self->options_.pipe_drain_grace.count());
      boost::system::error_code ignored;
      self->stdout_open_ = false;
      self->stdout_.close(ignored);
      self->stderr_open_ = false;
      self->stderr_.close(ignored);
      self->MaybeComplete();
    });
  }
  MaybeComplete();
}

void RunnerSupervisor::ProtocolError(const std::string& message) {
  if (protocol_error_.empty()) protocol_error_ = message;
  spdlog::warn("runner pid {}: {}; killing it", pid_, message);
  stdout_open_ = false;
  boost::system::error_code ignored;
  stdout_.close(ignored);
  Kill(StopReason::kProtocolError);
  MaybeComplete();
}

void RunnerSupervisor::Cancel(const std::string& reason) {
  if (completed_) return;
  if (stop_reason_ == StopReason::kNone) cancel_reason_ = reason;
  Kill(StopReason::kCancelled);
}

void RunnerSupervisor::Kill(StopReason reason) {
  if (stop_reason_ == StopReason::kNone) stop_reason_ = reason;
  if (pid_ <= 0 || exited_ || killed_) return;
  ::killpg(pid_, SIGKILL);
  killed_ = true;
  poll_interval_ = std::chrono::milliseconds(1);
  SchedulePoll(poll_interval_);
  kill_timer_.expires_after(options_.kill_grace);
  kill_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->exited_ || self->completed_) return;
    spdlog::error(
        "runner pid {} did not die within {} ms of SIGKILL (stuck in the kernel?); "
        "completing the job without it",
        self->pid_, self->options_.kill_grace.count());
    self->gave_up_waiting_ = true;
    self->Complete();
  });
}

void RunnerSupervisor::MaybeComplete() {
  if (completed_ || !exited_ || stdout_open_ || stderr_open_) return;
  Complete();
}

void RunnerSupervisor::Complete() {
  if (completed_) return;
  completed_ = true;
  boost::system::error_code ignored;
  deadline_timer_.cancel();
  drain_timer_.cancel();
  kill_timer_.cancel();
  stdin_.close(ignored);
  stdout_open_ = false;
  stdout_.close(ignored);
  stderr_open_ = false;
  stderr_.close(ignored);
  // When the runner did not die after SIGKILL the poll timer keeps running
  // so that it is reaped whenever it finally goes.

  v1::Measurement measurement = BuildMeasurement();
  if (measurement.outcome() == v1::OK) {
    spdlog::info("runner pid {} finished: OK, {:.1f} examples/s", pid_,
                 measurement.examples_per_sec());
  } else {
    spdlog::warn("runner pid {} finished: {}{}{}", pid_, v1::Outcome_Name(measurement.outcome()),
                 measurement.error().empty() ? "" : ": ", measurement.error());
  }
  if (result_.has_value() && exited_ && wait_status_ != 0 && !killed_) {
    spdlog::warn("runner pid {} {} after writing its result; the result stands", pid_,
                 DescribeWaitStatus(wait_status_));
  }
  on_step_ = nullptr;
  CompletionCallback callback = std::move(on_complete_);
  on_complete_ = nullptr;
  if (callback) callback(std::move(measurement));
}

std::string RunnerSupervisor::StderrTail() const {
  return std::string(absl::StripAsciiWhitespace(stderr_tail_));
}

v1::Measurement RunnerSupervisor::BuildMeasurement() const {
  v1::Measurement m;
  if (result_.has_value()) {
    m = *result_;
    if (!m.has_config()) *m.mutable_config() = job_.config();
    if (m.device().empty()) m.set_device(job_.device());
    return m;
  }
  *m.mutable_config() = job_.config();
  m.set_device(job_.device());
  std::string error;
  if (!stack_error_.empty()) {
    // The job's settings, not the runner: a result of the job.
    m.set_outcome(v1::ERROR);
    error = stack_error_;
  } else if (!spawn_error_.empty()) {
    m.set_outcome(v1::CRASHED);
    error = absl::StrCat("could not start the runner: ", spawn_error_);
  } else {
    switch (stop_reason_) {
      case StopReason::kCancelled:
        m.set_outcome(v1::CANCELLED);
        error = cancel_reason_.empty() ? "cancelled" : cancel_reason_;
        break;
      case StopReason::kTimeout:
        m.set_outcome(v1::TIMEOUT);
        error = absl::StrCat("runner passed the job deadline of ", deadline_.count(),
                             " s and was killed");
        break;
      case StopReason::kProtocolError:
        m.set_outcome(v1::CRASHED);
        error = absl::StrCat("runner wrote invalid output: ", protocol_error_);
        break;
      case StopReason::kLingered:  // only set once a result arrived
      case StopReason::kNone: {
        m.set_outcome(v1::CRASHED);
        if (wait_status_ == -1) {
          error =
              "runner exited (its status was lost: reaped elsewhere in the worker) without a "
              "result";
        } else if (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0) {
          error = "runner exited with status 0 without writing a result";
        } else {
          error = absl::StrCat("runner ", DescribeWaitStatus(wait_status_));
          if (WIFSIGNALED(wait_status_) && WTERMSIG(wait_status_) == SIGKILL) {
            absl::StrAppend(
                &error,
                ": possibly out of memory (the kernel's OOM killer sends SIGKILL; check dmesg)");
          }
        }
        if (!protocol_error_.empty()) absl::StrAppend(&error, "; ", protocol_error_);
        break;
      }
    }
  }
  if (gave_up_waiting_) {
    absl::StrAppend(&error, "; runner pid ", pid_, " did not die within ",
                    options_.kill_grace.count(), " ms of SIGKILL");
  }
  if (const std::string tail = StderrTail();
      !tail.empty() && stop_reason_ != StopReason::kCancelled) {
    absl::StrAppend(&error, "; stderr: ", tail);
  }
  m.set_error(error);
  return m;
}

}  // namespace paradnn::worker
