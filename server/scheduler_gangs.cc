// Scheduler, gang side: data-parallel jobs over several workers
// (params.hosts). A lease claims the idle peers of the leasing worker's
// platform, the database grants one attempt per rank in one commit or
// nothing (db::JobStore::LeaseNext), and every rank is sent its assignment
// with its GangRole. A gang is settled whole: one rank's GANG_BROKEN, lost
// lease or hand-back releases every rank; its result is stored once.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/result_validation.h"
#include "server/scheduler.h"

namespace paradnn::server {
namespace {

// A per-attempt secret every rank must present at the rendezvous (it stops
// misrouted and stale ranks; the rendezvous store is not encrypted).
std::string GangSecret() {
  absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

// How long a rank's collective (or the rendezvous) waits for a peer before
// it gives up: a peer may be a whole step behind (a step is at most the
// timed budget), or still building its model at the rendezvous. Bounded, so
// that a dead peer ends the gang long before its lease would.
double CollectiveTimeoutSeconds(const v1::RunSettings& settings) {
  const double step_budget = settings.max_seconds() > 0 ? settings.max_seconds() : 60;
  return std::clamp(2 * step_budget, 30.0, 600.0);
}

int64_t ParamOr(const v1::ModelConfig& config, const char* name, int64_t otherwise) {
  auto it = config.params().find(name);
  return it == config.params().end() ? otherwise : it->second;
}

}  // namespace

std::vector<std::string> SpreadOverCpus(const HostCpus& leader,
                                        std::vector<std::pair<std::string, HostCpus>> peers) {
  HostCpus taken = leader;
  std::vector<std::string> ordered;
  ordered.reserve(peers.size());
  std::vector<bool> placed(peers.size(), false);
  size_t first = 0;  // the first peer not placed yet
  auto disjoint = [&taken](const HostCpus& cpus) {
    return std::none_of(cpus.begin(), cpus.end(),
                        [&taken](const auto& cpu) { return taken.count(cpu) > 0; });
  };
  while (ordered.size() < peers.size()) {
    // Where every peer holds CPUs of its own (one worker per host) the
    // first unplaced one is taken each time: linear on a large fleet.
    size_t next = first;
    while (next < peers.size() && (placed[next] || !disjoint(peers[next].second))) ++next;
    if (next == peers.size()) {  // every CPU has a rank: a second layer
      taken.clear();
      next = first;
    }
    placed[next] = true;
    taken.insert(peers[next].second.begin(), peers[next].second.end());
    ordered.push_back(std::move(peers[next].first));
    while (first < peers.size() && placed[first]) ++first;
  }
  return ordered;
}

HostCpus Scheduler::HostCpusOfLocked(const std::string& worker) const {
  HostCpus cpus;
  const WorkerLink& link = links_.at(worker);
  for (int cpu : link.cpu_set) cpus.emplace(link.hostname, cpu);
  return cpus;
}

std::vector<std::string> Scheduler::SpreadOverCpusLocked(
    const std::string& leader, const std::vector<std::string>& peers) const {
  std::vector<std::pair<std::string, HostCpus>> placed;
  placed.reserve(peers.size());
  for (const std::string& peer : peers) placed.emplace_back(peer, HostCpusOfLocked(peer));
  return SpreadOverCpus(HostCpusOfLocked(leader), std::move(placed));
}

Scheduler::ClaimedPeers Scheduler::ClaimGangPeersLocked(const std::string& worker_id) {
  ClaimedPeers claimed;
  const WorkerLink& leader = links_.at(worker_id);
  claimed.candidates.platform_id = leader.platform_id;
  if (leader.platform_id == 0) return claimed;  // an unknown platform is nobody's peer
  if (gang_hint_ <= 1) {
    // No gang pending at the last lease: no walk over every worker on this
    // hot path. A gang found first in run order waits, and the lease that
    // learned of it leases again, counting (SettleClaimsLocked).
    claimed.candidates.platform_workers = db::kPlatformWorkersNotCounted;
    return claimed;
  }
  int64_t in_service = 0;
  std::vector<std::string> idle;
  for (const auto& [peer, link] : links_) {
    if (link.platform_id != leader.platform_id || !leases_.IsInService(peer)) continue;
    ++in_service;
    if (peer != worker_id) idle.push_back(peer);
  }
  claimed.candidates.platform_workers = std::max<int64_t>(1, in_service);
  // Claims only when this worker can lead a gang (its runner serves the
  // rendezvous).
  if (leader.rendezvous_port <= 0) return claimed;
  std::vector<std::string> gang = {worker_id};
  for (const std::string& peer : SpreadOverCpusLocked(worker_id, idle)) {
    if (static_cast<int64_t>(claimed.serials.size()) + 1 >= gang_hint_) break;
    // A gang's ranks may share CPUs with each other, not with another job.
    if (!BusyCpuNeighbourLocked(peer, gang).empty()) continue;
    if (!leases_.BeginLease(peer)) continue;  // busy, or leasing for itself
    gang.push_back(peer);
    claimed.candidates.idle_peers.push_back(peer);
    claimed.serials[peer] = links_.at(peer).session->stream_serial();
  }
  return claimed;
}

bool Scheduler::SettleClaimsLocked(const std::string& worker_id, const ClaimedPeers& claimed,
                                   const db::Lease* lease) {
  for (const auto& [peer, serial] : claimed.serials) leases_.EndLease(peer);
  const int64_t claimed_for = gang_hint_;
  gang_hint_ = lease != nullptr ? lease->max_pending_hosts : 1;
  auto link = links_.find(worker_id);
  const bool idle = lease == nullptr || lease->job_id == 0;
  if (link != links_.end()) {
    link->second.waiting = idle && lease != nullptr ? lease->waiting : std::vector<std::string>{};
  }
  if (lease != nullptr) waiting_ = lease->waiting;
  // A gang larger than this lease claimed peers for: lease again, claiming.
  return idle && gang_hint_ > claimed_for;
}

std::vector<std::string> Scheduler::WaitingLines(int64_t sweep_id) const {
  const std::string prefix = absl::StrCat("sweep ", sweep_id, ": ");
  std::vector<std::string> lines;
  absl::MutexLock lock(&mu_);
  for (const std::string& line : waiting_) {
    if (absl::StartsWith(line, prefix)) lines.push_back(line.substr(prefix.size()));
  }
  return lines;
}

void Scheduler::AssignGang(const std::string& worker_id, uint64_t stream_serial,
                           const db::Lease& granted, const ClaimedPeers& claimed) {
  struct Rank {
    std::string worker_id;
    int64_t attempt_id = 0;
    std::shared_ptr<WorkerSession> session;
  };
  std::vector<Rank> ranks;
  bool recorded = true;
  std::string host;
  int32_t port = 0;
  {
    absl::MutexLock lock(&mu_);
    leases_.EndLease(worker_id);
    SettleClaimsLocked(worker_id, claimed, &granted);
    std::vector<int64_t> attempts;
    for (const db::Lease::GangMember& member : granted.gang) {
      const auto serial = claimed.serials.find(member.worker_id);
      const uint64_t member_serial = member.worker_id == worker_id
                                         ? stream_serial
                                         : (serial == claimed.serials.end() ? 0 : serial->second);
      recorded = leases_.RecordLease(member.worker_id, member_serial, member.attempt_id,
                                     granted.job_id, granted.lease_deadline_unix_ms) &&
                 recorded;
      attempts.push_back(member.attempt_id);
      auto link = links_.find(member.worker_id);
      ranks.push_back({member.worker_id, member.attempt_id,
                       link == links_.end() ? nullptr : link->second.session});
    }
    leases_.RecordGang(attempts);
    const WorkerLink& leader = links_.at(worker_id);
    host = leader.rendezvous_host;
    port = leader.rendezvous_port;
  }
  const int64_t gang_attempt = granted.gang.front().attempt_id;
  if (!recorded || host.empty() || port <= 0) {
    Release(gang_attempt, "a rank's worker was gone before the gang's assignments were sent");
    NotifyChange();
    return;
  }
  v1::GangRole role;
  role.set_hosts(static_cast<int32_t>(ranks.size()));
  role.set_devices_per_host(static_cast<int32_t>(ParamOr(granted.config, "devices", 1)));
  role.set_rendezvous_host(host);
  role.set_rendezvous_port(port);
  role.set_secret(GangSecret());
  role.set_gang_tag(absl::StrCat("job ", granted.job_id, " attempt ", gang_attempt));
  role.set_collective_timeout_s(CollectiveTimeoutSeconds(granted.settings));
  for (const Rank& rank : ranks) role.add_worker_ids(rank.worker_id);
  for (size_t r = 0; r < ranks.size(); ++r) {
    db::Lease own = granted;
    own.attempt_id = ranks[r].attempt_id;
    v1::CoordinatorMessage message = AssignmentMessage(own);
    v1::GangRole* gang = message.mutable_assignment()->mutable_job()->mutable_gang();
    *gang = role;
    gang->set_host_rank(static_cast<int32_t>(r));
    // TorchScript models of gang jobs are read here, on the writer thread:
    // rare, and a gang's ranks must be sent together.
    if (granted.config.has_torchscript()) AttachModel(granted, &message);
    if (!ranks[r].session || !ranks[r].session->Send(message)) {
      Release(gang_attempt, absl::StrCat("rank ", r, "'s worker ", ranks[r].worker_id,
                                         " was gone before its gang assignment was sent"));
      break;
    }
    spdlog::info("assigned job {} (attempt {}) to {} as rank {} of {}", granted.job_id,
                 ranks[r].attempt_id, ranks[r].worker_id, r, ranks.size());
  }
  NotifyChange();
}

void Scheduler::OnGangResult(const std::string& worker_id, const v1::JobResult& result, int rank) {
  const v1::Measurement& measurement = result.measurement();
  if (measurement.outcome() == v1::GANG_BROKEN) {
    OnHandedBack(worker_id, result, /*handed_back=*/false);
    return;
  }
  if (rank > 0 && measurement.outcome() == v1::OK) {
    // Rank 0's result is the job's (the slowest rank's steps): this rank's
    // attempt stays held until it is stored, and is not stored itself.
    std::shared_ptr<WorkerSession> session;
    {
      absl::MutexLock lock(&mu_);
      auto it = links_.find(worker_id);
      if (it != links_.end()) session = it->second.session;
    }
    if (session) session->Send(AckMessage(result.job_id(), result.attempt_id()));
    return;
  }
  v1::Measurement stored = measurement;
  if (rank > 0) {
    // A configuration that fails on one rank fails as a job: stored, named.
    stored.set_error(absl::StrCat("rank ", rank, " (worker ", worker_id, "): ", stored.error()));
  }
  if (absl::Status valid = ValidateMeasurement(stored); !valid.ok()) {
    spdlog::warn("worker {}: result of job {} (attempt {}) refused: {}", worker_id, result.job_id(),
                 result.attempt_id(), std::string(valid.message()));
    stored = RefusedMeasurement(stored, valid);
  }
  StoreGangResult(worker_id, result, std::move(stored));
}

void Scheduler::StoreGangResult(const std::string& worker_id, const v1::JobResult& result,
                                v1::Measurement measurement) {
  const int64_t job_id = result.job_id();
  const int64_t attempt_id = result.attempt_id();
  int64_t platform_id = 0;
  std::vector<LeaseTable::GangMember> siblings;
  {
    absl::MutexLock lock(&mu_);
    leases_.HoldForStore(worker_id, attempt_id);
    WorkerLink& link = links_[worker_id];
    platform_id = link.platform_id;
    link.roofs.Fill(&measurement);  // utilization; a gang's steps do not raise roofs
    siblings = leases_.GangSiblings(attempt_id);
  }
  spdlog::info("worker {} finished gang job {} (attempt {}): {}", worker_id, job_id, attempt_id,
               v1::Outcome_Name(measurement.outcome()));
  results_.Store(job_id, attempt_id, worker_id, platform_id, measurement, clock_->NowUnixMs(),
                 [this, worker_id, job_id, attempt_id,
                  siblings](const absl::StatusOr<db::StoreOutcome>& stored) {
                   std::vector<std::string> freed;
                   if (stored.ok()) {
                     absl::MutexLock lock(&mu_);
                     freed = leases_.ForgetGangSiblings(attempt_id);
                   }
                   SettleStored(worker_id, job_id, attempt_id, stored);
                   // Ranks still in a collective with a rank that ended
                   // stop now rather than at their collective timeout.
                   if (stored.ok()) CancelMembers(siblings);
                   freed.push_back(worker_id);
                   for (const std::string& worker : freed) OfferNext(worker, false);
                 });
}

std::vector<int64_t> Scheduler::ReleaseGangSiblings(int64_t attempt_id) {
  std::vector<LeaseTable::GangMember> cancelled;
  std::vector<int64_t> releasing;
  {
    absl::MutexLock lock(&mu_);
    for (const LeaseTable::GangMember& sibling : leases_.GangSiblings(attempt_id)) {
      if (!leases_.BeginRelease(sibling.attempt)) continue;  // already being released
      releasing.push_back(sibling.attempt);
      if (!sibling.worker_id.empty()) cancelled.push_back(sibling);
    }
  }
  CancelMembers(cancelled);
  return releasing;
}

void Scheduler::EndReleases(const std::vector<int64_t>& attempts) {
  absl::MutexLock lock(&mu_);
  for (int64_t attempt : attempts) leases_.EndRelease(attempt);
}

void Scheduler::CancelMembers(const std::vector<LeaseTable::GangMember>& members) {
  for (const LeaseTable::GangMember& member : members) {
    std::shared_ptr<WorkerSession> session;
    {
      absl::MutexLock lock(&mu_);
      auto it = links_.find(member.worker_id);
      if (it != links_.end()) session = it->second.session;
    }
    if (!session) continue;
    v1::CoordinatorMessage message;
    message.mutable_cancel()->set_job_id(member.job_id);
    message.mutable_cancel()->set_attempt_id(member.attempt);
    session->Send(message);
  }
}

}  // namespace paradnn::server
