// Data-parallel training of one job (docs/backends.md, "Data
// parallelism"): params.devices replicas in this process, one per device,
// each with its own model, synthetic batch and optimizer, on its own thread
// (no Python here, so threads need no processes to run in parallel); and,
// in a gang (gang_rendezvous.h), params.hosts such processes. Every replica
// is one rank of one c10d process group: NCCL on CUDA devices, Gloo on the
// CPU. As DistributedDataParallel does, rank 0's initial weights are
// broadcast to every rank, and each step's gradients are averaged over the
// ranks in buckets (gradient_buckets.h), all-reduced during backward
// (params.overlap 1) or after it (0), before the optimizer update.
//
// Replica 0 is the caller's: its steps are the ones the timing loop times
// (each ends when every rank's gradients have arrived); the other replicas
// of this process follow it step for step on their threads.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_DATA_PARALLEL_H_
#define PARADNN_WORKER_RUNNER_DATA_PARALLEL_H_

#include <torch/torch.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// What averaging one step's gradients took on one replica.
struct GradientSyncTimes {
  double exposed_s = 0;    // the wait after backward (communication it did not hide)
  double allreduce_s = 0;  // first all-reduce launch -> last completion
  int64_t allreduce_bytes = 0;
};

// One replica's side of the gradient averaging. Throws what the collectives
// throw (a peer died, a timeout).
class ReplicaSync {
 public:
  virtual ~ReplicaSync() = default;
  // Rank 0's values into this replica's parameters, in place.
  virtual void BroadcastFromFirst(const std::vector<torch::Tensor>& parameters) = 0;
  // After backward: every gradient the mean over the ranks.
  virtual GradientSyncTimes AverageGradients(const std::vector<torch::Tensor>& parameters) = 0;
  virtual int buckets() const = 0;
  virtual int64_t bucket_cap_bytes() const = 0;
};

// What this runner's LibTorch can join replicas with on `device_type`:
// "nccl" (CUDA, built with NCCL), "gloo" (CPU, built with Gloo), or
// Unimplemented saying what the build lacks.
absl::StatusOr<std::string> CollectiveBackendFor(torch::DeviceType device_type);

// An in-process store (c10d::HashStore) for replicas that are threads of
// one process, for JoinProcessGroup through ReplicaStore.
std::shared_ptr<void> MakeReplicaStore();

// Rank `rank` of `world` in a process group of `backend` over `store` (a
// gang's, gang_rendezvous.h, or MakeReplicaStore's): Gloo listens on
// `gloo_address`, this host's address on the route to its peers. Blocks
// until every rank has joined (Gloo) or defers that to the first collective
// (NCCL); collectives that wait longer than `timeout` throw.
c10::intrusive_ptr<c10d::ProcessGroup> JoinProcessGroup(const std::string& backend,
                                                        c10::intrusive_ptr<c10d::Store> store,
                                                        int rank, int world,
                                                        std::chrono::milliseconds timeout,
                                                        const std::string& gloo_address);
// The store inside MakeReplicaStore's handle.
c10::intrusive_ptr<c10d::Store> ReplicaStore(const std::shared_ptr<void>& handle);

// Gradient averaging in buckets over `group` (gradient_buckets.h), the
// all-reduces launched during backward when `overlap`.
std::unique_ptr<ReplicaSync> MakeBucketSync(c10::intrusive_ptr<c10d::ProcessGroup> group,
                                            const std::vector<torch::Tensor>& parameters,
                                            bool overlap);

// The replicas of one job. Not thread-safe: one caller drives replica 0.
class ReplicaGroup {
 public:
  // Builds replica r's trainer (r = 0 first, then the others, on the
  // calling thread: model building draws from LibTorch's global generator).
  using MakeTrainer = std::function<std::unique_ptr<Trainer>(int rank, const torch::Device&)>;

  // Joins local replica `local_rank` (its trainer built) to the ranks:
  // called on that replica's thread.
  using JoinSync = std::function<std::unique_ptr<ReplicaSync>(int local_rank, Trainer& trainer)>;

  // One replica per entry of `devices` (at least 1), each joined by `join`.
  // Throws what MakeTrainer or joining throws; a replica that fails to join
  // makes replica 0's join throw too (after the group's timeout at most).
  ReplicaGroup(const std::vector<torch::Device>& devices, const MakeTrainer& make,
               const JoinSync& join);
  // Stops the followers after their last released step and joins them.
  ~ReplicaGroup();
  ReplicaGroup(const ReplicaGroup&) = delete;
  ReplicaGroup& operator=(const ReplicaGroup&) = delete;

  Trainer& leader() { return *trainers_.front(); }
  // Replica `rank`'s trainer (tests compare replicas' weights).
  Trainer& replica(int rank) { return *trainers_.at(static_cast<size_t>(rank)); }
  int size() const { return static_cast<int>(trainers_.size()); }

  // One training step of every replica; returns replica 0's loss. Throws
  // what replica 0 throws; after a follower failed, throws that failure
  // (the first) instead, so the job's outcome names the real cause.
  torch::Tensor Step() ABSL_LOCKS_EXCLUDED(mu_);
  // Returns once every follower has finished the steps released so far (or
  // one has failed): their weights are then final for those steps.
  void WaitForFollowers() ABSL_LOCKS_EXCLUDED(mu_);

  // Replica 0's gradient averaging: its sum over the steps so far, and its
  // buckets.
  const GradientSyncTimes& leader_sync_totals() const { return leader_sync_totals_; }
  int buckets() const { return leader_sync_->buckets(); }
  int64_t bucket_cap_bytes() const { return leader_sync_->bucket_cap_bytes(); }

  // Where each replica runs, "cuda:0, cuda:1".
  std::string DeviceList() const;
  // Which follower failed ("replica 2 on cuda:2"); "" while none has.
  std::string FailureSite() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void StartFollower(int rank, const JoinSync& join) ABSL_LOCKS_EXCLUDED(mu_);
  void JoinLeader(const JoinSync& join) ABSL_LOCKS_EXCLUDED(mu_);
  void Follow(int rank) ABSL_LOCKS_EXCLUDED(mu_);
  void RethrowFollowerFailure() ABSL_LOCKS_EXCLUDED(mu_);

  std::vector<torch::Device> devices_;
  std::vector<std::unique_ptr<Trainer>> trainers_;
  std::unique_ptr<ReplicaSync> leader_sync_;
  GradientSyncTimes leader_sync_totals_;  // only the caller's thread touches it
  std::vector<std::thread> followers_;

  absl::Mutex mu_;
  absl::CondVar released_cv_;  // a step released, a follower ready or failed, or stopping
  int64_t released_steps_ ABSL_GUARDED_BY(mu_) = 0;  // steps replica 0 has started
  int ready_followers_ ABSL_GUARDED_BY(mu_) = 0;     // joined and holding replica 0's weights
  absl::CondVar finished_cv_;                        // a follower finished a step
  int64_t finished_follower_steps_ ABSL_GUARDED_BY(mu_) = 0;  // over every follower
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The first follower's exception, and where it was thrown.
  std::exception_ptr follower_failure_ ABSL_GUARDED_BY(mu_);
  std::string follower_failure_where_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_DATA_PARALLEL_H_
