#include "server/lease_table.h"

#include <algorithm>
#include <cassert>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace paradnn::server {

const char* AttemptStateName(AttemptState state) {
  // In AttemptState's order.
  static constexpr const char* kNames[] = {"running", "inherited", "storing", "releasing"};
  const auto index = static_cast<size_t>(state);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

namespace {

// How stale workers.last_seen_unix_ms may be for a connected worker (the
// CLI shows it; a disconnect writes the exact time).
constexpr int64_t kLastSeenWriteIntervalMs = 5000;

}  // namespace

LeaseTable::Worker* LeaseTable::FindWorker(const std::string& worker_id) {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second;
}

const LeaseTable::Worker* LeaseTable::FindWorker(const std::string& worker_id) const {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second;
}

void LeaseTable::Hold(const std::string& worker_id, Worker& worker, int64_t attempt, int64_t job,
                      AttemptState state) {
  Attempt& held = attempts_[attempt];
  if (!held.worker_id.empty() && held.worker_id != worker_id) {
    // The database says another worker holds it now: it moves.
    if (Worker* previous = FindWorker(held.worker_id)) previous->held.erase(attempt);
  }
  held.worker_id = worker_id;
  if (job != 0) held.job_id = job;
  held.state = state;
  if (worker.storing.count(attempt) != 0) {
    // Its result from this worker is already being stored (sent before the
    // attempt was known to be its own, as after a reconnect).
    held.before_store = state;
    held.state = AttemptState::kStoring;
  }
  worker.held.insert(attempt);
}

void LeaseTable::Forget(int64_t attempt, bool keep_gang) {
  auto it = attempts_.find(attempt);
  if (it == attempts_.end() || it->second.state == AttemptState::kReleasing) return;
  if (Worker* holder = FindWorker(it->second.worker_id)) holder->held.erase(attempt);
  attempts_.erase(it);
  if (!keep_gang) LeaveGang(attempt);
}

void LeaseTable::LeaveGang(int64_t attempt) {
  auto member = gang_of_.find(attempt);
  if (member == gang_of_.end()) return;
  std::vector<int64_t>& gang = gangs_[member->second];
  gang.erase(std::remove(gang.begin(), gang.end(), attempt), gang.end());
  if (gang.empty()) gangs_.erase(member->second);
  gang_of_.erase(member);
  gang_rank_.erase(attempt);
}

void LeaseTable::RecordGang(const std::vector<int64_t>& attempts) {
  if (attempts.size() < 2) return;
  for (size_t rank = 0; rank < attempts.size(); ++rank) {
    const int64_t attempt = attempts[rank];
    if (attempts_.count(attempt) == 0) continue;  // not recorded: its stream was gone
    gangs_[attempts.front()].push_back(attempt);
    gang_of_[attempt] = attempts.front();
    gang_rank_[attempt] = static_cast<int>(rank);
  }
}

std::vector<LeaseTable::GangMember> LeaseTable::GangSiblings(int64_t attempt) const {
  std::vector<GangMember> siblings;
  auto member = gang_of_.find(attempt);
  if (member == gang_of_.end()) return siblings;
  const std::vector<int64_t>& gang = gangs_.at(member->second);
  for (int64_t sibling : gang) {
    if (sibling == attempt) continue;
    const Attempt& a = attempts_.at(sibling);
    siblings.push_back({sibling, GangRank(sibling), a.worker_id, a.job_id});
  }
  return siblings;
}

int LeaseTable::GangRank(int64_t attempt) const {
  auto rank = gang_rank_.find(attempt);
  return rank == gang_rank_.end() ? -1 : rank->second;
}

std::vector<std::string> LeaseTable::ForgetGangSiblings(int64_t attempt) {
  std::vector<std::string> freed;
  for (const GangMember& sibling : GangSiblings(attempt)) {
    const AttemptState state = attempts_.at(sibling.attempt).state;
    if (state == AttemptState::kReleasing || state == AttemptState::kStoring) continue;
    Forget(sibling.attempt);
    freed.push_back(sibling.worker_id);
  }
  return freed;
}

LeaseTable::HelloVerdict LeaseTable::Hello(const std::string& worker_id, uint64_t stream,
                                           const std::string& device_kind, bool other_stream_live,
                                           const std::vector<int64_t>& open_attempts, int64_t now) {
  assert(stream != 0 && "stream serials are positive");
  Worker& worker = workers_[worker_id];
  HelloVerdict verdict;
  if (other_stream_live) {
    // Two live workers with one id would steal each other's jobs. A stream
    // quiet for a lease timeout is taken to be the same worker's dead one
    // (its reconnect raced the coordinator noticing).
    verdict.other_quiet_ms = now - worker.last_heard_unix_ms;
    if (verdict.other_quiet_ms < lease_timeout_ms_) {
      verdict.refused = true;
      return verdict;
    }
    verdict.replaces_stream = true;
  }
  worker.device_kind = device_kind;
  worker.stream = stream;
  worker.last_heard_unix_ms = now;
  worker.stored_deadline_floor_ms = 0;  // inherited attempts: extended at the first heartbeat
  worker.ready = false;
  worker.leasing = false;
  worker.first_heartbeat_seen = false;
  worker.silent = false;
  worker.draining = false;
  for (int64_t attempt : open_attempts) {
    auto known = attempts_.find(attempt);
    if (known != attempts_.end() && known->second.state == AttemptState::kReleasing) continue;
    Hold(worker_id, worker, attempt, /*job=*/0, AttemptState::kInherited);
  }
  return verdict;
}

bool LeaseTable::MarkReady(const std::string& worker_id, uint64_t stream) {
  Worker* worker = FindWorker(worker_id);
  if (worker == nullptr || worker->stream == 0 || worker->stream != stream) return false;
  worker->ready = true;
  return true;
}

bool LeaseTable::IsCurrentStream(const std::string& worker_id, uint64_t stream) const {
  const Worker* worker = FindWorker(worker_id);
  return worker != nullptr && worker->stream != 0 && worker->stream == stream;
}

const std::string& LeaseTable::DeviceKindOf(const std::string& worker_id) const {
  static const std::string kNone;
  const Worker* worker = FindWorker(worker_id);
  return worker == nullptr ? kNone : worker->device_kind;
}

bool LeaseTable::Heard(const std::string& worker_id, int64_t now) {
  Worker* worker = FindWorker(worker_id);
  if (worker == nullptr) return false;
  worker->last_heard_unix_ms = now;
  const bool answers_again = worker->silent;
  worker->silent = false;
  return answers_again;
}

LeaseTable::HeartbeatActions LeaseTable::Heartbeat(const std::string& worker_id,
                                                   int64_t running_attempt, bool draining,
                                                   int64_t now) {
  HeartbeatActions actions;
  Worker* worker = FindWorker(worker_id);
  if (worker == nullptr) return actions;
  // The database's copies of the worker's liveness move in steps: last
  // seen every few seconds, the stored lease deadline once it would fall
  // within a timeout of now (the deadline that counts is in memory).
  if (now - worker->last_seen_written_ms >= kLastSeenWriteIntervalMs) {
    actions.write_last_seen = true;
    worker->last_seen_written_ms = now;
  }
  if (!worker->held.empty() && worker->stored_deadline_floor_ms < now + lease_timeout_ms_) {
    actions.extend_stored_deadlines = StoredLeaseDeadline(now, lease_timeout_ms_);
    worker->stored_deadline_floor_ms = actions.extend_stored_deadlines;
  }
  if (draining && !worker->draining) {
    worker->draining = true;
    actions.began_draining = true;
  }
  if (!worker->first_heartbeat_seen) {
    worker->first_heartbeat_seen = true;
    actions.released = SettleInherited(*worker, running_attempt);
  }
  return actions;
}

std::vector<int64_t> LeaseTable::SettleInherited(Worker& worker, int64_t running_attempt) {
  // Attempts held before this stream that the worker neither runs nor has a
  // result for (it would have arrived before this first heartbeat).
  std::vector<int64_t> lost;
  for (int64_t attempt : worker.held) {
    Attempt& held = attempts_.at(attempt);
    if (held.state == AttemptState::kStoring && held.before_store == AttemptState::kInherited) {
      held.before_store = AttemptState::kRunning;
    }
    if (held.state != AttemptState::kInherited) continue;
    if (attempt == running_attempt) {
      held.state = AttemptState::kRunning;
    } else {
      lost.push_back(attempt);
    }
  }
  std::vector<int64_t> released;
  for (int64_t attempt : lost) {
    if (BeginRelease(attempt)) released.push_back(attempt);
  }
  return released;
}

void LeaseTable::MarkDraining(const std::string& worker_id) {
  if (Worker* worker = FindWorker(worker_id)) worker->draining = true;
}

size_t LeaseTable::StreamClosed(const std::string& worker_id) {
  Worker* worker = FindWorker(worker_id);
  if (worker == nullptr) return 0;
  worker->stream = 0;
  worker->ready = false;
  worker->leasing = false;
  return worker->held.size();
}

bool LeaseTable::MayLease(const std::string& worker_id, int64_t settling_attempt) const {
  const Worker* worker = FindWorker(worker_id);
  if (worker == nullptr || !assigning_ || worker->stream == 0 || !worker->ready ||
      worker->leasing || worker->silent || worker->draining || !worker->storing.empty()) {
    return false;
  }
  return std::all_of(worker->held.begin(), worker->held.end(),
                     [settling_attempt](int64_t held) { return held == settling_attempt; });
}

bool LeaseTable::IsInService(const std::string& worker_id) const {
  const Worker* worker = FindWorker(worker_id);
  return worker != nullptr && worker->stream != 0 && worker->ready && !worker->silent &&
         !worker->draining;
}

bool LeaseTable::IsOccupied(const std::string& worker_id) const {
  const Worker* worker = FindWorker(worker_id);
  return worker != nullptr &&
         (worker->leasing || !worker->held.empty() || !worker->storing.empty());
}

bool LeaseTable::BeginLease(const std::string& worker_id) {
  if (!MayLease(worker_id, /*settling_attempt=*/0)) return false;
  workers_.at(worker_id).leasing = true;
  return true;
}

void LeaseTable::EndLease(const std::string& worker_id) {
  if (Worker* worker = FindWorker(worker_id)) worker->leasing = false;
}

bool LeaseTable::RecordLease(const std::string& worker_id, uint64_t stream, int64_t attempt,
                             int64_t job, int64_t stored_deadline) {
  Worker* worker = FindWorker(worker_id);
  if (!assigning_ || worker == nullptr || !IsCurrentStream(worker_id, stream)) return false;
  // The floor stays the earliest deadline among the held attempts.
  worker->stored_deadline_floor_ms =
      worker->held.empty() ? stored_deadline
                           : std::min(worker->stored_deadline_floor_ms, stored_deadline);
  Hold(worker_id, *worker, attempt, job, AttemptState::kRunning);
  return true;
}

bool LeaseTable::ResultArrived(const std::string& worker_id, int64_t attempt) {
  const bool lease_next = MayLease(worker_id, attempt);
  if (lease_next) workers_.at(worker_id).leasing = true;
  HoldForStore(worker_id, attempt);
  return lease_next;
}

void LeaseTable::HoldForStore(const std::string& worker_id, int64_t attempt) {
  workers_[worker_id].storing.insert(attempt);
  auto it = attempts_.find(attempt);
  if (it == attempts_.end() || it->second.worker_id != worker_id ||
      it->second.state == AttemptState::kStoring) {
    return;  // another worker's, unknown, releasing, or already storing
  }
  it->second.before_store = it->second.state;
  it->second.state = AttemptState::kStoring;
}

void LeaseTable::Settle(const std::string& worker_id, int64_t attempt, bool acknowledged) {
  Worker* worker = FindWorker(worker_id);
  if (worker != nullptr) worker->storing.erase(attempt);
  auto it = attempts_.find(attempt);
  if (it == attempts_.end() || it->second.state == AttemptState::kReleasing) return;
  if (it->second.worker_id != worker_id) return;  // another worker's: stays its holder's
  if (acknowledged) {
    Forget(attempt);
  } else if (it->second.state == AttemptState::kStoring) {
    it->second.state = it->second.before_store;
  }
}

bool LeaseTable::BeginRelease(int64_t attempt) {
  auto it = attempts_.find(attempt);
  if (it != attempts_.end() && it->second.state == AttemptState::kReleasing) return false;
  Forget(attempt, /*keep_gang=*/true);
  Attempt& releasing = attempts_[attempt];
  releasing.state = AttemptState::kReleasing;
  return true;
}

bool LeaseTable::ReleaseIfUnheld(int64_t attempt) {
  if (attempts_.count(attempt) != 0) return false;  // held, or already releasing
  return BeginRelease(attempt);
}

void LeaseTable::EndRelease(int64_t attempt) {
  auto it = attempts_.find(attempt);
  if (it != attempts_.end() && it->second.state == AttemptState::kReleasing) {
    attempts_.erase(it);
    LeaveGang(attempt);
  }
}

LeaseTable::Expiry LeaseTable::Expire(int64_t now) {
  Expiry expiry;
  for (auto& [worker_id, worker] : workers_) Expired(worker_id, worker, now, expiry);
  return expiry;
}

void LeaseTable::Expired(const std::string& worker_id, Worker& worker, int64_t now,
                         Expiry& expiry) {
  if (worker.held.empty() || now - worker.last_heard_unix_ms < lease_timeout_ms_) return;
  std::vector<int64_t> expired;
  for (int64_t attempt : worker.held) {
    // A live worker whose result for it is being stored keeps it.
    if (attempts_.at(attempt).state != AttemptState::kStoring) expired.push_back(attempt);
  }
  for (int64_t attempt : expired) {
    if (BeginRelease(attempt)) expiry.released.push_back(attempt);
  }
  if (worker.stream != 0 && !worker.silent) {
    worker.silent = true;
    expiry.newly_silent.push_back(worker_id);
  }
}

std::optional<LeaseTable::AttemptView> LeaseTable::Find(int64_t attempt) const {
  auto it = attempts_.find(attempt);
  if (it == attempts_.end()) return std::nullopt;
  AttemptView view;
  view.worker_id = it->second.worker_id;
  view.job_id = it->second.job_id;
  view.state = it->second.state;
  const Worker* holder = FindWorker(view.worker_id);
  if (holder != nullptr && view.state != AttemptState::kStoring &&
      view.state != AttemptState::kReleasing) {
    view.deadline_unix_ms = holder->last_heard_unix_ms + lease_timeout_ms_;
  }
  return view;
}

std::vector<int64_t> LeaseTable::HeldBy(const std::string& worker_id) const {
  const Worker* worker = FindWorker(worker_id);
  if (worker == nullptr) return {};
  return {worker->held.begin(), worker->held.end()};
}

std::map<std::string, LiveWorker> LeaseTable::Snapshot() const {
  std::map<std::string, LiveWorker> out;
  for (const auto& [worker_id, worker] : workers_) {
    LiveWorker live;
    live.device_kind = worker.device_kind;
    if (worker.stream == 0) {
      live.state = v1::WORKER_DISCONNECTED;
    } else if (worker.silent) {
      live.state = v1::WORKER_SILENT;
    } else if (!worker.held.empty()) {
      live.state = v1::WORKER_BUSY;
      // The oldest attempt whose job is known (inherited ones are not).
      for (int64_t attempt : worker.held) {
        const int64_t job = attempts_.at(attempt).job_id;
        if (job != 0) {
          live.current_job_id = job;
          break;
        }
      }
    } else if (worker.draining) {
      live.state = v1::WORKER_DRAINING;
    } else {
      live.state = v1::WORKER_IDLE;
    }
    out[worker_id] = live;
  }
  return out;
}

std::string LeaseTable::CheckInvariants() const {
  std::string problems;
  for (const auto& [attempt, held] : attempts_) {
    const bool releasing = held.state == AttemptState::kReleasing;
    if (releasing != held.worker_id.empty()) {
      absl::StrAppend(&problems, "attempt ", attempt, " is ", AttemptStateName(held.state),
                      " with holder '", held.worker_id, "'; ");
    }
    if (releasing) continue;
    const Worker* holder = FindWorker(held.worker_id);
    if (holder == nullptr || holder->held.count(attempt) == 0) {
      absl::StrAppend(&problems, "attempt ", attempt, " is not in its holder's set; ");
    } else if ((held.state == AttemptState::kStoring) != (holder->storing.count(attempt) != 0)) {
      absl::StrAppend(&problems, "attempt ", attempt, " is ", AttemptStateName(held.state),
                      " but its holder's storing set disagrees; ");
    }
  }
  for (const auto& [worker_id, worker] : workers_) {
    for (int64_t attempt : worker.held) {
      auto it = attempts_.find(attempt);
      if (it == attempts_.end() || it->second.worker_id != worker_id) {
        absl::StrAppend(&problems, worker_id, " holds attempt ", attempt,
                        " the table does not give it; ");
      }
    }
  }
  for (const auto& [attempt, gang] : gang_of_) {
    auto members = gangs_.find(gang);
    if (attempts_.count(attempt) == 0 || members == gangs_.end() ||
        std::find(members->second.begin(), members->second.end(), attempt) ==
            members->second.end()) {
      absl::StrAppend(&problems, "gang attempt ", attempt, " of gang ", gang,
                      " is not in the table or its gang; ");
    }
  }
  return problems;
}

}  // namespace paradnn::server
