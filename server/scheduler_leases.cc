// Scheduler, lease side: offering pending jobs to idle workers, granting
// and sending assignments (with their uploaded model, read off the writer
// thread), predicted-OOM skips, releases, expiry and cancellation. The
// stream side (hello, heartbeats, results) is in scheduler.cc.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/stack_findings.h"
#include "db/model_store.h"
#include "server/scheduler.h"

namespace paradnn::server {
namespace {

bool PredictedOom(const db::Lease& lease, int64_t memory_bytes) {
  return !lease.run_predicted_oom && memory_bytes > 0 &&
         common::ProcessMemoryEstimateBytes(lease.peak_memory_estimate_bytes) >
             static_cast<double>(memory_bytes);
}

// The assignment of `granted`, without an uploaded model's bytes.
v1::CoordinatorMessage AssignmentMessage(const db::Lease& granted) {
  v1::CoordinatorMessage message;
  v1::JobAssignment* assignment = message.mutable_assignment();
  assignment->set_job_id(granted.job_id);
  assignment->set_attempt_id(granted.attempt_id);
  assignment->set_sweep_id(granted.sweep_id);
  *assignment->mutable_job()->mutable_config() = granted.config;
  *assignment->mutable_job()->mutable_settings() = granted.settings;
  assignment->mutable_job()->set_device(granted.device);
  assignment->mutable_job()->set_stream_steps(true);
  return message;
}

}  // namespace

void Scheduler::OfferPendingJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [worker_id, worker] : workers_) TryAssignLocked(worker_id, worker);
}

bool Scheduler::MayLeaseLocked(const WorkerState& worker, int64_t settling_attempt) const {
  if (!assigning_ || !worker.session || !worker.ready || worker.leasing || worker.silent ||
      worker.draining || !worker.results_in_flight.empty()) {
    return false;
  }
  return std::all_of(worker.open_attempts.begin(), worker.open_attempts.end(),
                     [settling_attempt](int64_t open) { return open == settling_attempt; });
}

void Scheduler::TryAssignLocked(const std::string& worker_id, WorkerState& worker) {
  if (!MayLeaseLocked(worker, /*settling_attempt=*/0)) return;
  worker.leasing = true;
  const int64_t now = clock_->NowUnixMs();
  const uint64_t serial = worker.session->stream_serial();
  jobs_.LeaseNext(worker.device_kind, worker_id, now, StoredLeaseDeadline(now),
                  [this, worker_id, serial](absl::StatusOr<std::optional<db::Lease>> lease) {
                    OnLeaseGranted(worker_id, serial, std::move(lease));
                  });
}

void Scheduler::OnLeaseGranted(const std::string& worker_id, uint64_t stream_serial,
                               absl::StatusOr<std::optional<db::Lease>> lease) {
  if (!lease.ok()) {
    spdlog::error("leasing a job for {}: {}", worker_id, lease.status().ToString());
    std::lock_guard<std::mutex> lock(mu_);
    workers_[worker_id].leasing = false;  // ExpireLeases' periodic offer retries
    return;
  }
  const int reused = lease->has_value() ? (*lease)->reused_results : 0;
  if (reused > 0) {
    results_stored_.fetch_add(reused, std::memory_order_relaxed);
    spdlog::info("{} job(s) took results measured by earlier sweeps", reused);
  }
  if (!db::HasJob(*lease)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      WorkerState& worker = workers_[worker_id];
      worker.leasing = false;
      // Jobs took results but none is running here: more may be pending
      // (a lease reuses at most a few hundred at a time). Each round takes
      // at least one job, so this ends.
      if (reused > 0 && worker.session && worker.session->stream_serial() == stream_serial) {
        TryAssignLocked(worker_id, worker);
      }
    }
    if (reused > 0) NotifyChange();
    return;
  }
  if (reused > 0) NotifyChange();
  const db::Lease& granted = **lease;
  std::shared_ptr<WorkerSession> session;
  bool predicted_oom = false;
  int64_t platform_id = 0;
  int64_t memory_bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    WorkerState& worker = workers_[worker_id];
    worker.leasing = false;
    if (worker.session && worker.session->stream_serial() == stream_serial && assigning_) {
      session = worker.session;
      // The floor stays the earliest deadline among the open attempts.
      worker.stored_deadline_floor_ms =
          worker.open_attempts.empty()
              ? granted.lease_deadline_unix_ms
              : std::min(worker.stored_deadline_floor_ms, granted.lease_deadline_unix_ms);
      worker.open_attempts.insert(granted.attempt_id);
      worker.attempt_job[granted.attempt_id] = granted.job_id;
      attempt_owner_[granted.attempt_id] = worker_id;
      predicted_oom = PredictedOom(granted, worker.memory_bytes);
      // Held like a result being committed: no other lease for this worker
      // meanwhile, and lease expiry leaves the attempt alone.
      if (predicted_oom) worker.results_in_flight.insert(granted.attempt_id);
      platform_id = worker.platform_id;
      memory_bytes = worker.memory_bytes;
    }
  }
  if (predicted_oom) {
    SkipPredictedOom(worker_id, platform_id, memory_bytes, granted);
    NotifyChange();
    return;
  }
  v1::CoordinatorMessage message = AssignmentMessage(granted);
  if (session && granted.config.has_torchscript()) {
    // An uploaded model is up to --max-model-bytes read from SQLite: not on
    // the writer thread this runs on (inline only while the coordinator
    // stops, after FinishModelReads).
    std::unique_lock<std::mutex> lock(mu_);
    if (model_reads_) {
      model_reads_->Run([this, worker_id, session, granted, message]() mutable {
        AttachModel(granted, &message);
        SendAssignment(worker_id, session, granted, message);
      });
      return;
    }
    lock.unlock();
    AttachModel(granted, &message);
  }
  SendAssignment(worker_id, session, granted, message);
}

void Scheduler::AttachModel(const db::Lease& granted, v1::CoordinatorMessage* message) const {
  // Models are stored once by hash and never deleted; without the bytes the
  // runner reports the job as ERROR, naming the missing model.
  absl::StatusOr<std::string> content =
      db::ModelStore(database_).LoadContent(granted.config.torchscript().sha256());
  if (content.ok()) {
    message->mutable_assignment()->mutable_job()->set_torchscript_content(*std::move(content));
  } else {
    spdlog::error("job {}: loading its TorchScript model: {}", granted.job_id,
                  content.status().ToString());
  }
}

void Scheduler::SendAssignment(const std::string& worker_id,
                               const std::shared_ptr<WorkerSession>& session,
                               const db::Lease& granted, const v1::CoordinatorMessage& message) {
  if (session && session->Send(message)) {
    spdlog::info("assigned job {} (attempt {}) to {}", granted.job_id, granted.attempt_id,
                 worker_id);
  } else {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ForgetAttemptLocked(granted.attempt_id);
    }
    Release(granted.attempt_id, "worker gone before the assignment was sent");
  }
  NotifyChange();
}

void Scheduler::SkipPredictedOom(const std::string& worker_id, int64_t platform_id,
                                 int64_t memory_bytes, const db::Lease& lease) {
  v1::Measurement measurement;
  measurement.set_outcome(v1::PREDICTED_OOM);
  measurement.set_error(PredictedOomError(
      common::ProcessMemoryEstimateBytes(lease.peak_memory_estimate_bytes), memory_bytes));
  *measurement.mutable_config() = lease.config;
  measurement.set_device(lease.device);
  v1::ModelCounts* counts = measurement.mutable_counts();
  counts->set_params(lease.params);
  counts->set_model_flops(lease.model_flops);
  counts->set_peak_memory_estimate_bytes(lease.peak_memory_estimate_bytes);
  spdlog::info("job {} (attempt {}) not sent to {}: {}", lease.job_id, lease.attempt_id, worker_id,
               measurement.error());
  const int64_t job_id = lease.job_id;
  const int64_t attempt_id = lease.attempt_id;
  results_.Store(job_id, attempt_id, worker_id, platform_id, measurement, clock_->NowUnixMs(),
                 [this, worker_id, job_id, attempt_id](absl::StatusOr<db::StoreOutcome> stored) {
                   {
                     std::lock_guard<std::mutex> lock(mu_);
                     workers_[worker_id].results_in_flight.erase(attempt_id);
                     ForgetAttemptLocked(attempt_id);
                   }
                   if (stored.ok() && *stored == db::StoreOutcome::kStored) {
                     results_stored_.fetch_add(1, std::memory_order_relaxed);
                   }
                   if (!stored.ok()) {
                     spdlog::error("storing the PREDICTED_OOM result of job {} attempt {}: {}",
                                   job_id, attempt_id, stored.status().ToString());
                     // Back to the queue; it is judged again when next leased.
                     Release(attempt_id, "storing its PREDICTED_OOM result failed");
                   }
                   {
                     std::lock_guard<std::mutex> lock(mu_);
                     auto it = workers_.find(worker_id);
                     if (it != workers_.end()) TryAssignLocked(worker_id, it->second);
                   }
                   NotifyChange();
                 });
}

void Scheduler::Release(int64_t attempt_id, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!releasing_.insert(attempt_id).second) return;
  }
  jobs_.Release(attempt_id, reason, clock_->NowUnixMs(), options_.max_attempts,
                [this, attempt_id, reason](absl::StatusOr<v1::JobState> state) {
                  {
                    std::lock_guard<std::mutex> lock(mu_);
                    releasing_.erase(attempt_id);
                  }
                  if (!state.ok()) {
                    spdlog::error("releasing attempt {}: {}", attempt_id,
                                  state.status().ToString());
                  } else {
                    spdlog::info("attempt {} released ({}); job now {}", attempt_id, reason,
                                 v1::JobState_Name(*state));
                  }
                  OfferPendingJobs();
                  NotifyChange();
                });
}

std::vector<int64_t> Scheduler::SilentAttemptsLocked(int64_t now) {
  std::vector<int64_t> silent;
  for (auto& [worker_id, worker] : workers_) {
    if (worker.open_attempts.empty() ||
        now - worker.last_heard_unix_ms < options_.lease_timeout_ms) {
      continue;
    }
    for (int64_t attempt : worker.open_attempts) {
      // A live worker that is storing this attempt's result keeps it.
      if (worker.results_in_flight.count(attempt) == 0) silent.push_back(attempt);
    }
    if (worker.session && !worker.silent) {
      worker.silent = true;
      spdlog::warn(
          "worker {} is connected but silent past its lease; no jobs for it until it "
          "answers",
          worker_id);
    }
  }
  return silent;
}

void Scheduler::ExpireLeases() {
  const int64_t now = clock_->NowUnixMs();
  std::vector<int64_t> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    expired = SilentAttemptsLocked(now);
  }
  // Open attempts of workers this process has not heard from (a previous
  // process leased them): the database's deadline, after one full timeout
  // from start for their workers to reconnect.
  if (now >= started_unix_ms_ + options_.lease_timeout_ms) {
    absl::StatusOr<std::vector<int64_t>> stored = jobs_.ExpiredAttempts(now);
    if (!stored.ok()) {
      spdlog::error("finding expired leases: {}", stored.status().ToString());
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      for (int64_t attempt : *stored) {
        if (attempt_owner_.count(attempt) == 0) expired.push_back(attempt);
      }
    }
  }
  for (int64_t attempt : expired) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ForgetAttemptLocked(attempt);
    }
    lease_expiries_.fetch_add(1, std::memory_order_relaxed);
    Release(attempt, "lease expired");
  }
  OfferPendingJobs();  // also retries offers that failed on a transient error
}

void Scheduler::CancelAttempts(const std::vector<db::SweepStore::LiveAttempt>& attempts) {
  for (const auto& live : attempts) {
    std::shared_ptr<WorkerSession> session;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = workers_.find(live.worker_id);
      if (it != workers_.end()) session = it->second.session;
    }
    if (!session) continue;  // its lease expires and the release cancels the job
    v1::CoordinatorMessage message;
    message.mutable_cancel()->set_job_id(live.job_id);
    message.mutable_cancel()->set_attempt_id(live.attempt_id);
    session->Send(message);
  }
  NotifyChange();
}

void Scheduler::FinishModelReads() {
  std::unique_ptr<common::WorkPool> pool;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pool = std::move(model_reads_);
  }
  pool.reset();  // runs the reads queued, outside the lock their sends take
}

void Scheduler::StopAssigning() {
  std::lock_guard<std::mutex> lock(mu_);
  assigning_ = false;
}

}  // namespace paradnn::server
