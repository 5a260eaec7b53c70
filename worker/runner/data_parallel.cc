#include "worker/runner/data_parallel.h"

// A LibTorch install without c10d's headers still builds the runner: it
// then refuses replicas (CollectiveBackendFor).
#if __has_include(<torch/csrc/distributed/c10d/HashStore.hpp>)
#define PARADNN_HAVE_C10D 1
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#else
#undef PARADNN_WITH_GLOO
#undef PARADNN_WITH_NCCL
#endif
#ifdef PARADNN_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef PARADNN_WITH_NCCL
#include <c10/cuda/CUDAGuard.h>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <spdlog/spdlog.h>
#include <torch/version.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"
#include "worker/runner/gloo_device_nice.h"
#include "worker/runner/gradient_buckets.h"

namespace paradnn::runner {
namespace {

#ifdef PARADNN_HAVE_C10D
using StorePtr = c10::intrusive_ptr<c10d::Store>;
#endif

// Rank 0's values into every rank's `tensors`, in place, one broadcast each.
void BroadcastRankZero(const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                       const std::vector<torch::Tensor>& tensors) {
  for (const torch::Tensor& t : tensors) {
    std::vector<at::Tensor> one = {t};
    group->broadcast(one)->wait();  // BroadcastOptions: root rank 0
  }
}

// DDP-style buckets (gradient_buckets.h).
class BucketSync final : public ReplicaSync {
 public:
  BucketSync(c10::intrusive_ptr<c10d::ProcessGroup> group,
             const std::vector<torch::Tensor>& parameters, bool overlap)
      : group_(group), buckets_(parameters, std::move(group), overlap) {}

  void BroadcastFromFirst(const std::vector<torch::Tensor>& parameters) override {
    BroadcastRankZero(group_, parameters);
  }
  GradientSyncTimes AverageGradients(const std::vector<torch::Tensor>&) override {
    const StepCommunication step = buckets_.FinishBackward();
    GradientSyncTimes times;
    times.exposed_s = step.exposed_s;
    times.allreduce_s = step.allreduce_s;
    times.allreduce_bytes = step.allreduce_bytes;
    return times;
  }
  int buckets() const override { return buckets_.buckets(); }
  int64_t bucket_cap_bytes() const override { return buckets_.bucket_cap_bytes(); }

 private:
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  GradientBuckets buckets_;
};

}  // namespace

absl::StatusOr<std::string> CollectiveBackendFor(torch::DeviceType device_type) {
  if (device_type == torch::kCUDA) {
#ifdef PARADNN_WITH_NCCL
    return std::string("nccl");
#else
    return absl::UnimplementedError(absl::StrCat(
        "this paradnn-runner was built without NCCL (LibTorch ", TORCH_VERSION,
        "; no c10_cuda library or no nccl.h found at configure time), so it cannot join "
        "replicas on CUDA devices: configure with -DPARADNN_NCCL_INCLUDE_DIR=DIR "
        "(docs/backends.md)"));
#endif
  }
  if (device_type == torch::kCPU) {
#ifdef PARADNN_WITH_GLOO
    return std::string("gloo");
#else
    return absl::UnimplementedError(
        "this paradnn-runner was built without Gloo's headers (Debian: libgloo-dev), so it "
        "cannot join CPU replicas");
#endif
  }
  return absl::UnimplementedError("data-parallel replicas run on cuda (or, for tests, cpu)");
}

std::shared_ptr<void> MakeReplicaStore() {
#ifdef PARADNN_HAVE_C10D
  return std::make_shared<StorePtr>(c10::make_intrusive<c10d::HashStore>());
#else
  return nullptr;
#endif
}

c10::intrusive_ptr<c10d::Store> ReplicaStore(const std::shared_ptr<void>& handle) {
#ifdef PARADNN_HAVE_C10D
  return *static_cast<const StorePtr*>(handle.get());
#else
  (void)handle;
  return {};
#endif
}

c10::intrusive_ptr<c10d::ProcessGroup> JoinProcessGroup(const std::string& backend,
                                                        c10::intrusive_ptr<c10d::Store> store,
                                                        int rank, int world,
                                                        std::chrono::milliseconds timeout,
                                                        const std::string& gloo_address) {
#ifdef PARADNN_WITH_GLOO
  if (backend == "gloo") {
    auto options = c10d::ProcessGroupGloo::Options::create();
    options->timeout = timeout;
    const std::vector<int> threads_before = common::ThreadIds();
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(gloo_address));
    // The device starts its event loop thread; the group's workers come next.
    if (const std::string reniced = ReniceNewThreads(threads_before); !reniced.empty()) {
      spdlog::info("{}", reniced);
    }
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
  }
#endif
#ifdef PARADNN_WITH_NCCL
  if (backend == "nccl") {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
  }
#endif
  (void)store;
  (void)rank;
  (void)world;
  (void)timeout;
  (void)gloo_address;
  throw std::invalid_argument("replica group backend '" + backend +
                              "' is not built into this paradnn-runner");
}

std::unique_ptr<ReplicaSync> MakeBucketSync(c10::intrusive_ptr<c10d::ProcessGroup> group,
                                            const std::vector<torch::Tensor>& parameters,
                                            bool overlap) {
  return std::make_unique<BucketSync>(std::move(group), parameters, overlap);
}

ReplicaGroup::ReplicaGroup(const std::vector<torch::Device>& devices, const MakeTrainer& make,
                           const JoinSync& join)
    : devices_(devices) {
  if (devices_.empty()) throw std::invalid_argument("a replica group needs a device");
  for (size_t r = 0; r < devices_.size(); ++r) {
    trainers_.push_back(make(static_cast<int>(r), devices_[r]));
  }
  for (int rank = 1; rank < size(); ++rank) StartFollower(rank, join);
  JoinLeader(join);
}

void ReplicaGroup::StartFollower(int rank, const JoinSync& join) {
  followers_.emplace_back([this, rank, join] {
    // Outlives the failure's record: closing the group makes replica 0's
    // collective fail at once, and by then the cause must be there to find.
    std::unique_ptr<ReplicaSync> sync;
    try {
#ifdef PARADNN_WITH_NCCL
      std::optional<c10::cuda::CUDAGuard> on_device;
      if (devices_[rank].is_cuda()) on_device.emplace(devices_[rank]);
#endif
      Trainer& trainer = *trainers_[rank];
      sync = join(rank, trainer);
      sync->BroadcastFromFirst(trainer.parameters());
      {
        absl::MutexLock lock(&mu_);
        ++ready_followers_;
      }
      released_cv_.SignalAll();
      trainer.set_gradient_hook(
          [&sync](const std::vector<torch::Tensor>& p) { (void)sync->AverageGradients(p); });
      Follow(rank);
      trainer.set_gradient_hook(nullptr);
    } catch (...) {
      trainers_[rank]->set_gradient_hook(nullptr);
      absl::MutexLock lock(&mu_);
      if (!follower_failure_) {
        follower_failure_ = std::current_exception();
        follower_failure_where_ = absl::StrCat("replica ", rank, " on ", devices_[rank].str());
      }
      released_cv_.SignalAll();
    }
  });
}

void ReplicaGroup::JoinLeader(const JoinSync& join) {
  try {
    leader_sync_ = join(0, leader());
    leader_sync_->BroadcastFromFirst(leader().parameters());
    // Every replica holds rank 0's weights before the first step.
    {
      absl::MutexLock lock(&mu_);
      while (ready_followers_ != size() - 1 && !follower_failure_) released_cv_.Wait(&mu_);
    }
    RethrowFollowerFailure();
  } catch (...) {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    released_cv_.SignalAll();
    for (std::thread& t : followers_) t.join();
    RethrowFollowerFailure();
    throw;
  }
  leader().set_gradient_hook([this](const std::vector<torch::Tensor>& p) {
    const GradientSyncTimes step = leader_sync_->AverageGradients(p);
    leader_sync_totals_.exposed_s += step.exposed_s;
    leader_sync_totals_.allreduce_s += step.allreduce_s;
    leader_sync_totals_.allreduce_bytes += step.allreduce_bytes;
  });
}

ReplicaGroup::~ReplicaGroup() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  released_cv_.SignalAll();
  for (std::thread& t : followers_) t.join();
  leader().set_gradient_hook(nullptr);
}

void ReplicaGroup::Follow(int rank) {
  Trainer& trainer = *trainers_[rank];
  int64_t done = 0;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && released_steps_ <= done) released_cv_.Wait(&mu_);
      if (released_steps_ == done) return;  // stopping, every released step taken
    }
    (void)trainer.Step();
    ++done;
    {
      absl::MutexLock lock(&mu_);
      ++finished_follower_steps_;
    }
    finished_cv_.SignalAll();
  }
}

void ReplicaGroup::WaitForFollowers() {
  absl::MutexLock lock(&mu_);
  while (finished_follower_steps_ != released_steps_ * (size() - 1) && !follower_failure_) {
    finished_cv_.Wait(&mu_);
  }
}

void ReplicaGroup::RethrowFollowerFailure() {
  std::exception_ptr failure;
  {
    absl::MutexLock lock(&mu_);
    failure = follower_failure_;
  }
  if (failure) std::rethrow_exception(failure);
}

torch::Tensor ReplicaGroup::Step() {
  RethrowFollowerFailure();
  {
    absl::MutexLock lock(&mu_);
    ++released_steps_;
  }
  released_cv_.SignalAll();
  try {
    return leader().Step();
  } catch (...) {
    RethrowFollowerFailure();
    throw;
  }
}

std::string ReplicaGroup::DeviceList() const {
  std::vector<std::string> names;
  names.reserve(devices_.size());
  for (const torch::Device& d : devices_) names.push_back(d.str());
  return absl::StrJoin(names, ", ");
}

std::string ReplicaGroup::FailureSite() {
  absl::MutexLock lock(&mu_);
  return follower_failure_where_;
}

}  // namespace paradnn::runner
