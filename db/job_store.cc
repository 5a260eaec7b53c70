// JobStore: the lease queue and attempts.
#include "db/job_store.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/result_reuse.h"
#include "db/stores_internal.h"

namespace paradnn::db {
namespace internal {

namespace {

// The running sweeps, oldest first.
absl::StatusOr<std::vector<int64_t>> RunningSweeps(sqlite3* db) {
  std::vector<int64_t> running;
  Statement sweeps(db, "SELECT id FROM sweeps WHERE state = ? ORDER BY id");
  sweeps.Bind(1, static_cast<int>(v1::SWEEP_RUNNING));
  absl::Status walked = sweeps.ForEachRow([&] { running.push_back(sweeps.ColumnInt(0)); });
  if (!walked.ok()) return walked;
  return running;
}

// The first pending job for `device` of the first running sweep that has
// one, in run order (one seek of the jobs_queue index per sweep); nullopt
// when none. A single query over jobs with the sweep's state in an EXISTS
// walked every pending job of a sweep that is not running, such as one
// whose jobs are still being inserted, on every lease.
struct PendingJob {
  Lease lease;
  JobIdentity identity;
  int64_t updated_unix_ms = 0;  // when the job last changed state
};

// A sweep's jobs changed before this instant are not leased (see
// LeaseNextInTransaction); absent: every pending job may be.
using ChangedSince = std::map<int64_t, int64_t>;

// The GPUs `worker_id`'s platform lends one job's data-parallel replicas
// (Platform.cuda_device_count), at least 1.
absl::StatusOr<int64_t> WorkerDeviceCount(sqlite3* db, const std::string& worker_id) {
  Statement find(db,
                 "SELECT p.id, p.details FROM workers w JOIN platforms p ON p.id = w.platform_id "
                 "WHERE w.id = ?");
  find.Bind(1, worker_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) return int64_t{1};
  v1::Platform platform;
  if (absl::Status s = ParseBlob(find.ColumnBlob(1), &platform, "platforms", find.ColumnInt(0));
      !s.ok()) {
    return s;
  }
  return std::max<int64_t>(1, platform.cuda_device_count());
}

// The first pending job of the running sweeps, in run order, for a worker
// of `device` kind with `worker_devices` GPUs: a job of more replicas
// (params.devices) waits for a larger host.
absl::StatusOr<std::optional<PendingJob>> NextPendingJob(sqlite3* db, const std::string& device,
                                                         int64_t worker_devices,
                                                         int64_t platform_workers,
                                                         const std::vector<int64_t>& running,
                                                         const ChangedSince& changed_since) {
  for (int64_t sweep_id : running) {
    const auto floor = changed_since.find(sweep_id);
    Statement next(db,
                   "SELECT j.id, j.sweep_id, j.config, j.settings, j.device, j.params, "
                   "j.model_flops, j.peak_memory_estimate_bytes, COALESCE(j.config_id, 0), "
                   "j.precision, j.optimizer, j.repeat, j.updated_unix_ms FROM jobs j "
                   "WHERE j.state = ?1 AND j.device = ?2 AND j.sweep_id = ?3 "
                   "AND j.updated_unix_ms >= ?4 AND NOT EXISTS (SELECT 1 FROM job_params d "
                   "WHERE d.job_id = j.id AND ((d.key = 'devices' AND d.int_value > ?5) OR "
                   "(d.key = 'hosts' AND d.int_value > ?6))) "
                   "ORDER BY j.ordinal LIMIT 1");
    next.Bind(1, static_cast<int>(v1::JOB_PENDING)).Bind(2, device).Bind(3, sweep_id);
    next.Bind(4, floor == changed_since.end() ? int64_t{0} : floor->second);
    next.Bind(5, worker_devices).Bind(6, platform_workers);
    absl::StatusOr<bool> found = next.Step();
    if (!found.ok()) return found.status();
    if (!*found) continue;
    Lease lease;
    lease.job_id = next.ColumnInt(0);
    lease.sweep_id = next.ColumnInt(1);
    if (absl::Status s = ParseBlob(next.ColumnBlob(2), &lease.config, "jobs", lease.job_id);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ParseBlob(next.ColumnBlob(3), &lease.settings, "jobs", lease.job_id);
        !s.ok()) {
      return s;
    }
    lease.device = next.ColumnText(4);
    lease.params = next.ColumnIsNull(5) ? 0 : next.ColumnInt(5);
    lease.model_flops = next.ColumnIsNull(6) ? 0 : next.ColumnDouble(6);
    lease.peak_memory_estimate_bytes = next.ColumnIsNull(7) ? 0 : next.ColumnDouble(7);
    JobIdentity identity{lease.job_id,       lease.sweep_id,      next.ColumnInt(8),
                         next.ColumnText(9), next.ColumnText(10), next.ColumnInt(11),
                         lease.settings};
    const int64_t updated = next.ColumnInt(12);
    return std::optional<PendingJob>(PendingJob{std::move(lease), std::move(identity), updated});
  }
  return std::optional<PendingJob>();
}

// Inserts an open attempt of `lease`'s job for `worker_id` and sets the job
// leased.
absl::Status GrantAttempt(sqlite3* db, const std::string& worker_id, int64_t now_unix_ms,
                          int64_t lease_deadline_unix_ms, Lease* lease) {
  {
    Statement attempt(db,
                      "INSERT INTO attempts (job_id, worker_id, started_unix_ms, "
                      "lease_deadline_unix_ms) VALUES (?, ?, ?, ?)");
    attempt.Bind(1, lease->job_id).Bind(2, worker_id).Bind(3, now_unix_ms);
    attempt.Bind(4, lease_deadline_unix_ms);
    if (absl::Status s = attempt.Run(); !s.ok()) return s;
  }
  lease->attempt_id = sqlite3_last_insert_rowid(db);
  lease->lease_deadline_unix_ms = lease_deadline_unix_ms;
  Statement job(db,
                "UPDATE jobs SET state = ?, attempts = attempts + 1, updated_unix_ms = ? "
                "WHERE id = ?");
  job.Bind(1, static_cast<int>(v1::JOB_LEASED)).Bind(2, now_unix_ms).Bind(3, lease->job_id);
  return job.Run();
}

// The job's gang size (params.hosts), 1 without it.
int64_t GangSize(const v1::ModelConfig& config) {
  const auto it = config.params().find("hosts");
  return it == config.params().end() ? 1 : std::max<int64_t>(1, it->second);
}

// GrantAttempt for a gang: the leasing worker's attempt is rank 0 and names
// the gang (gang_id); each of the first gang - 1 idle peers gets the next
// rank. The job counts one attempt.
absl::Status GrantGang(sqlite3* db, const std::string& worker_id,
                       const std::vector<std::string>& idle_peers, int64_t gang,
                       int64_t now_unix_ms, int64_t lease_deadline_unix_ms, Lease* lease) {
  if (absl::Status s = GrantAttempt(db, worker_id, now_unix_ms, lease_deadline_unix_ms, lease);
      !s.ok()) {
    return s;
  }
  lease->gang.push_back({worker_id, lease->attempt_id});
  for (int64_t rank = 1; rank < gang; ++rank) {
    const std::string& peer = idle_peers[static_cast<size_t>(rank - 1)];
    Statement attempt(db,
                      "INSERT INTO attempts (job_id, worker_id, started_unix_ms, "
                      "lease_deadline_unix_ms, gang_id, gang_rank) VALUES (?, ?, ?, ?, ?, ?)");
    attempt.Bind(1, lease->job_id).Bind(2, peer).Bind(3, now_unix_ms);
    attempt.Bind(4, lease_deadline_unix_ms).Bind(5, lease->attempt_id).Bind(6, rank);
    if (absl::Status s = attempt.Run(); !s.ok()) return s;
    lease->gang.push_back({peer, sqlite3_last_insert_rowid(db)});
  }
  Statement leader(db, "UPDATE attempts SET gang_id = id, gang_rank = 0 WHERE id = ?");
  leader.Bind(1, lease->attempt_id);
  return leader.Run();
}

// Why pending gang jobs of the running sweeps cannot run on a platform of
// `platform_workers` connected workers: one line per job size, naming the
// first such job.
absl::StatusOr<std::vector<std::string>> UnholdableGangs(sqlite3* db, const std::string& device,
                                                         const GangCandidates& candidates) {
  Statement find(db,
                 "SELECT d.int_value, MIN(j.id), COUNT(*), j.sweep_id FROM jobs j JOIN job_params "
                 "d ON d.job_id = j.id AND d.key = 'hosts' JOIN sweeps s ON s.id = j.sweep_id "
                 "WHERE j.state = ? AND j.device = ? AND s.state = ? AND d.int_value > ? "
                 "GROUP BY j.sweep_id, d.int_value ORDER BY j.sweep_id, d.int_value");
  find.Bind(1, static_cast<int>(v1::JOB_PENDING)).Bind(2, device);
  find.Bind(3, static_cast<int>(v1::SWEEP_RUNNING)).Bind(4, candidates.platform_workers);
  std::vector<std::string> lines;
  absl::Status walked = find.ForEachRow([&] {
    lines.push_back(absl::StrCat("sweep ", find.ColumnInt(3), ": ", find.ColumnInt(2),
                                 " pending job(s) of hosts ", find.ColumnInt(0), " (first: job ",
                                 find.ColumnInt(1),
                                 ") need that many connected workers of one platform; platform ",
                                 candidates.platform_id, " has ", candidates.platform_workers));
  });
  if (!walked.ok()) return walked;
  return lines;
}

// The most workers a pending job of `device` asks for (1 without gang jobs).
// Only sweeps that name hosts store a hosts row; the (key, int_value) index
// is walked from the largest value down and stops at the first pending job,
// instead of visiting every hosts row ever stored on each lease.
absl::StatusOr<int64_t> MaxPendingHosts(sqlite3* db, const std::string& device) {
  Statement find(db,
                 "SELECT d.int_value FROM job_params d JOIN jobs j ON j.id = d.job_id "
                 "WHERE d.key = 'hosts' AND j.state = ? AND j.device = ? "
                 "ORDER BY d.int_value DESC LIMIT 1");
  find.Bind(1, static_cast<int>(v1::JOB_PENDING)).Bind(2, device);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  return *found ? std::max<int64_t>(1, find.ColumnInt(0)) : int64_t{1};
}

// When a budgeted sweep's budget, counted from its first attempt, ends; 0
// before its first attempt.
absl::StatusOr<int64_t> BudgetEnd(sqlite3* db, int64_t sweep_id, double budget_seconds) {
  absl::StatusOr<int64_t> started = FirstAttemptStartUnixMs(db, sweep_id);
  if (!started.ok()) return started.status();
  return *started > 0 ? *started + static_cast<int64_t>(budget_seconds * 1000) : int64_t{0};
}

// At most this many jobs take earlier results in one lease, so that one
// write stays short; the scheduler leases again at once.
constexpr int kMaxReusedPerLease = 256;

// The lease when no pending job is leasable: none at all, or one without a
// job that counts the results reused on the way and says which gang jobs
// wait for a larger platform.
absl::StatusOr<std::optional<Lease>> NoJobToRun(sqlite3* db, const std::string& device,
                                                const GangCandidates& candidates, int reused,
                                                int64_t max_hosts) {
  absl::StatusOr<std::vector<std::string>> unholdable = UnholdableGangs(db, device, candidates);
  if (!unholdable.ok()) return unholdable.status();
  if (reused == 0 && unholdable->empty() && max_hosts <= 1) return std::optional<Lease>();
  Lease none;
  none.reused_results = reused;
  none.max_pending_hosts = max_hosts;
  none.waiting = *std::move(unholdable);
  return std::optional<Lease>(std::move(none));
}

// The lease when the first pending job is a gang of `gang` that the idle
// peers cannot fill yet: no job, and why.
std::optional<Lease> GangWaits(const Lease& first, int64_t gang, const GangCandidates& candidates,
                               int reused, int64_t max_hosts) {
  Lease none;
  none.reused_results = reused;
  none.max_pending_hosts = max_hosts;
  std::string line =
      absl::StrCat("sweep ", first.sweep_id, ": job ", first.job_id, " (hosts ", gang,
                   ") waits for ", gang, " idle workers of platform ", candidates.platform_id, ": ",
                   1 + candidates.idle_peers.size(), " idle");
  if (candidates.platform_workers != kPlatformWorkersNotCounted) {
    absl::StrAppend(&line, " of ", candidates.platform_workers, " connected");
  }
  none.waiting.push_back(std::move(line));
  return none;
}

}  // namespace

absl::StatusOr<std::optional<Lease>> LeaseNextInTransaction(
    sqlite3* db, const std::string& device, const std::string& worker_id, int64_t now_unix_ms,
    int64_t lease_deadline_unix_ms, int spot_check_every, const GangCandidates& candidates) {
  absl::StatusOr<std::vector<int64_t>> running = RunningSweeps(db);
  if (!running.ok()) return running.status();
  absl::StatusOr<std::optional<ReuseKey>> reuse_key = ReuseKeyOfWorker(db, worker_id);
  if (!reuse_key.ok()) return reuse_key.status();
  absl::StatusOr<int64_t> worker_devices = WorkerDeviceCount(db, worker_id);
  if (!worker_devices.ok()) return worker_devices.status();
  absl::StatusOr<int64_t> max_hosts = MaxPendingHosts(db, device);
  if (!max_hosts.ok()) return max_hosts.status();
  int reused = 0;
  // A budgeted sweep whose budget has ended leases only the jobs its
  // planner released since (the measurements a model still needs): one
  // released before the end is held again by the planner, not started up to
  // a second late.
  ChangedSince changed_since;
  for (;;) {
    absl::StatusOr<std::optional<PendingJob>> next = std::optional<PendingJob>();
    if (reused < kMaxReusedPerLease)
      next = NextPendingJob(db, device, *worker_devices, candidates.platform_workers, *running,
                            changed_since);
    if (!next.ok()) return next.status();
    if (!next->has_value()) return NoJobToRun(db, device, candidates, reused, *max_hosts);
    Lease& lease = (*next)->lease;
    const JobIdentity& identity = (*next)->identity;
    if (lease.settings.budget_seconds() > 0 && changed_since.count(lease.sweep_id) == 0) {
      absl::StatusOr<int64_t> end = BudgetEnd(db, lease.sweep_id, lease.settings.budget_seconds());
      if (!end.ok()) return end.status();
      if (*end > 0 && now_unix_ms >= *end && (*next)->updated_unix_ms < *end) {
        changed_since[lease.sweep_id] = *end;
        continue;
      }
    }
    std::optional<ReusableResult> reusable;
    if (*reuse_key && !lease.settings.fresh() && identity.config_id > 0) {
      absl::StatusOr<std::optional<ReusableResult>> found =
          FindReusableResult(db, identity, **reuse_key);
      if (!found.ok()) return found.status();
      reusable = *found;
    }
    // A worker measuring its own result again checks nothing.
    if (reusable && reusable->measured_by != worker_id &&
        SpotCheckDue(lease.job_id, spot_check_every)) {
      // Measured again instead: the result reuse would have handed out is
      // judged against it when it arrives (JudgeSpotCheck).
      if (absl::Status s = RecordSpotCheck(db, lease.job_id, *reusable, now_unix_ms); !s.ok()) {
        return s;
      }
      reusable.reset();
    }
    const int64_t gang = reusable ? 1 : GangSize(lease.config);
    if (gang > 1 + static_cast<int64_t>(candidates.idle_peers.size())) {
      // All or nothing, in run order: the first job waits for its gang and
      // the jobs behind it wait with it, so that workers freed one by one
      // gather for it instead of each taking a single-worker job.
      return GangWaits(lease, gang, candidates, reused, *max_hosts);
    }
    absl::Status granted =
        gang > 1 ? GrantGang(db, worker_id, candidates.idle_peers, gang, now_unix_ms,
                             lease_deadline_unix_ms, &lease)
                 : GrantAttempt(db, worker_id, now_unix_ms, lease_deadline_unix_ms, &lease);
    if (!granted.ok()) return granted;
    if (reusable) {
      if (absl::Status s = StoreReusedResult(db, lease.job_id, lease.attempt_id, worker_id,
                                             *reusable, now_unix_ms);
          !s.ok()) {
        return s;
      }
      ++reused;
      continue;
    }
    {
      Statement sweep(db, "SELECT run_predicted_oom FROM sweeps WHERE id = ?");
      sweep.Bind(1, lease.sweep_id);
      absl::StatusOr<bool> found = sweep.Step();
      if (!found.ok()) return found.status();
      lease.run_predicted_oom = *found && sweep.ColumnInt(0) != 0;
    }
    lease.reused_results = reused;
    lease.max_pending_hosts = *max_hosts;
    return std::optional<Lease>(std::move(lease));
  }
}

absl::Status CloseGangSiblings(sqlite3* db, int64_t attempt_id, const std::string& outcome,
                               int64_t now_unix_ms) {
  Statement close(db,
                  "UPDATE attempts SET finished_unix_ms = ?1, outcome = ?2 "
                  "WHERE gang_id = (SELECT gang_id FROM attempts WHERE id = ?3) "
                  "AND id != ?3 AND finished_unix_ms IS NULL");
  close.Bind(1, now_unix_ms).Bind(2, outcome).Bind(3, attempt_id);
  return close.Run();
}

}  // namespace internal

void JobStore::LeaseNext(const std::string& device, const std::string& worker_id,
                         int64_t now_unix_ms, int64_t lease_deadline_unix_ms,
                         Callback<std::optional<Lease>> done, const GangCandidates& candidates) {
  internal::WriteValue<std::optional<Lease>>(
      db_,
      [device, worker_id, now_unix_ms, lease_deadline_unix_ms, candidates,
       every = db_->options().reuse_spot_check_every](
          sqlite3* db) -> absl::StatusOr<std::optional<Lease>> {
        return internal::LeaseNextInTransaction(db, device, worker_id, now_unix_ms,
                                                lease_deadline_unix_ms, every, candidates);
      },
      std::move(done));
}

absl::StatusOr<std::optional<Lease>> JobStore::LeaseNextSync(const std::string& device,
                                                             const std::string& worker_id,
                                                             int64_t now_unix_ms,
                                                             int64_t lease_deadline_unix_ms,
                                                             const GangCandidates& candidates) {
  return internal::Await<std::optional<Lease>>(db_, [&](Callback<std::optional<Lease>> done) {
    LeaseNext(device, worker_id, now_unix_ms, lease_deadline_unix_ms, std::move(done), candidates);
  });
}

void JobStore::ExtendLeases(const std::string& worker_id, int64_t lease_deadline_unix_ms) {
  db_->Write(
      [worker_id, lease_deadline_unix_ms](sqlite3* db) -> absl::Status {
        Statement extend(db,
                         "UPDATE attempts SET lease_deadline_unix_ms = ? "
                         "WHERE worker_id = ? AND finished_unix_ms IS NULL");
        extend.Bind(1, lease_deadline_unix_ms).Bind(2, worker_id);
        return extend.Run();
      },
      internal::LogIfFailed(absl::StrCat("extend leases of worker ", worker_id)));
}

absl::StatusOr<int64_t> JobStore::CapLeaseDeadlinesSync(int64_t latest_unix_ms) {
  int64_t moved = 0;
  absl::Status status = db_->WriteSync([latest_unix_ms, &moved](sqlite3* db) -> absl::Status {
    Statement cap(db,
                  "UPDATE attempts SET lease_deadline_unix_ms = ?1 "
                  "WHERE finished_unix_ms IS NULL AND lease_deadline_unix_ms > ?1");
    cap.Bind(1, latest_unix_ms);
    if (absl::Status s = cap.Run(); !s.ok()) return s;
    moved = sqlite3_changes(db);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return moved;
}

void JobStore::Release(int64_t attempt_id, const std::string& reason, int64_t now_unix_ms,
                       int max_attempts, Callback<v1::JobState> done, const std::string& holder) {
  internal::WriteValue<v1::JobState>(
      db_,
      [attempt_id, reason, now_unix_ms, max_attempts,
       holder](sqlite3* db) -> absl::StatusOr<v1::JobState> {
        if (max_attempts < 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("max_attempts must be >= 1, got ", max_attempts));
        }
        int64_t job_id = 0;
        int64_t sweep_id = 0;
        bool open = false;
        v1::JobState job_state = v1::JOB_STATE_UNSPECIFIED;
        int64_t attempts = 0;
        bool sweep_cancelled = false;
        {
          Statement find(db,
                         "SELECT a.job_id, a.finished_unix_ms IS NULL, j.state, j.attempts, "
                         "j.sweep_id, s.state, a.worker_id FROM attempts a "
                         "JOIN jobs j ON j.id = a.job_id JOIN sweeps s ON s.id = j.sweep_id "
                         "WHERE a.id = ?");
          find.Bind(1, attempt_id);
          absl::StatusOr<bool> found = find.Step();
          if (!found.ok()) return found.status();
          if (!*found) {
            return absl::NotFoundError(absl::StrCat("attempt ", attempt_id, " not found"));
          }
          job_id = find.ColumnInt(0);
          open = find.ColumnInt(1) != 0;
          job_state = static_cast<v1::JobState>(find.ColumnInt(2));
          attempts = find.ColumnInt(3);
          sweep_id = find.ColumnInt(4);
          sweep_cancelled = find.ColumnInt(5) == v1::SWEEP_CANCELLED;
          if (!holder.empty() && find.ColumnText(6) != holder) {
            return absl::PermissionDeniedError(
                absl::StrCat("attempt ", attempt_id, " of job ", job_id, " is held by worker '",
                             find.ColumnText(6), "', not '", holder, "'; it cannot hand it back"));
          }
        }
        if (!open) return job_state;  // already closed: releasing twice is harmless

        {
          Statement close(db, "UPDATE attempts SET finished_unix_ms = ?, outcome = ? WHERE id = ?");
          close.Bind(1, now_unix_ms).Bind(2, reason).Bind(3, attempt_id);
          if (absl::Status s = close.Run(); !s.ok()) return s;
        }
        // A gang runs whole or not at all: its other ranks go with it.
        if (absl::Status s = internal::CloseGangSiblings(
                db, attempt_id, absl::StrCat("gang: ", reason), now_unix_ms);
            !s.ok()) {
          return s;
        }
        // Only a job leased by this attempt moves. A job that is already done
        // (a late result of an earlier attempt arrived while this one ran)
        // keeps its result.
        if (job_state != v1::JOB_LEASED) return job_state;
        v1::JobState next = v1::JOB_PENDING;
        if (sweep_cancelled) {
          next = v1::JOB_CANCELLED;
        } else if (attempts >= max_attempts) {
          next = v1::JOB_FAILED;
        }
        {
          Statement job(db, "UPDATE jobs SET state = ?, updated_unix_ms = ? WHERE id = ?");
          job.Bind(1, static_cast<int>(next)).Bind(2, now_unix_ms).Bind(3, job_id);
          if (absl::Status s = job.Run(); !s.ok()) return s;
        }
        if (next != v1::JOB_PENDING) {
          if (absl::Status s = internal::FinishSweepIfDone(db, sweep_id, now_unix_ms); !s.ok()) {
            return s;
          }
        }
        return next;
      },
      std::move(done));
}

absl::StatusOr<v1::JobState> JobStore::ReleaseSync(int64_t attempt_id, const std::string& reason,
                                                   int64_t now_unix_ms, int max_attempts) {
  return internal::Await<v1::JobState>(db_, [&](Callback<v1::JobState> done) {
    Release(attempt_id, reason, now_unix_ms, max_attempts, std::move(done));
  });
}

// INDEXED BY: with ORDER BY id the planner preferred walking the whole
// attempts table in rowid order over the partial index of open attempts, a
// scan of every attempt ever made on each lease check (once a second; at
// 2,000 results/s it grew by 120,000 rows a minute, and its pages stayed
// mapped in the coordinator's RSS). The open attempts are few; sorting them
// is free.
absl::StatusOr<std::vector<int64_t>> JobStore::ExpiredAttempts(int64_t now_unix_ms) const {
  return internal::ReadInts(
      db_,
      "SELECT id FROM attempts INDEXED BY attempts_open_deadline "
      "WHERE finished_unix_ms IS NULL AND lease_deadline_unix_ms < ? ORDER BY id",
      [&](Statement& stmt) { stmt.Bind(1, now_unix_ms); });
}

absl::StatusOr<std::vector<int64_t>> JobStore::OpenAttempts() const {
  return internal::ReadInts(db_,
                            "SELECT id FROM attempts INDEXED BY attempts_open_deadline "
                            "WHERE finished_unix_ms IS NULL ORDER BY id",
                            [](Statement&) {});
}

absl::StatusOr<std::vector<int64_t>> JobStore::OpenAttemptsOf(const std::string& worker_id) const {
  return internal::ReadInts(
      db_,
      "SELECT id FROM attempts WHERE finished_unix_ms IS NULL AND worker_id = ? "
      "ORDER BY id",
      [&](Statement& stmt) { stmt.Bind(1, worker_id); });
}

absl::StatusOr<int64_t> JobStore::PendingCount(const std::string& device) const {
  return internal::ReadCount(
      db_, "SELECT COUNT(*) FROM jobs WHERE state = ? AND device = ?",
      [&](Statement& s) { s.Bind(1, static_cast<int>(v1::JOB_PENDING)).Bind(2, device); });
}

}  // namespace paradnn::db
