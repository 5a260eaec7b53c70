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
// Which worker holds which attempt, and what a worker may be given, is the
// LeaseTable's (server/lease_table.h: its states and transitions); the
// Scheduler keeps the streams, the database writes and the threads.
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
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/work_pool.h"
#include "db/database.h"
#include "db/job_store.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "db/worker_store.h"
#include "paradnn/v1/coordinator.pb.h"
#include "server/lease_table.h"
#include "server/utilization.h"
#include "server/worker_session.h"

namespace paradnn::server {

struct SchedulerOptions {
  int64_t heartbeat_interval_ms = 2000;
  int64_t lease_timeout_ms = 15000;
  int max_attempts = 3;
  // One measurement at a time per host (--one-measurement-per-host): a
  // worker waits while another of its host measures, whatever their CPUs;
  // a gang's ranks run together. For one-host emulations of several hosts,
  // where jobs beside each other share memory bandwidth and caches.
  bool one_measurement_per_host = false;
};

// A worker's CPUs as (hostname, CPU) pairs: CPU numbers of two hosts differ.
using HostCpus = std::set<std::pair<std::string, int>>;

// The ids of `peers` ordered so that a gang's next rank goes to CPUs no
// earlier rank (the leader first) has, and only when every CPU has one to
// a second layer: with 4 workers on 2 CPUs ("0", "0", "1", "1"), a 2-rank
// gang takes one worker of each CPU. A worker without --cpus (empty) holds
// no CPU another has. Pure.
std::vector<std::string> SpreadOverCpus(const HostCpus& leader,
                                        std::vector<std::pair<std::string, HostCpus>> peers);

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
  // Why pending jobs of `sweep_id` are not running (gangs waiting for
  // workers), as the last lease found; empty when nothing waits.
  std::vector<std::string> WaitingLines(int64_t sweep_id) const ABSL_LOCKS_EXCLUDED(mu_);
  const SchedulerOptions& options() const { return options_; }

  // Counters since construction, for /metrics: leases released because
  // their deadline passed, and results newly committed (duplicates and
  // failed stores not counted; PREDICTED_OOM results are).
  int64_t lease_expiries() const { return lease_expiries_.load(std::memory_order_relaxed); }
  int64_t results_stored() const { return results_stored_.load(std::memory_order_relaxed); }

 private:
  // What the scheduler keeps of a worker beside its leases: the stream to
  // talk to it and the facts its hello stored.
  struct WorkerLink {
    std::shared_ptr<WorkerSession> session;  // null while disconnected
    int64_t platform_id = 0;
    int64_t memory_bytes = 0;  // from the hello's platform; 0 = unknown
    UtilizationRoofs roofs;    // hello's roofs and peaks, raised by jobs that beat them
    // Where its runner serves a gang's rendezvous when it leads one
    // (WorkerHello.rendezvous_*; port 0: it cannot lead).
    std::string rendezvous_host;
    int32_t rendezvous_port = 0;
    std::string cpus;  // WorkerHello.cpus
    // A CPU worker's host (Platform.hostname; "" for other devices, which
    // measure on their own) and the CPUs of it its runners use (--cpus;
    // empty: not named), for one measurement at a time per CPU.
    std::string hostname;
    std::vector<int> cpu_set;
    // Why its last lease found no job although jobs are pending.
    std::vector<std::string> waiting;
  };
  // The idle workers of a worker's platform whose lease slots a lease
  // claimed for a gang, with their stream serials.
  struct ClaimedPeers {
    db::GangCandidates candidates;
    std::map<std::string, uint64_t> serials;
  };

  // OnHello's bookkeeping: `session` becomes the worker's stream (ending a
  // quiet earlier one) and inherits `open_attempts`. AlreadyExists while
  // another live stream uses the id.
  absl::Status AdoptStream(const std::shared_ptr<WorkerSession>& session,
                           const v1::WorkerHello& hello, const std::vector<int64_t>& open_attempts)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stores the hello's platform and the worker's harness, then
  // acknowledges the hello on stream `serial` (if it is still the worker's)
  // and offers it a job.
  void StorePlatformThenAck(const std::string& worker_id, uint64_t serial,
                            const v1::Platform& platform, const std::string& harness,
                            const std::string& trust_domain) ABSL_LOCKS_EXCLUDED(mu_);
  // Leases the worker a job if the table says it may have one.
  void TryAssignLocked(const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnLeaseGranted(const std::string& worker_id, uint64_t stream_serial,
                      absl::StatusOr<std::optional<db::Lease>> lease,
                      const ClaimedPeers& claimed = {}) ABSL_LOCKS_EXCLUDED(mu_);

  // A job's assignment, without an uploaded model's bytes; a result's
  // acknowledgement.
  static v1::CoordinatorMessage AssignmentMessage(const db::Lease& granted);
  static v1::CoordinatorMessage AckMessage(int64_t job_id, int64_t attempt_id);

  // `worker`'s --cpus on its host.
  HostCpus HostCpusOfLocked(const std::string& worker) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // SpreadOverCpus of the workers' --cpus on their hosts.
  std::vector<std::string> SpreadOverCpusLocked(const std::string& leader,
                                                const std::vector<std::string>& peers) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether two workers may not measure at once: two jobs timed on the
  // same CPUs would disturb each other. Workers of one host whose CPUs
  // overlap; only workers that name their CPUs (--cpus) are compared, since
  // one without is the host's only worker, as deployed (one per host and
  // device). With one_measurement_per_host, any two workers of one host.
  bool Contend(const WorkerLink& a, const WorkerLink& b) const;
  // The measuring worker (LeaseTable::IsOccupied) that Contends with
  // `worker_id`, but those in `except`; "" when none. A worker waits for
  // such a neighbour (a gang's own ranks may share CPUs).
  std::string BusyCpuNeighbourLocked(const std::string& worker_id,
                                     const std::vector<std::string>& except) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- gangs (scheduler_gangs.cc) ----
  // The gang candidates of the worker's platform; claims the lease slots of
  // as many idle peers as the largest pending gang needs.
  ClaimedPeers ClaimGangPeersLocked(const std::string& worker_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a lease without a gang: frees the claimed peers, notes why
  // nothing ran and how large gangs are. True when the lease should be
  // tried again at once (it learned of a larger gang than it claimed for).
  bool SettleClaimsLocked(const std::string& worker_id, const ClaimedPeers& claimed,
                          const db::Lease* lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records every rank's lease and sends each its assignment with its
  // GangRole; a rank that cannot be reached releases the gang.
  void AssignGang(const std::string& worker_id, uint64_t stream_serial, const db::Lease& granted,
                  const ClaimedPeers& claimed) ABSL_LOCKS_EXCLUDED(mu_);
  // A gang rank's result: GANG_BROKEN releases the gang; a rank > 0's OK
  // is acknowledged (rank 0's result is the job's); any other outcome is
  // stored as the job's result, settling the gang.
  void OnGangResult(const std::string& worker_id, const v1::JobResult& result, int rank)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stores a gang's result, then frees its other ranks (cancelled, if
  // still running) and offers them jobs.
  void StoreGangResult(const std::string& worker_id, const v1::JobResult& result,
                       v1::Measurement measurement) ABSL_LOCKS_EXCLUDED(mu_);
  // Begins the release of the attempt's gang siblings and cancels them on
  // their workers; returns them, for EndRelease once the database closed them.
  std::vector<int64_t> ReleaseGangSiblings(int64_t attempt_id) ABSL_LOCKS_EXCLUDED(mu_);
  void EndReleases(const std::vector<int64_t>& attempts) ABSL_LOCKS_EXCLUDED(mu_);
  // CancelJob messages to the workers of `members`.
  void CancelMembers(const std::vector<LeaseTable::GangMember>& members) ABSL_LOCKS_EXCLUDED(mu_);
  // Records a granted lease; the session to send it on (null when its
  // stream is gone) and whether the job is predicted not to fit.
  struct GrantedTo {
    std::shared_ptr<WorkerSession> session;
    bool predicted_oom = false;
    int64_t platform_id = 0;
    int64_t memory_bytes = 0;
  };
  GrantedTo RecordGrant(const std::string& worker_id, uint64_t stream_serial,
                        const db::Lease& granted) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `granted` to its worker (null `session`: releases it), reading
  // its uploaded model first, off the writer thread.
  void Assign(const std::string& worker_id, const std::shared_ptr<WorkerSession>& session,
              const db::Lease& granted) ABSL_LOCKS_EXCLUDED(mu_);
  // Reads the uploaded model of `granted` into its assignment (on
  // model_reads_; a model that cannot be read is logged and left out).
  void AttachModel(const db::Lease& granted, v1::CoordinatorMessage* message) const;
  // Sends the assignment, or releases the attempt when the stream is gone.
  void SendAssignment(const std::string& worker_id, const std::shared_ptr<WorkerSession>& session,
                      const db::Lease& granted, const v1::CoordinatorMessage& message)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnResult(const std::string& worker_id, const v1::JobResult& result) ABSL_LOCKS_EXCLUDED(mu_);
  // A job the worker stopped unmeasured while shutting down: released to
  // the queue (an attempt like a lost lease), then acknowledged.
  // With `handed_back` false: a rank of a broken gang (GANG_BROKEN), not
  // a sign of shutdown; its gang is released whole either way.
  void OnHandedBack(const std::string& worker_id, const v1::JobResult& result,
                    bool handed_back = true) ABSL_LOCKS_EXCLUDED(mu_);
  // After the store (or release) of a worker's result message: no longer in
  // flight; with `ack` (committed, or refused for good) forgotten and
  // acknowledged to the worker.
  void Settle(const std::string& worker_id, int64_t job_id, int64_t attempt_id, bool ack)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Settle after a result's store: logs a failure or a duplicate, counts a
  // new result, acknowledges what the store took or refused for good.
  void SettleStored(const std::string& worker_id, int64_t job_id, int64_t attempt_id,
                    const absl::StatusOr<db::StoreOutcome>& stored) ABSL_LOCKS_EXCLUDED(mu_);
  // Stores the worker's result and, in the same write, leases its next job
  // (with the gang peers `claimed` for it).
  void StoreThenLeaseNext(const std::string& worker_id, int64_t job_id, int64_t attempt_id,
                          int64_t platform_id, const v1::Measurement& measurement,
                          const std::string& device, uint64_t stream_serial, ClaimedPeers claimed)
      ABSL_LOCKS_EXCLUDED(mu_);
  // After a store that leased nothing for the worker: offers it a job the
  // usual way (`clear_leasing`: the store had claimed its lease slot).
  void OfferNext(const std::string& worker_id, bool clear_leasing) ABSL_LOCKS_EXCLUDED(mu_);
  // Stores roofs a job beat as the platform's latest (logged).
  void StoreRaisedRoofs(const std::string& worker_id, const std::string& trust_domain,
                        int64_t job_id, const v1::Platform& platform);
  // Stores the PREDICTED_OOM result of `lease` (already held for its store
  // in the lease table) and offers the next job.
  void SkipPredictedOom(const std::string& worker_id, int64_t platform_id, int64_t memory_bytes,
                        const db::Lease& lease) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns the attempts the heartbeat released (inherited, not run): the
  // caller writes their release after the lock.
  std::vector<int64_t> OnHeartbeat(const std::string& worker_id, const v1::Heartbeat& heartbeat)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases an attempt unless a release of it is already in flight.
  void Release(int64_t attempt_id, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // The database half of a release the lease table has begun.
  void WriteRelease(int64_t attempt_id, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  void NotifyChange() ABSL_LOCKS_EXCLUDED(mu_);
  // The worker's link when `session` is its current stream, else null.
  WorkerLink* CurrentLinkLocked(const std::string& worker_id,
                                const std::shared_ptr<WorkerSession>& session)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  db::Database* const database_;
  const common::Clock* const clock_;
  const SchedulerOptions options_;
  db::SweepStore sweeps_;
  db::JobStore jobs_;
  db::ResultStore results_;
  db::PlatformStore platforms_;
  db::WorkerStore workers_store_;

  const int64_t started_unix_ms_;

  mutable absl::Mutex mu_;
  LeaseTable leases_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, WorkerLink> links_ ABSL_GUARDED_BY(mu_);  // by worker id
  std::function<void()> change_listener_ ABSL_GUARDED_BY(mu_);
  // The most workers a pending job asked for at the last lease: how many
  // idle peers a lease claims for a gang. Why pending jobs last waited.
  int64_t gang_hint_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::string> waiting_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> lease_expiries_{0};
  std::atomic<int64_t> results_stored_{0};
  // Reads uploaded models for assignments off the writer thread (null
  // after FinishModelReads). Last, so that it drains before the state its
  // tasks touch is destroyed.
  std::unique_ptr<common::WorkPool> model_reads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_SCHEDULER_H_
