// LeaseTable is the coordinator's memory of which worker holds which job
// attempt, and of what each worker may be given next. The database is the
// record (jobs, attempts, stored deadlines); this table decides, and the
// Scheduler (server/scheduler.h) does the I/O its decisions call for.
//
// Pure: no I/O, no threads, no clock of its own. Every transition that
// depends on time takes `now` (Unix ms), so tests drive it synchronously.
// Not thread-safe: the Scheduler holds it under its lock.
//
// An attempt's life (AttemptState):
//
//   from          event                                      to
//   ----          -----                                      --
//   (none)        RecordLease (current stream, assigning)    kRunning
//   (none)        Hello lists it as open in the database     kInherited
//   kInherited    its worker's first Heartbeat runs it, or   kRunning
//                 its result is being stored
//   kInherited    first Heartbeat neither runs it nor has    kReleasing
//                 its result
//   kRunning      its worker says hello again (a reconnect:  kInherited
//                 the database still lists it)
//   kRunning,     its holder's result arrives (HoldForStore) kStoring
//   kInherited
//   kStoring      Settle, acknowledged                       (forgotten)
//   kStoring      Settle, not acknowledged (a store that     state before
//                 may work when the worker sends again)      kStoring
//   kRunning,     Expire: holder silent for lease_timeout    kReleasing
//   kInherited
//   any held      BeginRelease (assignment undeliverable,    kReleasing
//                 a store that failed for good)
//   (none)        ReleaseIfUnheld (database deadline passed  kReleasing
//                 for an attempt of an earlier process)
//   kReleasing    EndRelease (the database took it back)     (forgotten)
//   kReleasing    a hello lists it (the database has not     kReleasing
//                 taken it back yet)
//
// kStoring never expires: a live worker whose result is being committed
// keeps its attempt. kReleasing belongs to no worker, and nothing brings it
// back: a late result for it is stored or refused by the database alone.
//
// Hostile or confused peers: a result for an attempt another worker holds
// is stored as the store decides, but the attempt stays its holder's (the
// sender's acknowledgement forgets nothing of it); a heartbeat naming an
// attempt the worker does not hold changes nothing; a second live stream
// with a worker's id is refused while the first was heard within a lease
// timeout.
//
// A worker may be leased a job (MayLease) when it is connected, its hello
// is stored (ready), it is not already leasing, not silent, not draining,
// has no result in flight and holds no attempt (but the one it is settling,
// when the next lease rides the result's own write). Multi-worker (gang)
// A gang job (a data-parallel job over several workers) holds one attempt
// per rank, leased together (RecordGang after each rank's RecordLease);
// each attempt keeps the states above. The table only remembers the gang:
// the Scheduler releases or settles the siblings together (GangSiblings),
// and a gang's attempt leaves the gang when it leaves the table.
#ifndef PARADNN_SERVER_LEASE_TABLE_H_
#define PARADNN_SERVER_LEASE_TABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::server {

// AttemptStateName's table follows this order.
enum class AttemptState { kRunning, kInherited, kStoring, kReleasing };
const char* AttemptStateName(AttemptState state);

// A worker as the scheduler sees it right now (for ListWorkers).
struct LiveWorker {
  // idle, busy, draining (shutting down, idle), silent (connected, not
  // answering), disconnected
  v1::WorkerState state = v1::WORKER_DISCONNECTED;
  int64_t current_job_id = 0;
  std::string device_kind;
  std::string waiting;  // why an idle worker holds no job (the Scheduler fills it)
  std::string cpus;     // its hello's --cpus (the Scheduler fills it)
};

// The lease deadline written to the database for a worker heard at `now`:
// two timeouts, so that it is rewritten about once a timeout rather than at
// every heartbeat (at 5,000 workers heartbeats were more writes than
// results).
inline int64_t StoredLeaseDeadline(int64_t now, int64_t lease_timeout_ms) {
  return now + 2 * lease_timeout_ms;
}

class LeaseTable {
 public:
  explicit LeaseTable(int64_t lease_timeout_ms) : lease_timeout_ms_(lease_timeout_ms) {}

  // ---- workers and their streams ----
  struct HelloVerdict {
    bool refused = false;          // another live stream uses the id
    int64_t other_quiet_ms = 0;    // how long that other stream was quiet
    bool replaces_stream = false;  // a quiet live stream is taken over
  };
  // A stream says hello as `worker_id`. Stream serials are positive (0
  // means disconnected in this table). `other_stream_live`: the worker's
  // previous stream is another one and still open. `open_attempts`: the
  // attempts the database holds for the worker; each becomes kInherited
  // (but one being released). Not refused: the worker is connected on
  // `stream`, not ready, with every flag of an earlier stream cleared.
  HelloVerdict Hello(const std::string& worker_id, uint64_t stream, const std::string& device_kind,
                     bool other_stream_live, const std::vector<int64_t>& open_attempts,
                     int64_t now);
  // The worker's hello is stored and acknowledged: it may be leased jobs.
  // False (nothing changes) when `stream` is no longer its stream.
  bool MarkReady(const std::string& worker_id, uint64_t stream);
  bool IsCurrentStream(const std::string& worker_id, uint64_t stream) const;
  // The device kind of the worker's latest hello ("" for an unknown worker).
  const std::string& DeviceKindOf(const std::string& worker_id) const;
  // Any message from the worker's current stream. True when the worker was
  // silent and answers again.
  bool Heard(const std::string& worker_id, int64_t now);

  struct HeartbeatActions {
    bool write_last_seen = false;         // workers.last_seen_unix_ms is stale
    int64_t extend_stored_deadlines = 0;  // > 0: write this deadline for its attempts
    bool began_draining = false;          // first heartbeat saying draining
    std::vector<int64_t> released;        // inherited, lost: now kReleasing
  };
  HeartbeatActions Heartbeat(const std::string& worker_id, int64_t running_attempt, bool draining,
                             int64_t now);
  // The worker said it is shutting down some other way (a job handed back).
  void MarkDraining(const std::string& worker_id);
  // The worker's current stream closed: disconnected, its attempts kept
  // until they expire. Returns how many it holds.
  size_t StreamClosed(const std::string& worker_id);
  // No more leases for anyone (graceful shutdown).
  void StopAssigning() { assigning_ = false; }

  // ---- leases ----
  // Whether the worker may be leased a job now or, with `settling_attempt`
  // (its only held attempt, whose result is about to be stored), as soon as
  // that result is stored. Attempt ids are positive: 0 means none.
  bool MayLease(const std::string& worker_id, int64_t settling_attempt) const;
  // Connected, ready, answering and not draining: a worker a gang may count
  // on, busy or not.
  bool IsInService(const std::string& worker_id) const;
  // Holds an attempt, has a lease in flight or a result being stored: its
  // CPUs are measuring (or about to).
  bool IsOccupied(const std::string& worker_id) const;
  // MayLease(worker, 0), and if so claims the worker's lease slot (one
  // lease in flight per worker).
  bool BeginLease(const std::string& worker_id);
  // The lease in flight returned (with or without a job).
  void EndLease(const std::string& worker_id);
  // A lease granted to the worker's stream `stream`: kRunning, unless that
  // stream is gone or assigning stopped (false: nothing recorded, the
  // caller releases it). `stored_deadline`: what the database holds.
  bool RecordLease(const std::string& worker_id, uint64_t stream, int64_t attempt, int64_t job,
                   int64_t stored_deadline);

  // ---- results ----
  // The worker's result for `attempt` is being stored: the worker gets no
  // other lease meanwhile and, if it holds the attempt, the attempt cannot
  // expire. Returns whether the worker's next lease rides the result's own
  // write (MayLease with this attempt settling), claiming its lease slot.
  bool ResultArrived(const std::string& worker_id, int64_t attempt);
  // As ResultArrived, without a lease riding along (a PREDICTED_OOM result
  // the coordinator stores itself, a job handed back).
  void HoldForStore(const std::string& worker_id, int64_t attempt);
  // The store of the worker's result ended. `acknowledged`: committed, a
  // duplicate, or refused for good: the attempt is forgotten unless another
  // worker holds it. Otherwise it returns to its state before the store.
  void Settle(const std::string& worker_id, int64_t attempt, bool acknowledged);

  // ---- releases and expiry ----
  // Takes a held or unknown attempt from its holder to kReleasing. False
  // when it is already being released (the caller must not release again).
  bool BeginRelease(int64_t attempt);
  // BeginRelease for an attempt no worker in this table holds (a lease of
  // an earlier coordinator process whose stored deadline passed).
  bool ReleaseIfUnheld(int64_t attempt);
  void EndRelease(int64_t attempt);

  struct Expiry {
    std::vector<int64_t> released;          // now kReleasing
    std::vector<std::string> newly_silent;  // connected, not answering
  };
  // Attempts of workers silent for a lease timeout, but those being stored,
  // go to kReleasing; such a worker still connected becomes silent and gets
  // no job until it answers.
  Expiry Expire(int64_t now);

  // ---- gangs ----
  // `attempts` (rank order, each recorded by RecordLease) form one gang.
  void RecordGang(const std::vector<int64_t>& attempts);
  struct GangMember {
    int64_t attempt = 0;
    int rank = 0;
    std::string worker_id;  // "" while releasing
    int64_t job_id = 0;
  };
  // The other attempts of `attempt`'s gang still in the table; empty for an
  // attempt of no gang.
  std::vector<GangMember> GangSiblings(int64_t attempt) const;
  // `attempt`'s rank in its gang; -1 for an attempt of no gang.
  int GangRank(int64_t attempt) const;
  // The gang's result is stored (the database closed every attempt of it):
  // its other attempts are forgotten, but those being released or stored.
  // Returns the workers that held them.
  std::vector<std::string> ForgetGangSiblings(int64_t attempt);

  // ---- views ----
  struct AttemptView {
    std::string worker_id;  // "" while releasing
    int64_t job_id = 0;     // 0 when unknown (inherited from an earlier stream)
    AttemptState state = AttemptState::kRunning;
    int64_t deadline_unix_ms = 0;  // in-memory deadline; 0 when none applies
  };
  // Empty when the table does not know the attempt.
  std::optional<AttemptView> Find(int64_t attempt) const;
  std::map<std::string, LiveWorker> Snapshot() const;
  // The attempts the worker holds (running, inherited, storing).
  std::vector<int64_t> HeldBy(const std::string& worker_id) const;
  // Empty when the table's indexes agree; else what disagrees (tests).
  std::string CheckInvariants() const;

 private:
  struct Worker {
    std::string device_kind;
    uint64_t stream = 0;   // 0 while disconnected
    bool ready = false;    // hello stored and acknowledged
    bool leasing = false;  // a lease is in flight
    bool first_heartbeat_seen = false;
    // Stopped answering with its stream open: no job until it speaks.
    bool silent = false;
    // Said it is shutting down: no new job on this stream.
    bool draining = false;
    int64_t last_heard_unix_ms = 0;
    // The earliest lease deadline the database holds for its attempts (0:
    // unknown, as for inherited ones), and when workers.last_seen_unix_ms
    // was last written.
    int64_t stored_deadline_floor_ms = 0;
    int64_t last_seen_written_ms = 0;
    std::set<int64_t> held;     // attempts it holds (not releasing)
    std::set<int64_t> storing;  // its results being stored (its own attempts or not)
  };
  struct Attempt {
    std::string worker_id;  // "" while releasing
    int64_t job_id = 0;
    AttemptState state = AttemptState::kRunning;
    AttemptState before_store = AttemptState::kRunning;  // restored by an unacknowledged Settle
  };

  Worker* FindWorker(const std::string& worker_id);
  const Worker* FindWorker(const std::string& worker_id) const;
  void Hold(const std::string& worker_id, Worker& worker, int64_t attempt, int64_t job,
            AttemptState state);
  // Drops the attempt from its holder and from the table (not a releasing
  // one), and from its gang unless `keep_gang` (it is about to be released).
  void Forget(int64_t attempt, bool keep_gang = false);
  void LeaveGang(int64_t attempt);
  std::vector<int64_t> SettleInherited(Worker& worker, int64_t running_attempt);
  void Expired(const std::string& worker_id, Worker& worker, int64_t now, Expiry& expiry);

  const int64_t lease_timeout_ms_;
  bool assigning_ = true;
  std::map<std::string, Worker> workers_;  // by worker id
  std::map<int64_t, Attempt> attempts_;    // by attempt id
  // Gangs by their rank 0 attempt, each its attempts in rank order, and
  // each gang attempt's gang.
  std::map<int64_t, std::vector<int64_t>> gangs_;
  std::map<int64_t, int64_t> gang_of_;
  std::map<int64_t, int> gang_rank_;  // each gang attempt's rank
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_LEASE_TABLE_H_
