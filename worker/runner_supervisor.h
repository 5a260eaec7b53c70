// RunnerSupervisor runs ONE job in a fresh `paradnn-runner --job-stdin`
// child (started, or forked from a RunnerZygote) and turns whatever the
// child does into exactly one Measurement.
//
// The child runs in its own process group. The supervisor writes the framed
// RunnerJob to its stdin and closes it, decodes framed RunnerEvents from its
// stdout (steps go to the step callback, the result is kept), logs its
// stderr line by line (keeping the last 4 KiB for error messages), enforces
// the job deadline (common::JobDeadlineSeconds) with SIGKILL to the whole
// group, and reaps the child without blocking the io_context.
//
// The final Measurement is the runner's result if one arrived (its `config`
// filled from the job when the runner left it empty); otherwise:
//   CANCELLED  Cancel() was called,
//   TIMEOUT    the deadline passed,
//   ERROR      the job's stack settings cannot be applied (the reason),
//   CRASHED    the runner died from a signal, exited (with any status)
//              without a result, wrote bytes that are not RunnerEvent
//              frames, or could not be started.
// `error` then names the cause ("runner killed by signal 9 (SIGKILL,
// Killed): possibly out of memory ...", "runner exited with status 3")
// followed by the runner's stderr tail. `config` and `device` are always
// filled from the job.
//
// Contract: the completion callback is called exactly once, on the thread
// running the io_context and never from inside Start or Cancel, after the
// child has been reaped (or, if it does not die within `kill_grace` of
// SIGKILL, with that noted in `error`). Step callbacks only come before it.
// The supervisor keeps itself alive (shared_from_this) until its work is
// done, so dropping the last external reference does not stop the job;
// Cancel() does. If the io_context is destroyed first, the destructor kills
// the runner and no callback runs.
//
// Thread-safety: not thread-safe. Start, Cancel and the accessors must be
// called on the thread that runs `io` (or before `io` runs).
#ifndef PARADNN_WORKER_RUNNER_SUPERVISOR_H_
#define PARADNN_WORKER_RUNNER_SUPERVISOR_H_

#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/framing.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/runner_zygote.h"
#include "worker/stack_environment.h"

namespace paradnn::worker {

struct RunnerSupervisorOptions {
  // The paradnn-runner executable (or a stand-in speaking its protocol).
  std::string runner_path;
  // A runner that has written its result must exit within this; then it is
  // killed and its result still counts.
  std::chrono::milliseconds post_result_grace{10'000};
  // After the runner has exited, how long its pipes may stay open (held by
  // a descendant that left the process group) before they are closed.
  std::chrono::milliseconds pipe_drain_grace{2'000};
  // After SIGKILL, how long to wait for the runner to die before completing
  // anyway (a process stuck in the kernel, e.g. in a GPU driver, can outlive
  // SIGKILL); it is still reaped in the background.
  std::chrono::milliseconds kill_grace{10'000};
  // > 0: the runner's virtual memory limit (RLIMIT_AS), so a model that does
  // not fit fails with the OOM outcome and the host stays healthy.
  int64_t memory_limit_bytes = 0;
  // Overrides common::JobDeadlineSeconds(job.settings) when set (tests).
  std::optional<std::chrono::milliseconds> deadline;
  // Set: job processes are forked from this zygote of runner_path (no
  // start-up per job); a zygote that fails falls back to a fresh runner.
  // A job whose config varies the stack (ModelConfig.stack) always starts a
  // fresh runner, in the environment JobEnvironment computes from these
  // choices; a job whose stack cannot be applied completes as ERROR.
  std::shared_ptr<RunnerZygote> zygote;
  StackChoices stack_choices;
};

class RunnerSupervisor : public std::enable_shared_from_this<RunnerSupervisor> {
 public:
  using StepCallback = std::function<void(const v1::StepMetric& step)>;
  using CompletionCallback = std::function<void(v1::Measurement measurement)>;

  // Bytes of runner stderr kept for error messages.
  static constexpr size_t kStderrTailBytes = 4096;

  // Starts `job` in a new runner. Never fails: a runner that cannot be
  // started completes (asynchronously, on `io`) with outcome CRASHED and
  // the reason. `on_step` may be empty.
  static std::shared_ptr<RunnerSupervisor> Start(boost::asio::io_context& io,
                                                 RunnerSupervisorOptions options, v1::RunnerJob job,
                                                 StepCallback on_step,
                                                 CompletionCallback on_complete);

  RunnerSupervisor(const RunnerSupervisor&) = delete;
  RunnerSupervisor& operator=(const RunnerSupervisor&) = delete;
  // Kills the process group and reaps the child if it is still there
  // (blocking only for an already SIGKILLed process); no callback runs.
  ~RunnerSupervisor();

  // Kills the runner; the job completes with outcome CANCELLED and `reason`
  // in `error` (unless the runner's result already arrived, which then
  // stands). No-op once completed.
  void Cancel(const std::string& reason);

  // The child's pid, which is also its process-group id; -1 if it never
  // started.
  pid_t pid() const { return pid_; }
  bool completed() const { return completed_; }

 private:
  enum class StopReason { kNone, kCancelled, kTimeout, kProtocolError, kLingered };

  RunnerSupervisor(boost::asio::io_context& io, RunnerSupervisorOptions options, v1::RunnerJob job,
                   StepCallback on_step, CompletionCallback on_complete);

  void Launch();
  void WriteJob();
  void ReadStdout();
  void OnStdout(const boost::system::error_code& ec, size_t bytes);
  void HandleEvent(const std::string& payload);
  void ReadStderr();
  void OnStderr(const boost::system::error_code& ec, size_t bytes);
  void LogStderrLine(const std::string& line);
  void ArmDeadline(std::chrono::steady_clock::time_point when);
  void OnDeadline(const boost::system::error_code& ec);
  void SchedulePoll(std::chrono::milliseconds delay);
  void PollExit();
  void ProtocolError(const std::string& message);
  void Kill(StopReason reason);
  void MaybeComplete();
  void Complete();
  v1::Measurement BuildMeasurement() const;
  std::string StderrTail() const;

  boost::asio::io_context& io_;
  const RunnerSupervisorOptions options_;
  const v1::RunnerJob job_;
  StepCallback on_step_;
  CompletionCallback on_complete_;
  std::chrono::duration<double> deadline_{0};

  pid_t pid_ = -1;
  std::string spawn_error_;
  std::string stack_error_;
  bool exited_ = false;
  int wait_status_ = 0;
  bool killed_ = false;  // SIGKILL sent by us
  bool completed_ = false;
  bool gave_up_waiting_ = false;
  StopReason stop_reason_ = StopReason::kNone;
  std::string cancel_reason_;

  boost::asio::posix::stream_descriptor stdin_;
  boost::asio::posix::stream_descriptor stdout_;
  boost::asio::posix::stream_descriptor stderr_;
  bool stdout_open_ = false;
  bool stderr_open_ = false;
  std::string job_frame_;
  std::array<char, 64 * 1024> stdout_buffer_;
  std::array<char, 4096> stderr_buffer_;
  common::FrameDecoder decoder_;
  std::optional<v1::Measurement> result_;
  std::string protocol_error_;
  std::string stderr_tail_;
  std::string stderr_line_;

  boost::asio::steady_timer deadline_timer_;
  boost::asio::steady_timer poll_timer_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::steady_timer kill_timer_;
  std::chrono::milliseconds poll_interval_{1};
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_RUNNER_SUPERVISOR_H_
