#include "server/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"
#include "common/human_units.h"
#include "common/worker_identity.h"
#include "server/result_validation.h"

namespace paradnn::server {
namespace {

// Errors that sending the same message again cannot fix: acked (the worker
// drops it) rather than left for a retry that would never end. A result
// for another worker's attempt (PermissionDenied) is one: refused, logged,
// acked.
bool IsPermanent(const absl::Status& status) {
  return status.code() == absl::StatusCode::kNotFound ||
         status.code() == absl::StatusCode::kInvalidArgument ||
         status.code() == absl::StatusCode::kPermissionDenied;
}

}  // namespace

v1::CoordinatorMessage Scheduler::AckMessage(int64_t job_id, int64_t attempt_id) {
  v1::CoordinatorMessage message;
  message.mutable_ack()->set_job_id(job_id);
  message.mutable_ack()->set_attempt_id(attempt_id);
  return message;
}

std::string PredictedOomError(double estimate_bytes, int64_t memory_bytes) {
  return absl::StrFormat("memory estimate %s exceeds the worker's %s (%.0f > %d bytes)",
                         common::HumanBytes(estimate_bytes),
                         common::HumanBytes(static_cast<double>(memory_bytes)), estimate_bytes,
                         memory_bytes);
}

Scheduler::Scheduler(db::Database* database, const common::Clock* clock, SchedulerOptions options)
    : database_(database),
      clock_(clock),
      options_(options),
      sweeps_(database),
      jobs_(database),
      results_(database),
      platforms_(database),
      workers_store_(database),
      started_unix_ms_(clock->NowUnixMs()),
      leases_(options.lease_timeout_ms),
      model_reads_(std::make_unique<common::WorkPool>(1, "model-reads")) {}

void Scheduler::SetChangeListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  change_listener_ = std::move(listener);
}

void Scheduler::NotifyChange() {
  std::function<void()> listener;
  {
    absl::MutexLock lock(&mu_);
    listener = change_listener_;
  }
  if (listener) listener();
}

namespace {

constexpr size_t kMaxHelloPlatformBytes = 64 * 1024;

// Ids and kinds are printed in tables and logs: printable characters only.
absl::Status ValidateHello(const v1::WorkerHello& hello) {
  const auto printable = [](const std::string& text) { return common::IsPrintableText(text); };
  if (!common::IsValidWorkerId(hello.worker_id())) {
    return absl::InvalidArgumentError(absl::StrCat("hello.worker_id: ", common::kWorkerIdRule));
  }
  if (hello.device_kind().empty() || hello.device_kind().size() > 64 ||
      !printable(hello.device_kind())) {
    return absl::InvalidArgumentError(
        "hello.device_kind: must be 1..64 characters, none of them control characters");
  }
  if (hello.harness().size() > 64 || !printable(hello.harness())) {
    return absl::InvalidArgumentError(
        "hello.harness: must be at most 64 characters (\"<backend>/<version>\"), none of them "
        "control characters");
  }
  // Stored with every platform row and result: a real host's (CPU flags,
  // BLAS and library strings, calibration) is a few KB.
  if (const size_t bytes = hello.platform().ByteSizeLong(); bytes > kMaxHelloPlatformBytes) {
    return absl::InvalidArgumentError(absl::StrCat("hello.platform: ", bytes, " bytes; at most ",
                                                   kMaxHelloPlatformBytes,
                                                   " (a real host's is a few KB)"));
  }
  if (hello.version().size() > 256 || !printable(hello.version())) {
    return absl::InvalidArgumentError(
        "hello.version: must be at most 256 characters, none of them control characters");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Scheduler::OnHello(const std::shared_ptr<WorkerSession>& session,
                                const v1::WorkerHello& hello) {
  if (absl::Status valid = ValidateHello(hello); !valid.ok()) return valid;
  // Attempts this worker held before (a previous stream, or a previous
  // coordinator process): it either still runs one of them or re-sends its
  // result; the first heartbeat tells which.
  absl::StatusOr<std::vector<int64_t>> open = jobs_.OpenAttemptsOf(hello.worker_id());
  if (!open.ok()) return absl::UnavailableError(open.status().message());

  const std::string& worker_id = hello.worker_id();
  if (absl::Status taken = AdoptStream(session, hello, *open); !taken.ok()) return taken;
  spdlog::info("worker {} ({} on {}) said hello; {} open attempt(s), {} unacked result(s)",
               worker_id, hello.device_kind(), hello.platform().hostname(), open->size(),
               hello.unacked_results());
  v1::Platform platform = hello.platform();
  if (platform.device_kind().empty()) platform.set_device_kind(hello.device_kind());
  StorePlatformThenAck(worker_id, session->stream_serial(), platform, hello.harness(),
                       session->trust_domain());
  return absl::OkStatus();
}

absl::Status Scheduler::AdoptStream(const std::shared_ptr<WorkerSession>& session,
                                    const v1::WorkerHello& hello,
                                    const std::vector<int64_t>& open_attempts) {
  const std::string& worker_id = hello.worker_id();
  absl::MutexLock lock(&mu_);
  WorkerLink& link = links_[worker_id];
  const bool other_stream_live = link.session && link.session != session && !link.session->closed();
  const LeaseTable::HelloVerdict verdict =
      leases_.Hello(worker_id, session->stream_serial(), hello.device_kind(), other_stream_live,
                    open_attempts, clock_->NowUnixMs());
  if (verdict.refused) {
    spdlog::warn(
        "a second worker said hello as '{}' while the first is connected (heard {} ms ago); "
        "refused",
        worker_id, verdict.other_quiet_ms);
    return absl::AlreadyExistsError(
        absl::StrCat("worker id '", worker_id, "' is in use by a connected worker (heard from ",
                     verdict.other_quiet_ms, " ms ago); give each worker its own --worker-id"));
  }
  if (verdict.replaces_stream) {
    // A loaded host may delay heartbeats well past their interval: the
    // quiet stream is ended, with why.
    spdlog::warn("worker {} connected again; its previous stream (quiet {} ms) is ended", worker_id,
                 verdict.other_quiet_ms);
    link.session->End(absl::AbortedError(absl::StrCat(
        "worker id '", worker_id, "' connected again on another stream; this one is replaced")));
  }
  link.session = session;
  link.memory_bytes = std::max<int64_t>(0, hello.platform().memory_bytes());
  link.roofs = UtilizationRoofs(hello.platform());
  link.rendezvous_host = hello.rendezvous_address();
  link.rendezvous_port = hello.rendezvous_port();
  link.cpus = hello.cpus();
  // CPU workers only: GPU workers of one host measure on their own devices.
  link.hostname = hello.device_kind() == "cpu" ? hello.platform().hostname() : "";
  link.cpu_set.clear();
  if (!hello.cpus().empty()) {
    absl::StatusOr<std::vector<int>> cpus = common::ParseCpuList(hello.cpus(), "hello.cpus");
    // Unreadable: taken as every CPU of the host (the cautious reading).
    if (cpus.ok()) link.cpu_set = *std::move(cpus);
  }
  return absl::OkStatus();
}

void Scheduler::StorePlatformThenAck(const std::string& worker_id, uint64_t serial,
                                     const v1::Platform& platform, const std::string& harness,
                                     const std::string& trust_domain) {
  platforms_.Upsert(
      platform,
      [this, worker_id, serial, platform, harness, trust_domain](absl::StatusOr<int64_t> id) {
        if (!id.ok()) {
          spdlog::error("storing platform of worker {}: {}", worker_id, id.status().ToString());
        }
        std::shared_ptr<WorkerSession> current;
        {
          absl::MutexLock lock(&mu_);
          auto it = links_.find(worker_id);
          if (it == links_.end() || !leases_.IsCurrentStream(worker_id, serial)) {
            return;  // that stream is already gone
          }
          WorkerLink& link = it->second;
          if (!id.ok() && id.status().code() == absl::StatusCode::kInvalidArgument) {
            // A platform record that cannot be true (calibrated in the future,
            // roofs its fingerprint contradicts): the worker is told why, as a
            // refused hello it stops on rather than resend, and gets no work.
            link.session->End(
                absl::InvalidArgumentError(absl::StrCat("hello.", id.status().message())));
            return;
          }
          link.platform_id = id.ok() ? *id : 0;
          leases_.MarkReady(worker_id, serial);
          current = link.session;
        }
        workers_store_.Connected(worker_id, platform.device_kind(), platform.hostname(),
                                 id.ok() ? *id : 0, harness, trust_domain, clock_->NowUnixMs());
        v1::CoordinatorMessage ack;
        ack.mutable_hello_ack()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
        ack.mutable_hello_ack()->set_lease_timeout_ms(options_.lease_timeout_ms);
        current->Send(ack);
        absl::MutexLock lock(&mu_);
        TryAssignLocked(worker_id);
      },
      db::PlatformReporter{worker_id, trust_domain});
}

void Scheduler::OnWorkerMessage(const std::shared_ptr<WorkerSession>& session,
                                const std::string& worker_id, const v1::WorkerMessage& message) {
  {
    absl::MutexLock lock(&mu_);
    if (CurrentLinkLocked(worker_id, session) != nullptr &&
        leases_.Heard(worker_id, clock_->NowUnixMs())) {
      spdlog::info("worker {} answers again; it may take jobs", worker_id);
    }
  }
  switch (message.msg_case()) {
    case v1::WorkerMessage::kResult:
      OnResult(worker_id, message.result());
      return;
    case v1::WorkerMessage::kHeartbeat: {
      std::vector<int64_t> released;
      {
        absl::MutexLock lock(&mu_);
        if (CurrentLinkLocked(worker_id, session) == nullptr) return;
        released = OnHeartbeat(worker_id, message.heartbeat());
      }
      // Attempts held before this stream that the worker neither runs nor
      // has a result for: given back (outside the lock: a release takes it,
      // for a gang's other ranks).
      for (int64_t attempt : released) WriteRelease(attempt, "worker reconnected without this job");
      if (!released.empty()) {
        absl::MutexLock lock(&mu_);
        TryAssignLocked(worker_id);
      }
      return;
    }
    case v1::WorkerMessage::kStarted:
      spdlog::debug("worker {} started job {} (attempt {})", worker_id, message.started().job_id(),
                    message.started().attempt_id());
      return;
    case v1::WorkerMessage::kProgress:
      return;  // step-level progress is not stored; the result carries every step
    case v1::WorkerMessage::kHello:
      spdlog::warn("worker {} sent a second hello on one stream; ignored", worker_id);
      return;
    case v1::WorkerMessage::MSG_NOT_SET:
      spdlog::warn("worker {} sent an empty message", worker_id);
      return;
  }
}

Scheduler::WorkerLink* Scheduler::CurrentLinkLocked(const std::string& worker_id,
                                                    const std::shared_ptr<WorkerSession>& session) {
  auto it = links_.find(worker_id);
  return it != links_.end() && it->second.session == session ? &it->second : nullptr;
}

std::vector<int64_t> Scheduler::OnHeartbeat(const std::string& worker_id,
                                            const v1::Heartbeat& heartbeat) {
  const int64_t now = clock_->NowUnixMs();
  const LeaseTable::HeartbeatActions actions =
      leases_.Heartbeat(worker_id, heartbeat.running_attempt_id(), heartbeat.draining(), now);
  if (actions.write_last_seen) workers_store_.Seen(worker_id, now);
  if (actions.extend_stored_deadlines > 0) {
    jobs_.ExtendLeases(worker_id, actions.extend_stored_deadlines);
  }
  if (actions.began_draining)
    spdlog::info("worker {} is shutting down; no more jobs for it", worker_id);
  return actions.released;
}

void Scheduler::OnHandedBack(const std::string& worker_id, const v1::JobResult& result,
                             bool handed_back) {
  const int64_t job_id = result.job_id();
  const int64_t attempt_id = result.attempt_id();
  {
    absl::MutexLock lock(&mu_);
    leases_.HoldForStore(worker_id, attempt_id);
    // Only a worker shutting down hands jobs back.
    if (handed_back) leases_.MarkDraining(worker_id);
  }
  const std::vector<int64_t> siblings = ReleaseGangSiblings(attempt_id);
  const std::string reason =
      absl::StrCat(handed_back ? "handed back: " : "gang broken: ", result.measurement().error());
  spdlog::info("worker {}: job {} (attempt {}) {}", worker_id, job_id, attempt_id, reason);
  jobs_.Release(
      attempt_id, reason, clock_->NowUnixMs(), options_.max_attempts,
      [this, worker_id, job_id, attempt_id, siblings](absl::StatusOr<v1::JobState> state) {
        EndReleases(siblings);
        const bool ack = state.ok() || IsPermanent(state.status());
        if (!state.ok()) {
          spdlog::error("releasing job {} attempt {} handed back by {}: {}", job_id, attempt_id,
                        worker_id, state.status().ToString());
        } else {
          spdlog::info("job {} now {}", job_id, v1::JobState_Name(*state));
        }
        Settle(worker_id, job_id, attempt_id, ack);
        OfferPendingJobs();
        NotifyChange();
      },
      /*holder=*/worker_id);
}

void Scheduler::OnResult(const std::string& worker_id, const v1::JobResult& result) {
  if (result.handed_back()) {
    OnHandedBack(worker_id, result);
    return;
  }
  const int64_t job_id = result.job_id();
  const int64_t attempt_id = result.attempt_id();
  int gang_rank = -1;
  {
    absl::MutexLock lock(&mu_);
    gang_rank = leases_.GangRank(attempt_id);
  }
  if (gang_rank >= 0 || result.measurement().outcome() == v1::GANG_BROKEN) {
    OnGangResult(worker_id, result, gang_rank);
    return;
  }
  int64_t platform_id = 0;
  v1::Measurement measurement = result.measurement();
  if (absl::Status valid = ValidateMeasurement(measurement); !valid.ok()) {
    spdlog::warn("worker {}: result of job {} (attempt {}) refused: {}", worker_id, job_id,
                 attempt_id, std::string(valid.message()));
    measurement = RefusedMeasurement(measurement, valid);
  }
  // A worker whose only open attempt is this one gets its next job leased
  // in the result's own write: one commit from result to assignment.
  bool lease_next = false;
  std::optional<v1::Platform> raised_platform;
  std::string trust_domain;
  std::string device;
  uint64_t stream_serial = 0;
  ClaimedPeers claimed;
  {
    absl::MutexLock lock(&mu_);
    WorkerLink& link = links_[worker_id];
    lease_next = leases_.ResultArrived(worker_id, attempt_id);
    if (lease_next && !BusyCpuNeighbourLocked(worker_id, {}).empty()) {
      leases_.EndLease(worker_id);  // its next job waits for the neighbour (OfferNext)
      lease_next = false;
    }
    if (lease_next) {
      device = leases_.DeviceKindOf(worker_id);
      stream_serial = link.session->stream_serial();
      // The next lease rides the result's write: gang peers as for any lease.
      claimed = ClaimGangPeersLocked(worker_id);
    }
    platform_id = link.platform_id;
    if (link.roofs.Fill(&measurement)) {
      raised_platform = link.roofs.platform();
      if (link.session) trust_domain = link.session->trust_domain();
      // Stored as the platform's latest roofs (PlatformStore keeps the
      // newest calibrated_unix_ms).
      raised_platform->set_calibrated_unix_ms(
          std::max(raised_platform->calibrated_unix_ms() + 1, clock_->NowUnixMs()));
      link.roofs = UtilizationRoofs(*raised_platform);
    }
  }
  if (raised_platform) StoreRaisedRoofs(worker_id, trust_domain, job_id, *raised_platform);
  spdlog::info("worker {} finished job {} (attempt {}): {}", worker_id, job_id, attempt_id,
               v1::Outcome_Name(measurement.outcome()));
  if (!lease_next) {
    results_.Store(
        job_id, attempt_id, worker_id, platform_id, measurement, clock_->NowUnixMs(),
        [this, worker_id, job_id, attempt_id](const absl::StatusOr<db::StoreOutcome>& stored) {
          SettleStored(worker_id, job_id, attempt_id, stored);
          OfferNext(worker_id, /*clear_leasing=*/false);
        });
    return;
  }
  StoreThenLeaseNext(worker_id, job_id, attempt_id, platform_id, measurement, device, stream_serial,
                     std::move(claimed));
}

void Scheduler::StoreThenLeaseNext(const std::string& worker_id, int64_t job_id, int64_t attempt_id,
                                   int64_t platform_id, const v1::Measurement& measurement,
                                   const std::string& device, uint64_t stream_serial,
                                   ClaimedPeers claimed) {
  auto settle = [this, worker_id, job_id,
                 attempt_id](const absl::StatusOr<db::StoreOutcome>& stored) {
    SettleStored(worker_id, job_id, attempt_id, stored);
  };
  const int64_t now = clock_->NowUnixMs();
  const db::GangCandidates candidates = claimed.candidates;
  results_.StoreThenLease(
      job_id, attempt_id, worker_id, platform_id, measurement, now, device,
      StoredLeaseDeadline(now, options_.lease_timeout_ms),
      [this, worker_id, stream_serial, settle,
       claimed = std::move(claimed)](absl::StatusOr<db::ResultStore::StoredThenLeased> stored) {
        if (!stored.ok()) {
          {
            absl::MutexLock lock(&mu_);
            SettleClaimsLocked(worker_id, claimed, nullptr);
          }
          settle(stored.status());
          OfferNext(worker_id, /*clear_leasing=*/true);
          return;
        }
        settle(stored->outcome);
        // OnLeaseGranted notifies only when it got a job.
        const bool leased = stored->next.ok() && db::HasJob(*stored->next);
        OnLeaseGranted(worker_id, stream_serial, std::move(stored->next), claimed);
        if (!leased) NotifyChange();
      },
      candidates);
}

void Scheduler::StoreRaisedRoofs(const std::string& worker_id, const std::string& trust_domain,
                                 int64_t job_id, const v1::Platform& platform) {
  spdlog::warn("worker {}: job {} ran faster than its platform's roof; the roof is raised",
               worker_id, job_id);
  platforms_.Upsert(
      platform,
      [worker_id](const absl::StatusOr<int64_t>& id) {
        if (!id.ok()) {
          spdlog::error("storing raised roofs of {}: {}", worker_id, id.status().ToString());
        }
      },
      db::PlatformReporter{worker_id, trust_domain});
}

void Scheduler::SettleStored(const std::string& worker_id, int64_t job_id, int64_t attempt_id,
                             const absl::StatusOr<db::StoreOutcome>& stored) {
  const bool ack = stored.ok() || IsPermanent(stored.status());
  if (!stored.ok()) {
    spdlog::error("storing result of job {} attempt {} from {}: {}", job_id, attempt_id, worker_id,
                  stored.status().ToString());
  } else if (*stored == db::StoreOutcome::kDuplicate) {
    spdlog::info("result of job {} attempt {} is a duplicate; dropped", job_id, attempt_id);
  } else {
    results_stored_.fetch_add(1, std::memory_order_relaxed);
  }
  Settle(worker_id, job_id, attempt_id, ack);
}

void Scheduler::OfferNext(const std::string& worker_id, bool clear_leasing) {
  {
    absl::MutexLock lock(&mu_);
    if (clear_leasing) leases_.EndLease(worker_id);
    TryAssignLocked(worker_id);
    // Neighbours that waited for its CPUs (or its host) may measure now.
    const auto self = links_.find(worker_id);
    if (self != links_.end()) {
      for (const auto& [other, link] : links_) {
        if (other != worker_id && Contend(self->second, link)) TryAssignLocked(other);
      }
    }
  }
  NotifyChange();
}

void Scheduler::Settle(const std::string& worker_id, int64_t job_id, int64_t attempt_id, bool ack) {
  std::shared_ptr<WorkerSession> session;
  {
    absl::MutexLock lock(&mu_);
    leases_.Settle(worker_id, attempt_id, ack);
    auto it = links_.find(worker_id);
    if (it != links_.end()) session = it->second.session;
  }
  if (ack && session) session->Send(AckMessage(job_id, attempt_id));
}

void Scheduler::OnStreamClosed(const std::shared_ptr<WorkerSession>& session,
                               const std::string& worker_id) {
  if (worker_id.empty()) return;  // closed before hello
  {
    absl::MutexLock lock(&mu_);
    WorkerLink* link = CurrentLinkLocked(worker_id, session);
    if (link == nullptr) return;  // replaced already
    link->session = nullptr;
    spdlog::info("worker {} disconnected; {} lease(s) kept until their deadline", worker_id,
                 leases_.StreamClosed(worker_id));
  }
  workers_store_.Disconnected(worker_id, clock_->NowUnixMs());
}

std::map<std::string, LiveWorker> Scheduler::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, LiveWorker> workers = leases_.Snapshot();
  for (auto& [worker_id, live] : workers) {
    auto link = links_.find(worker_id);
    if (link == links_.end()) continue;
    live.cpus = link->second.cpus;
    if (live.state == v1::WORKER_IDLE) live.waiting = absl::StrJoin(link->second.waiting, "; ");
  }
  return workers;
}

}  // namespace paradnn::server
