// Scheduler, lease side: offering pending jobs to idle workers, granting
// and sending assignments (with their uploaded model, read off the writer
// thread), predicted-OOM skips, releases, expiry and cancellation. The
// stream side (hello, heartbeats, results) is in scheduler.cc.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/model_store.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "platform/stack_findings.h"
#include "server/scheduler.h"

namespace paradnn::server {
namespace {

bool PredictedOom(const db::Lease& lease, int64_t memory_bytes) {
  return !lease.run_predicted_oom && memory_bytes > 0 &&
         platform::ProcessMemoryEstimateBytes(lease.peak_memory_estimate_bytes) >
             static_cast<double>(memory_bytes);
}

}  // namespace

// The assignment of `granted`, without an uploaded model's bytes.
v1::CoordinatorMessage Scheduler::AssignmentMessage(const db::Lease& granted) {
  v1::CoordinatorMessage message;
  v1::JobAssignment* assignment = message.mutable_assignment();
  assignment->set_job_id(granted.job_id);
  assignment->set_attempt_id(granted.attempt_id);
  assignment->set_sweep_id(granted.sweep_id);
  *assignment->mutable_job()->mutable_config() = granted.config;
  *assignment->mutable_job()->mutable_settings() = granted.settings;
  assignment->mutable_job()->set_device(granted.device);
  assignment->mutable_job()->set_stream_steps(true);
  // The config's counts by this coordinator's model/ (what the sweep was
  // planned with, unless the counting changed since), for a runner that
  // does not count (the JAX runner). A config that no longer parses goes
  // without: its runner reports the config's error.
  absl::StatusOr<model::ModelSpec> spec =
      model::ParseModelSpec(granted.config, model::FieldStyle::kProto);
  if (spec.ok()) *assignment->mutable_job()->mutable_counts() = model::CountModel(*spec);
  return message;
}

bool Scheduler::Contend(const WorkerLink& a, const WorkerLink& b) const {
  if (a.hostname.empty() || a.hostname != b.hostname) return false;
  if (options_.one_measurement_per_host) return true;
  return !a.cpu_set.empty() && !b.cpu_set.empty() &&
         std::find_first_of(a.cpu_set.begin(), a.cpu_set.end(), b.cpu_set.begin(),
                            b.cpu_set.end()) != a.cpu_set.end();
}

std::string Scheduler::BusyCpuNeighbourLocked(const std::string& worker_id,
                                              const std::vector<std::string>& except) const {
  const auto self = links_.find(worker_id);
  if (self == links_.end()) return "";
  for (const auto& [other, link] : links_) {
    if (other == worker_id || !Contend(self->second, link) ||
        std::find(except.begin(), except.end(), other) != except.end() ||
        !leases_.IsOccupied(other)) {
      continue;
    }
    return other;
  }
  return "";
}

void Scheduler::OfferPendingJobs() {
  absl::MutexLock lock(&mu_);
  for (const auto& [worker_id, link] : links_) TryAssignLocked(worker_id);
}

void Scheduler::TryAssignLocked(const std::string& worker_id) {
  if (!leases_.BeginLease(worker_id)) return;
  WorkerLink& link = links_.at(worker_id);  // BeginLease: connected, so linked
  if (const std::string busy = BusyCpuNeighbourLocked(worker_id, {}); !busy.empty()) {
    leases_.EndLease(worker_id);  // offered again when the neighbour's job ends (OfferNext)
    link.waiting = {options_.one_measurement_per_host
                        ? absl::StrCat("shares its host with ", busy,
                                       ", which is measuring: one measurement at a time per host "
                                       "(--one-measurement-per-host)")
                        : absl::StrCat("shares CPUs with ", busy,
                                       ", which is measuring: one measurement at a time per CPU")};
    return;
  }
  const int64_t now = clock_->NowUnixMs();
  const uint64_t serial = link.session->stream_serial();
  ClaimedPeers claimed = ClaimGangPeersLocked(worker_id);
  const db::GangCandidates candidates = claimed.candidates;
  jobs_.LeaseNext(
      leases_.DeviceKindOf(worker_id), worker_id, now,
      StoredLeaseDeadline(now, options_.lease_timeout_ms),
      [this, worker_id, serial,
       claimed = std::move(claimed)](absl::StatusOr<std::optional<db::Lease>> lease) {
        OnLeaseGranted(worker_id, serial, std::move(lease), claimed);
      },
      candidates);
}

void Scheduler::OnLeaseGranted(const std::string& worker_id, uint64_t stream_serial,
                               absl::StatusOr<std::optional<db::Lease>> lease,
                               const ClaimedPeers& claimed) {
  if (!lease.ok()) {
    spdlog::error("leasing a job for {}: {}", worker_id, lease.status().ToString());
    absl::MutexLock lock(&mu_);
    leases_.EndLease(worker_id);  // ExpireLeases' periodic offer retries
    SettleClaimsLocked(worker_id, claimed, nullptr);
    return;
  }
  if (lease->has_value() && !(*lease)->gang.empty()) {
    AssignGang(worker_id, stream_serial, **lease, claimed);
    return;
  }
  bool lease_again = false;
  {
    absl::MutexLock lock(&mu_);
    lease_again = SettleClaimsLocked(worker_id, claimed, lease->has_value() ? &**lease : nullptr);
  }
  const int reused = lease->has_value() ? (*lease)->reused_results : 0;
  if (reused > 0) {
    results_stored_.fetch_add(reused, std::memory_order_relaxed);
    spdlog::info("{} job(s) took results measured by earlier sweeps", reused);
  }
  if (!db::HasJob(*lease)) {
    {
      absl::MutexLock lock(&mu_);
      leases_.EndLease(worker_id);
      // Jobs took results but none is running here: more may be pending
      // (a lease reuses at most a few hundred at a time). Each round takes
      // at least one job, so this ends.
      if ((reused > 0 || lease_again) && leases_.IsCurrentStream(worker_id, stream_serial)) {
        TryAssignLocked(worker_id);
      }
    }
    if (reused > 0) NotifyChange();
    return;
  }
  if (reused > 0) NotifyChange();
  const db::Lease& granted = **lease;
  const GrantedTo to = RecordGrant(worker_id, stream_serial, granted);
  if (to.predicted_oom) {
    SkipPredictedOom(worker_id, to.platform_id, to.memory_bytes, granted);
    NotifyChange();
    return;
  }
  Assign(worker_id, to.session, granted);
}

void Scheduler::Assign(const std::string& worker_id, const std::shared_ptr<WorkerSession>& session,
                       const db::Lease& granted) {
  v1::CoordinatorMessage message = AssignmentMessage(granted);
  if (session && granted.config.has_torchscript()) {
    // An uploaded model is up to --max-model-bytes read from SQLite: not on
    // the writer thread this runs on (inline only while the coordinator
    // stops, after FinishModelReads).
    absl::ReleasableMutexLock lock(&mu_);
    if (model_reads_) {
      model_reads_->Run([this, worker_id, session, granted, message]() mutable {
        AttachModel(granted, &message);
        SendAssignment(worker_id, session, granted, message);
      });
      return;
    }
    lock.Release();
    AttachModel(granted, &message);
  }
  SendAssignment(worker_id, session, granted, message);
}

Scheduler::GrantedTo Scheduler::RecordGrant(const std::string& worker_id, uint64_t stream_serial,
                                            const db::Lease& granted) {
  GrantedTo to;
  absl::MutexLock lock(&mu_);
  leases_.EndLease(worker_id);
  if (!leases_.RecordLease(worker_id, stream_serial, granted.attempt_id, granted.job_id,
                           granted.lease_deadline_unix_ms)) {
    return to;  // its stream is gone, or assigning stopped: SendAssignment releases it
  }
  const WorkerLink& link = links_.at(worker_id);
  to.session = link.session;
  to.predicted_oom = PredictedOom(granted, link.memory_bytes);
  // Held like a result being committed: no other lease for this worker
  // meanwhile, and lease expiry leaves the attempt alone.
  if (to.predicted_oom) leases_.HoldForStore(worker_id, granted.attempt_id);
  to.platform_id = link.platform_id;
  to.memory_bytes = link.memory_bytes;
  return to;
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
    Release(granted.attempt_id, "worker gone before the assignment was sent");
  }
  NotifyChange();
}

void Scheduler::SkipPredictedOom(const std::string& worker_id, int64_t platform_id,
                                 int64_t memory_bytes, const db::Lease& lease) {
  v1::Measurement measurement;
  measurement.set_outcome(v1::PREDICTED_OOM);
  measurement.set_error(PredictedOomError(
      platform::ProcessMemoryEstimateBytes(lease.peak_memory_estimate_bytes), memory_bytes));
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
                     absl::MutexLock lock(&mu_);
                     leases_.Settle(worker_id, attempt_id, /*acknowledged=*/true);
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
                     absl::MutexLock lock(&mu_);
                     TryAssignLocked(worker_id);
                   }
                   NotifyChange();
                 });
}

void Scheduler::Release(int64_t attempt_id, const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (!leases_.BeginRelease(attempt_id)) return;
  }
  WriteRelease(attempt_id, reason);
}

void Scheduler::WriteRelease(int64_t attempt_id, const std::string& reason) {
  // A gang runs whole or not at all: the database closes its other ranks'
  // attempts with this one, and their workers stop them.
  const std::vector<int64_t> siblings = ReleaseGangSiblings(attempt_id);
  jobs_.Release(attempt_id, reason, clock_->NowUnixMs(), options_.max_attempts,
                [this, attempt_id, reason, siblings](absl::StatusOr<v1::JobState> state) {
                  {
                    absl::MutexLock lock(&mu_);
                    leases_.EndRelease(attempt_id);
                  }
                  EndReleases(siblings);
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

void Scheduler::ExpireLeases() {
  const int64_t now = clock_->NowUnixMs();
  std::vector<int64_t> expired;
  {
    absl::MutexLock lock(&mu_);
    LeaseTable::Expiry expiry = leases_.Expire(now);
    for (const std::string& worker_id : expiry.newly_silent) {
      spdlog::warn(
          "worker {} is connected but silent past its lease; no jobs for it until it answers",
          worker_id);
    }
    expired = std::move(expiry.released);
  }
  // Open attempts of workers this process has not heard from (a previous
  // process leased them): the database's deadline, after one full timeout
  // from start for their workers to reconnect.
  if (now >= started_unix_ms_ + options_.lease_timeout_ms) {
    absl::StatusOr<std::vector<int64_t>> stored = jobs_.ExpiredAttempts(now);
    if (!stored.ok()) {
      spdlog::error("finding expired leases: {}", stored.status().ToString());
    } else {
      absl::MutexLock lock(&mu_);
      for (int64_t attempt : *stored) {
        if (leases_.ReleaseIfUnheld(attempt)) expired.push_back(attempt);
      }
    }
  }
  for (int64_t attempt : expired) {
    lease_expiries_.fetch_add(1, std::memory_order_relaxed);
    WriteRelease(attempt, "lease expired");
  }
  OfferPendingJobs();  // also retries offers that failed on a transient error
}

void Scheduler::CancelAttempts(const std::vector<db::SweepStore::LiveAttempt>& attempts) {
  for (const auto& live : attempts) {
    std::shared_ptr<WorkerSession> session;
    {
      absl::MutexLock lock(&mu_);
      auto it = links_.find(live.worker_id);
      if (it != links_.end()) session = it->second.session;
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
    absl::MutexLock lock(&mu_);
    pool = std::move(model_reads_);
  }
  pool.reset();  // runs the reads queued, outside the lock their sends take
}

void Scheduler::StopAssigning() {
  absl::MutexLock lock(&mu_);
  leases_.StopAssigning();
}

}  // namespace paradnn::server
