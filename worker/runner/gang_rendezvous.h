// One rank's entry into a data-parallel gang (RunnerJob.gang, GangRole):
// params.hosts runner processes, one per worker, that train one job as a
// single c10d process group (docs/backends.md, "Data parallelism").
// Host rank 0's runner serves a c10d TCPStore at the rendezvous address its
// worker advertised; every rank connects, shows the gang's tag and secret,
// and waits for rank 0's verdict before any process group is formed. The
// same store then carries the gang's control traffic: rank 0's decisions
// (when warm-up and timing stop) and, at the end, every rank's step times.
//
// The secret is no security: the store is plain TCP, readable and writable
// by anyone who connects. It stops a stale rank of an earlier attempt, or
// one sent to the wrong rendezvous, from joining; whatever can reach the
// port could also read it.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_GANG_RENDEZVOUS_H_
#define PARADNN_WORKER_RUNNER_GANG_RENDEZVOUS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/status/status.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// The gang broke: a peer died, timed out or was refused, or this rank was
// refused (RunJob's Outcome GANG_BROKEN). what() names the ranks involved.
class GangBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A peer's own failure (an OOM, a model error), which broke this rank's
// collectives: the job's outcome, as the peer classified it. what() names
// the peer: "rank 1 (worker w1) failed first: ...".
class GangPeerFailed : public std::runtime_error {
 public:
  GangPeerFailed(v1::Outcome outcome, const std::string& what)
      : std::runtime_error(what), outcome_(outcome) {}
  v1::Outcome outcome() const { return outcome_; }

 private:
  v1::Outcome outcome_;
};

// OK when `gang` describes a rank of a job with `hosts` processes of
// `devices_per_host` replicas (params.hosts, params.devices); else
// InvalidArgument naming the GangRole field and what it allows.
absl::Status ValidateGangRole(const v1::GangRole& gang, int64_t hosts, int64_t devices_per_host);

// "rank 1 (worker w1)": host rank `host_rank` as errors name it.
std::string GangRankName(const v1::GangRole& gang, int host_rank);
// "10.0.0.5:29500"
std::string RendezvousAddress(const v1::GangRole& gang);

// This rank, admitted to its gang.
struct GangMembership {
  v1::GangRole role;
  // The rendezvous store under the gang's tag: what process groups and
  // GangControl use.
  c10::intrusive_ptr<c10d::Store> store;
  // This host's address on the route to rank 0: what Gloo listens on.
  std::string local_address;
};

// Serves (rank 0) or joins the rendezvous and checks every rank's tag and
// secret; blocks until rank 0 has admitted every rank (rank 0) or this one
// (the others), collective_timeout_s at most for each wait. Throws
// GangBroken naming the ranks, their workers and the address.
GangMembership JoinGang(const v1::GangRole& role);

// The gang's control traffic over its store: rank 0 decides, the others
// follow. Each call is one store round trip to rank 0 for the others and a
// store write for rank 0; every rank must make the same calls in the same
// order. Not thread-safe.
class GangControl {
 public:
  explicit GangControl(GangMembership membership);

  // Rank 0's `mine`, on every rank (the others wait for it, up to
  // collective_timeout_s). Throws GangBroken.
  int64_t FollowRankZero(int64_t mine);
  // Every rank's `mine`, by host rank, on rank 0; empty on the others, which
  // only send. Throws GangBroken naming a rank that sent nothing in time.
  std::vector<std::string> GatherAtRankZero(const std::string& mine);

  // A rank that fails on its own (an OOM, a model error) publishes it here
  // before its collectives close, so that the peers whose collectives then
  // break report that failure, not GANG_BROKEN: whichever rank's result
  // reaches the coordinator first settles the job. Best effort: a store
  // that is gone is ignored.
  void PublishFailure(v1::Outcome outcome, const std::string& message);
  // The first peer's published failure (by host rank), acknowledged to it;
  // nullopt when none was published or the store is gone.
  std::optional<GangPeerFailed> PeerFailure();
  // Rank 0 after PublishFailure (the store lives in its process): waits up
  // to `timeout` until every other rank has acknowledged the failure.
  void AwaitFailureRead(std::chrono::milliseconds timeout);

  const v1::GangRole& role() const { return membership_.role; }
  const GangMembership& membership() const { return membership_; }

 private:
  GangMembership membership_;
  int64_t decisions_ = 0;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_GANG_RENDEZVOUS_H_
