// WorkerAgent, job side (worker_agent.h): assignments and cancels from the
// coordinator, each job's runner, its progress and result, hand-backs, and
// the health check of a worker that cannot start its runner. The stream,
// heartbeats and shutdown are in worker_agent.cc.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/host_sentinel.h"
#include "common/result_limits.h"
#include "worker/worker_agent.h"

namespace paradnn::worker {

void WorkerAgent::OnAssignment(v1::JobAssignment assignment) {
  if (state_ != State::kRunning) {
    HandBack(assignment, "the worker is shutting down; the job did not start");
    return;
  }
  if (!unhealthy_reason_.empty()) {
    HandBack(assignment, absl::StrCat("the worker is unhealthy: ", unhealthy_reason_));
    return;
  }
  if (running_.has_value()) {
    spdlog::warn(
        "assignment of job {} attempt {} while job {} attempt {} runs (one job per worker); "
        "it will run next",
        assignment.job_id(), assignment.attempt_id(), running_->job_id(), running_->attempt_id());
    queued_.push_back(std::move(assignment));
    return;
  }
  StartJob(assignment);
}

void WorkerAgent::OnCancel(const v1::CancelJob& cancel) {
  if (running_.has_value() && running_->job_id() == cancel.job_id() &&
      running_->attempt_id() == cancel.attempt_id()) {
    spdlog::info("coordinator cancelled job {} attempt {}; killing its runner", cancel.job_id(),
                 cancel.attempt_id());
    supervisor_->Cancel("cancelled by the coordinator");
    return;
  }
  for (auto it = queued_.begin(); it != queued_.end(); ++it) {
    if (it->job_id() != cancel.job_id() || it->attempt_id() != cancel.attempt_id()) continue;
    v1::JobResult result;
    result.set_job_id(it->job_id());
    result.set_attempt_id(it->attempt_id());
    v1::Measurement* measurement = result.mutable_measurement();
    measurement->set_outcome(v1::CANCELLED);
    measurement->set_error("cancelled by the coordinator before it started");
    *measurement->mutable_config() = it->job().config();
    measurement->set_device(options_.device);
    queued_.erase(it);
    unacked_.Add(result);
    v1::WorkerMessage message;
    *message.mutable_result() = std::move(result);
    SendIfConnected(std::move(message));
    return;
  }
  spdlog::debug("cancel for job {} attempt {}, which is not running here", cancel.job_id(),
                cancel.attempt_id());
}

void WorkerAgent::StartJob(const v1::JobAssignment& assignment) {
  const int64_t job_id = assignment.job_id();
  const int64_t attempt_id = assignment.attempt_id();
  // The job as assigned (a gang rank's role included), with what only this
  // worker knows: its device and CPUs.
  v1::RunnerJob job = assignment.job();
  job.set_device(options_.device);
  job.set_cpus(options_.cpus);
  job.set_stream_steps(true);
  job.set_reference_probe_flops_per_sec(options_.platform.probe_flops_per_sec());
  job.set_reference_probe_threads(options_.platform.probe_threads());
  job_started_ = std::chrono::steady_clock::now();
  sentinel_.Fill(job_started_, &job);
  running_ = assignment;
  last_progress_ = std::chrono::steady_clock::time_point::min();
  spdlog::info("job {} attempt {} (sweep {}) starting", job_id, attempt_id, assignment.sweep_id());
  supervisor_ =
      RunnerSupervisor::Start(io_, options_.runner, std::move(job),
                              Guarded([this, job_id, attempt_id](const v1::StepMetric& step) {
                                OnStep(job_id, attempt_id, step);
                              }),
                              Guarded([this, job_id, attempt_id](v1::Measurement measurement) {
                                OnJobComplete(job_id, attempt_id, std::move(measurement));
                              }));
  v1::WorkerMessage message;
  message.mutable_started()->set_job_id(job_id);
  message.mutable_started()->set_attempt_id(attempt_id);
  SendIfConnected(std::move(message));
}

void WorkerAgent::OnStep(int64_t job_id, int64_t attempt_id, const v1::StepMetric& step) {
  if (!handshake_done_) return;  // progress is best effort
  const auto now = std::chrono::steady_clock::now();
  if (last_progress_ != std::chrono::steady_clock::time_point::min() &&
      now - last_progress_ < options_.progress_interval) {
    return;
  }
  last_progress_ = now;
  v1::WorkerMessage message;
  v1::JobProgress* progress = message.mutable_progress();
  progress->set_job_id(job_id);
  progress->set_attempt_id(attempt_id);
  *progress->mutable_step() = step;
  Send(std::move(message));
}

void WorkerAgent::OnJobComplete(int64_t job_id, int64_t attempt_id, v1::Measurement measurement) {
  supervisor_.reset();
  running_.reset();
  sentinel_.Record(measurement.sentinel(), job_started_, std::chrono::steady_clock::now());
  if (!warned_busy_calibration_ && SentinelMemory::BeatsCalibration(measurement.sentinel())) {
    warned_busy_calibration_ = true;
    spdlog::warn(
        "job {}: the host-speed sentinel ran at {:.0f} % of the calibration's probe: the "
        "calibration ran on a busy host and its roofs understate this one (MFU reads high); "
        "restart the worker on a quieter host to calibrate again",
        job_id, 100 * common::OwnHostSpeed(measurement.sentinel()).value_or(0));
  }
  spdlog::info("job {} attempt {} finished: {}", job_id, attempt_id,
               v1::Outcome_Name(measurement.outcome()));
  v1::JobResult result;
  result.set_job_id(job_id);
  result.set_attempt_id(attempt_id);
  // Stopped by our own shutdown (the drain time ran out): not a result of
  // the job, which goes back to the queue.
  result.set_handed_back(state_ == State::kDraining && measurement.outcome() == v1::CANCELLED);
  // A runner this worker cannot start (the binary gone, not executable, no
  // processes left) says nothing about the job: it goes back to the queue
  // for another worker, and this one takes no work until it can start one.
  // Any other outcome is the job's, GANG_BROKEN included (a peer rank
  // failed, not this worker): forwarded as it is, for the coordinator.
  const bool worker_fault = measurement.outcome() == v1::CRASHED &&
                            absl::StartsWith(measurement.error(), "could not start the runner");
  if (worker_fault) {
    result.set_handed_back(true);
    BecomeUnhealthy(measurement.error());
  }
  if (result.handed_back()) spdlog::info("handing job {} back to the coordinator", job_id);
  if (const size_t bytes = measurement.ByteSizeLong(); bytes > common::kMaxResultBytes) {
    // The coordinator takes no result this large: say so as the job's
    // result rather than send one that is refused on every reconnect.
    spdlog::error(
        "job {}: its result has {} bytes ({} samples, {} profile rows); a result may "
        "have at most {}",
        job_id, bytes, measurement.step_seconds_size(), measurement.op_profile_size(),
        common::kMaxResultBytes);
    v1::Measurement too_large;
    too_large.set_outcome(v1::ERROR);
    too_large.set_device(measurement.device());
    *too_large.mutable_config() = measurement.config();
    too_large.set_error(
        absl::StrCat("the result has ", bytes, " bytes (", measurement.step_seconds_size(),
                     " samples, ", measurement.op_profile_size(),
                     " profile rows); a result may have at most ", common::kMaxResultBytes));
    measurement = std::move(too_large);
  }
  *result.mutable_measurement() = std::move(measurement);
  unacked_.Add(result);
  v1::WorkerMessage message;
  *message.mutable_result() = std::move(result);
  SendIfConnected(std::move(message));

  if (state_ == State::kDraining) {
    drain_timer_.cancel();
    EnterFlush();
    return;
  }
  if (state_ == State::kRunning && !queued_.empty()) {
    v1::JobAssignment next = std::move(queued_.front());
    queued_.pop_front();
    StartJob(next);
  }
}

void WorkerAgent::BecomeUnhealthy(const std::string& reason) {
  if (!unhealthy_reason_.empty()) return;
  unhealthy_reason_ = reason;
  spdlog::critical(
      "the worker takes no jobs until it can start its runner again ({}); checking "
      "every {} s",
      reason, options_.health_check_interval.count() / 1000.0);
  // Heartbeats now say draining: the coordinator assigns nothing more.
  SendHeartbeat();
  ScheduleHealthCheck();
}

void WorkerAgent::ScheduleHealthCheck() {
  health_timer_.expires_after(options_.health_check_interval);
  health_timer_.async_wait(Guarded([this](const boost::system::error_code& ec) {
    if (ec || unhealthy_reason_.empty()) return;
    if (::access(options_.runner.runner_path.c_str(), X_OK) != 0) {
      ScheduleHealthCheck();
      return;
    }
    spdlog::info("runner {} is executable again; rejoining the coordinator",
                 options_.runner.runner_path);
    unhealthy_reason_.clear();
    // A new stream: the coordinator forgets this one's draining.
    if (stream_ && state_ == State::kRunning) stream_->Cancel();
  }));
}

void WorkerAgent::HandBack(const v1::JobAssignment& assignment, const std::string& reason) {
  spdlog::warn("handing job {} attempt {} back: {}", assignment.job_id(), assignment.attempt_id(),
               reason);
  v1::JobResult result;
  result.set_job_id(assignment.job_id());
  result.set_attempt_id(assignment.attempt_id());
  result.set_handed_back(true);
  v1::Measurement* measurement = result.mutable_measurement();
  measurement->set_outcome(v1::CANCELLED);
  measurement->set_error(reason);
  *measurement->mutable_config() = assignment.job().config();
  measurement->set_device(options_.device);
  unacked_.Add(result);
  v1::WorkerMessage message;
  *message.mutable_result() = std::move(result);
  SendIfConnected(std::move(message));
}

}  // namespace paradnn::worker
