// Data-parallel training of one job over several devices of one host
// (params.devices; docs/backends.md, "Data parallelism"). One replica per
// device, each with its own model, synthetic batch and optimizer, on its own
// thread of this process (no Python here, so threads need no processes to
// run in parallel), joined by a c10d process group: NCCL on CUDA devices,
// Gloo on the CPU (which CI runs this code on; a job's CPU replicas are
// refused, see job_devices.cc). As DistributedDataParallel does, replica 0's
// initial weights are broadcast to every replica, and each step's gradients
// are summed over the replicas and divided by their count after backward,
// before the optimizer update. Unlike DDP the all-reduces start after
// backward has finished (one collective per parameter, no buckets, no
// overlap with backward): the time is what plain synchronous data
// parallelism costs, an upper bound on DDP's.
//
// Replica 0 is the caller's: its steps are the ones the timing loop times
// (each ends when every replica's gradients have arrived); the other
// replicas follow it step for step on their threads.
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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// The collective operations one replica takes part in.
class ReplicaCollectives {
 public:
  virtual ~ReplicaCollectives() = default;
  // Sums every tensor over the replicas, in place.
  virtual void AllReduceSum(const std::vector<torch::Tensor>& tensors) = 0;
  // Replica 0's values into every replica's tensors, in place.
  virtual void BroadcastFromFirst(const std::vector<torch::Tensor>& tensors) = 0;
};

// What this runner's LibTorch can join replicas with on `device_type`:
// "nccl" (CUDA, built with NCCL), "gloo" (CPU, built with Gloo), or
// Unimplemented saying what the build lacks.
absl::StatusOr<std::string> CollectiveBackendFor(torch::DeviceType device_type);

// Replica `rank` of `world`'s side of a process group over the in-process
// `store` shared by every replica (c10d::HashStore). Blocks until every
// replica has joined (Gloo) or defers that to the first collective (NCCL).
// Collectives that wait longer than `timeout` throw.
std::unique_ptr<ReplicaCollectives> JoinReplicaGroup(const std::string& backend,
                                                     const std::shared_ptr<void>& store, int rank,
                                                     int world, std::chrono::milliseconds timeout);
// A store for JoinReplicaGroup.
std::shared_ptr<void> MakeReplicaStore();

// Gradient averaging over `collectives`: every defined gradient all-reduced,
// then divided by `world`. For Trainer::set_gradient_hook.
void AverageGradients(ReplicaCollectives& collectives, int world,
                      const std::vector<torch::Tensor>& parameters);

// The replicas of one job. Not thread-safe: one caller drives replica 0.
class ReplicaGroup {
 public:
  // Builds replica r's trainer (r = 0 first, then the others, on the
  // calling thread: model building draws from LibTorch's global generator).
  using MakeTrainer = std::function<std::unique_ptr<Trainer>(int rank, const torch::Device&)>;

  // One replica per entry of `devices` (at least 2), joined with `backend`
  // (CollectiveBackendFor's). Throws what MakeTrainer or joining throws;
  // a replica that fails to join makes replica 0's join throw too (after
  // `timeout` at most).
  ReplicaGroup(const std::vector<torch::Device>& devices, const std::string& backend,
               const MakeTrainer& make, std::chrono::milliseconds timeout);
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

  // Where each replica runs, "cuda:0, cuda:1".
  std::string DeviceList() const;
  // Which follower failed ("replica 2 on cuda:2"); "" while none has.
  std::string FailureSite() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Follow(int rank) ABSL_LOCKS_EXCLUDED(mu_);
  void RethrowFollowerFailure() ABSL_LOCKS_EXCLUDED(mu_);

  std::vector<torch::Device> devices_;
  std::vector<std::unique_ptr<Trainer>> trainers_;
  std::unique_ptr<ReplicaCollectives> leader_collectives_;
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
