// DDP-style gradient buckets: a replica's gradients averaged over a c10d
// process group in a few large all-reduces instead of one per parameter,
// launched while backward still runs (overlap) or all after it (the
// non-overlapped cost, params.overlap 0). Buckets follow the reverse of the
// parameter order, the order backward produces gradients in; the first is
// small (first_bucket_cap_bytes) so that communication starts early, the
// others hold up to bucket_cap_bytes (a bucket closes at the first
// parameter that reaches its cap, so one parameter larger than the cap is a
// bucket of its own). One dtype and device per bucket. Every rank must
// build its GradientBuckets from parameters of the same shapes, dtypes and
// order, and run the same steps: collectives are matched by their order.
//
// Per step: the caller runs forward and loss.backward(), then
// FinishBackward(), then the optimizer. A parameter whose gradient backward
// did not produce (unused in this step's graph) takes part with zeros, as
// DDP's find_unused_parameters does, so the step never hangs on it.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_GRADIENT_BUCKETS_H_
#define PARADNN_WORKER_RUNNER_GRADIENT_BUCKETS_H_

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paradnn::runner {

// One step's communication, seconds and bytes.
struct StepCommunication {
  // FinishBackward's wait: the communication backward did not hide, with
  // what launching the buckets backward left costs (copying gradients in).
  double exposed_s = 0;
  // First bucket launch -> last bucket completion (the collective's own
  // completion, seen by c10d's future callback, not our wait). On CUDA the
  // launch is the host's, which may run ahead of the device.
  double allreduce_s = 0;
  // Bytes the all-reduces reduced this step (bfloat16 gradients travel as
  // float32 over Gloo, which cannot add bfloat16).
  int64_t allreduce_bytes = 0;
  // On a CUDA device, FinishBackward's wait for backward's own kernels
  // before the exposed clock starts: compute, not communication. 0 on CPU.
  double backward_tail_s = 0;
  // Parameters whose gradient this step's backward did not produce (they
  // took part with zeros).
  int unused_parameters = 0;
};

// Not thread-safe beyond what DDP's hooks need: one caller steps it, and
// the hooks it registers run on backward's threads.
class GradientBuckets {
 public:
  // `parameters`: the replica's trainable parameters (leaves that require
  // grad, dense), in the same order on every rank. `group`: a
  // c10d::ProcessGroup every rank joined (world = group->getSize()), Gloo or
  // NCCL; its timeout bounds every wait here. `overlap`: launch each
  // bucket's all-reduce as soon as all its gradients are ready during
  // backward (DDP), else launch them all in FinishBackward. Throws
  // std::invalid_argument naming the bad argument.
  GradientBuckets(std::vector<torch::Tensor> parameters,
                  c10::intrusive_ptr<c10d::ProcessGroup> group, bool overlap,
                  int64_t bucket_cap_bytes = 25 << 20, int64_t first_bucket_cap_bytes = 1 << 20);
  // Removes the hooks. All-reduces still in flight keep their own buffers.
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Call after loss.backward() returned: launches what is not launched yet,
  // waits for every bucket, and leaves each parameter's .grad() the average
  // over the ranks (defined even for a parameter this rank did not use).
  // As DDP's gradient_as_bucket_view, .grad() is then a view of its bucket
  // (strided like the parameter) where the dtypes agree: no copy back. It
  // holds the average until the next backward; gradients kept (not reset)
  // into the next backward accumulate there, as they would alone.
  // Throws c10d's error (a peer died, a timeout) as std::runtime_error with
  // what c10d said; the next step starts clean either way.
  StepCommunication FinishBackward() ABSL_LOCKS_EXCLUDED(mu_);

  int buckets() const { return static_cast<int>(buckets_.size()); }
  int64_t bucket_cap_bytes() const { return bucket_cap_bytes_; }
  int64_t first_bucket_cap_bytes() const { return first_bucket_cap_bytes_; }
  bool overlap() const { return overlap_; }
  // Indices into `parameters` of each bucket's parameters, in launch order.
  std::vector<std::vector<size_t>> BucketParameters() const;
  // Buckets launched so far in this step (between backward and
  // FinishBackward: how many backward launched).
  int LaunchedBuckets() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Bucket {
    std::vector<size_t> parameters;  // indices into parameters_, in backward's order
    torch::Tensor buffer;            // flat, ReductionDtype, the bucket's device
    int64_t bytes = 0;               // the buffer's size
  };
  // Completion instants (steady_clock nanoseconds, 0 = not yet) written by
  // c10d's callbacks on its own threads: shared, so a callback after our
  // destruction writes into memory still alive.
  using CompletionTimes = std::vector<std::atomic<int64_t>>;

  void AssignBuckets(int64_t first_cap, int64_t cap);
  // The dtype a bucket of `dtype` gradients is reduced in.
  torch::ScalarType ReductionDtype(torch::ScalarType dtype) const;
  void InstallHooks();
  void OnGradientReady(size_t parameter) ABSL_LOCKS_EXCLUDED(mu_);
  // Copies parameter `index`'s gradient / world (zeros when backward made
  // none) into its slot.
  void CopyIntoBucket(size_t index, bool produced) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LaunchLocked(size_t bucket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Launches buckets in order while the next one is complete: every rank
  // then issues the same collectives in the same order.
  void LaunchReadyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Points each gradient at its averaged slot (copies where the slot is
  // wider than the gradient).
  void CopyAveragesBack() ABSL_LOCKS_EXCLUDED(mu_);
  void ResetStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<torch::Tensor> parameters_;
  const c10::intrusive_ptr<c10d::ProcessGroup> group_;
  const bool overlap_;
  const int64_t bucket_cap_bytes_;
  const int64_t first_bucket_cap_bytes_;
  const int world_;

  // Set in the constructor, before any hook exists, then only read.
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter -> its bucket
  // Parameter -> its place in its bucket's buffer, shaped and strided like
  // it; after FinishBackward, its .grad() where the dtypes agree.
  std::vector<torch::Tensor> slots_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;  // one per accumulator, to remove the hook
  std::shared_ptr<CompletionTimes> completed_at_;

  // This step's state: hooks run on backward's threads.
  absl::Mutex mu_;
  std::vector<bool> produced_ ABSL_GUARDED_BY(mu_);  // backward made its gradient
  std::vector<bool> copied_ ABSL_GUARDED_BY(mu_);    // in its bucket's buffer
  std::vector<int> pending_ ABSL_GUARDED_BY(mu_);    // per bucket: gradients still to come
  std::vector<c10::intrusive_ptr<c10d::Work>> works_ ABSL_GUARDED_BY(mu_);  // per bucket
  size_t next_launch_ ABSL_GUARDED_BY(mu_) = 0;
  std::chrono::steady_clock::time_point first_launch_ ABSL_GUARDED_BY(mu_);
};

// model::AllReduceBusFactor (nccl-tests' 2 (ranks - 1) / ranks; 0 for one
// rank) for a world the runner joined. Throws std::invalid_argument for
// ranks < 1, which no world has.
double AllReduceBusFactor(int ranks);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_GRADIENT_BUCKETS_H_
