// Scheduler matches pending jobs to connected, idle workers of the job's
// device kind, one job per worker at a time, and keeps leases honest:
//
// - A lease is granted in the database (JobStore::LeaseNext on the writer
//   thread, so two workers can never lease the same job) and sent to the
//   worker as an assignment.
// - A lease lasts until its worker has been silent for lease_timeout_ms
//   (any message counts). The scheduler keeps that deadline in memory for
//   every worker it knows; the database holds a later one (up to two
//   timeouts after the worker was last heard, rewritten about once a
//   timeout rather than at every heartbeat: at 5,000 workers heartbeats
//   were more writes than results) for a coordinator that restarts, which
//   caps the stored deadlines at its start + one timeout. A stream that
//   closes keeps its leases until the deadline, so a worker that reconnects
//   in time keeps its job; past the deadline the attempt is released and
//   the job re-queued (FAILED after max_attempts).
// - A result is acknowledged only after it is committed (or recognized as a
//   duplicate), so a worker never forgets a result the store has not got.
// - A leased job whose memory estimate (stored at submit) exceeds the
//   memory the worker reported in its hello (Platform.memory_bytes; 0 means
//   unknown) is not sent unless its sweep has run_predicted_oom: the
//   scheduler stores a PREDICTED_OOM result for it through the ResultStore,
//   as if the worker had reported it, and offers the worker the next job.
//
// All methods are thread-safe and never block on I/O: database writes are
// queued and their completions re-enter the scheduler from the writer thread;
// an uploaded model an assignment carries is read on a thread of the
// scheduler's own.
#ifndef PARADNN_SERVER_SCHEDULER_H_
#define PARADNN_SERVER_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/work_pool.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"
#include "paradnn/v1/coordinator.pb.h"
#include "server/utilization.h"
#include "server/worker_session.h"

namespace paradnn::server {

struct SchedulerOptions {
  int64_t heartbeat_interval_ms = 2000;
  int64_t lease_timeout_ms = 15000;
  int max_attempts = 3;
};

// A worker as the scheduler sees it right now (for ListWorkers).
struct LiveWorker {
  // idle, busy, draining (shutting down, idle), silent (connected, not
  // answering), disconnected
  v1::WorkerState state = v1::WORKER_DISCONNECTED;
  int64_t current_job_id = 0;
  std::string device_kind;
};

// The error text of a PREDICTED_OOM result, e.g. "memory estimate 31.2 GiB
// exceeds the worker's 23.5 GiB (33500000000 > 25232932864 bytes)".
std::string PredictedOomError(double estimate_bytes, int64_t memory_bytes);

class Scheduler {
 public:
  // `database` and `clock` must outlive the scheduler.
  Scheduler(db::Database* database, const common::Clock* clock, SchedulerOptions options);

  // Called after anything that may change a sweep's status (lease granted,
  // result stored, job released, cancel). Runs without the scheduler's lock.
  void SetChangeListener(std::function<void()> listener);

  // ---- from worker streams (any gRPC thread) ----
  // First message of a stream. Returns InvalidArgument for a malformed hello
  // (the reactor then ends the stream with that status).
  absl::Status OnHello(const std::shared_ptr<WorkerSession>& session, const v1::WorkerHello& hello);
  // Every later message of a stream whose hello was `worker_id`.
  void OnWorkerMessage(const std::shared_ptr<WorkerSession>& session, const std::string& worker_id,
                       const v1::WorkerMessage& message);
  // The stream of `session` ended (any reason).
  void OnStreamClosed(const std::shared_ptr<WorkerSession>& session, const std::string& worker_id);

  // ---- from the Coordinator service and timers ----
  // New jobs may be pending: offer them to idle workers.
  void OfferPendingJobs();
  // Tells the workers running these attempts to stop them.
  void CancelAttempts(const std::vector<db::SweepStore::LiveAttempt>& attempts);
  // Releases attempts whose lease deadline passed. Call periodically.
  void ExpireLeases();
  // Stops handing out new jobs (graceful shutdown).
  void StopAssigning();
  // Waits for the model reads of assignments in flight (they may queue a
  // release): call after the gRPC server stopped, before the database
  // closes. Later assignments read their model inline.
  void FinishModelReads();

  std::map<std::string, LiveWorker> Snapshot() const;
  const SchedulerOptions& options() const { return options_; }

  // Counters since construction, for /metrics: leases released because
  // their deadline passed, and results newly committed (duplicates and
  // failed stores not counted; PREDICTED_OOM results are).
  int64_t lease_expiries() const { return lease_expiries_.load(std::memory_order_relaxed); }
  int64_t results_stored() const { return results_stored_.load(std::memory_order_relaxed); }

 private:
  struct WorkerState {
    std::shared_ptr<WorkerSession> session;  // null while disconnected
    std::string device_kind;
    int64_t platform_id = 0;
    int64_t memory_bytes = 0;  // from the hello's platform; 0 = unknown
    UtilizationRoofs roofs;    // hello's roofs and peaks, raised by jobs that beat them
    bool ready = false;        // hello processed, hello_ack sent
    bool leasing = false;      // a LeaseNext is in flight
    bool first_heartbeat_seen = false;
    int64_t last_heard_unix_ms = 0;  // any message on the current stream
    // The earliest lease deadline the database holds for open_attempts (0:
    // unknown, as for attempts inherited from an earlier stream), and when
    // workers.last_seen_unix_ms was last written.
    int64_t stored_deadline_floor_ms = 0;
    int64_t last_seen_written_ms = 0;
    // A lease of this connected worker expired: it stopped answering (a
    // stopped host, a cut network) with its stream still open. It gets no
    // job until it sends something again.
    bool silent = false;
    // The worker said it is shutting down (Heartbeat.draining, or a job
    // handed back): no new job on this stream.
    bool draining = false;
    std::set<int64_t> open_attempts;         // leased to this worker, no result yet
    std::set<int64_t> inherited_attempts;    // open when this stream said hello
    std::set<int64_t> results_in_flight;     // results being committed
    std::map<int64_t, int64_t> attempt_job;  // attempt -> job, for Snapshot
  };

  // Whether `worker` may be leased a job now or, with `settling_attempt`
  // (its only open attempt, whose result is about to be stored), as soon as
  // that result is stored. Attempt ids are positive: 0 means none.
  bool MayLeaseLocked(const WorkerState& worker, int64_t settling_attempt) const;
  // OnHello's bookkeeping: `session` becomes the worker's stream (ending a
  // quiet earlier one) and inherits `open_attempts`. AlreadyExists while
  // another live stream uses the id.
  absl::Status AdoptStream(const std::shared_ptr<WorkerSession>& session,
                           const v1::WorkerHello& hello, const std::vector<int64_t>& open_attempts);
  // Stores the hello's platform and the worker's harness, then
  // acknowledges the hello on stream `serial` (if it is still the worker's)
  // and offers it a job.
  void StorePlatformThenAck(const std::string& worker_id, uint64_t serial,
                            const v1::Platform& platform, const std::string& harness,
                            const std::string& trust_domain);
  void TryAssignLocked(const std::string& worker_id, WorkerState& worker);
  void OnLeaseGranted(const std::string& worker_id, uint64_t stream_serial,
                      absl::StatusOr<std::optional<db::Lease>> lease);
  // Reads the uploaded model of `granted` into its assignment (on
  // model_reads_; a model that cannot be read is logged and left out).
  void AttachModel(const db::Lease& granted, v1::CoordinatorMessage* message) const;
  // Sends the assignment, or releases the attempt when the stream is gone.
  void SendAssignment(const std::string& worker_id, const std::shared_ptr<WorkerSession>& session,
                      const db::Lease& granted, const v1::CoordinatorMessage& message);
  void OnResult(const std::string& worker_id, const v1::JobResult& result);
  // A job the worker stopped unmeasured while shutting down: released to
  // the queue (an attempt like a lost lease), then acknowledged.
  void OnHandedBack(const std::string& worker_id, const v1::JobResult& result);
  // After the store (or release) of a worker's result message: no longer in
  // flight; with `ack` (committed, or refused for good) forgotten and
  // acknowledged to the worker.
  void Settle(const std::string& worker_id, int64_t job_id, int64_t attempt_id, bool ack);
  // Settle after a result's store: logs a failure or a duplicate, counts a
  // new result, acknowledges what the store took or refused for good.
  void SettleStored(const std::string& worker_id, int64_t job_id, int64_t attempt_id,
                    const absl::StatusOr<db::StoreOutcome>& stored);
  // After a store that leased nothing for the worker: offers it a job the
  // usual way (`clear_leasing`: the store had claimed its lease slot).
  void OfferNext(const std::string& worker_id, bool clear_leasing);
  // Stores roofs a job beat as the platform's latest (logged).
  void StoreRaisedRoofs(const std::string& worker_id, const std::string& trust_domain,
                        int64_t job_id, const v1::Platform& platform);
  // Stores the PREDICTED_OOM result of `lease` (already counted in the
  // worker's open_attempts and results_in_flight) and offers the next job.
  void SkipPredictedOom(const std::string& worker_id, int64_t platform_id, int64_t memory_bytes,
                        const db::Lease& lease);
  void OnHeartbeat(const std::string& worker_id, WorkerState& worker,
                   const v1::Heartbeat& heartbeat);
  void Release(int64_t attempt_id, const std::string& reason);
  void ForgetAttemptLocked(int64_t attempt_id);
  void NotifyChange();

  db::Database* const database_;
  const common::Clock* const clock_;
  const SchedulerOptions options_;
  db::SweepStore sweeps_;
  db::JobStore jobs_;
  db::ResultStore results_;
  db::PlatformStore platforms_;
  db::WorkerStore workers_store_;
  // The lease deadline written to the database for a worker heard at `now`.
  int64_t StoredLeaseDeadline(int64_t now) const { return now + 2 * options_.lease_timeout_ms; }
  // Attempts of workers silent for a lease timeout (none in results_in_flight).
  std::vector<int64_t> SilentAttemptsLocked(int64_t now);

  const int64_t started_unix_ms_;

  mutable std::mutex mu_;
  std::map<std::string, WorkerState> workers_;    // by worker id
  std::map<int64_t, std::string> attempt_owner_;  // open attempt -> worker id
  std::set<int64_t> releasing_;                   // releases in flight
  bool assigning_ = true;
  std::function<void()> change_listener_;
  std::atomic<int64_t> lease_expiries_{0};
  std::atomic<int64_t> results_stored_{0};
  // Reads uploaded models for assignments off the writer thread (guarded
  // by mu_; null after FinishModelReads). Last, so that it drains before
  // the state its tasks touch is destroyed.
  std::unique_ptr<common::WorkPool> model_reads_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_SCHEDULER_H_
