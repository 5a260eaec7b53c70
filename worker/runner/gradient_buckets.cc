#include "worker/runner/gradient_buckets.h"

// Why not c10d::Reducer, DDP's own C++ engine? LibTorch 1.13's
// libtorch_cpu.so does export it and it runs without Python, but it cannot
// give what issue 39 measures: (1) it has no "after backward" mode (its
// delay_all_reduce is the static graph's first iteration only), so
// overlap 0 would need a second implementation anyway; (2) its Timer is a
// private member, sampled once every 100 iterations after the 10th, read
// only as averages through DDP's Logger; (3) the end of communication it
// records is taken in finalize_backward after waiting for the buckets, not
// when the collective completed, so it cannot split exposed from hidden
// time; and (4) it reports no per-step bytes. Its design is what this file follows:
// reverse-order buckets with a small first one, readiness from post hooks
// on each parameter's gradient accumulator, in-order launches, zeros for
// unused parameters.

#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/families/allreduce.h"

namespace paradnn::runner {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Calls `on_ready` after the accumulator has stored the gradient: the
// gradient in .grad() is then this backward's final one.
class GradientReadyHook final : public torch::autograd::FunctionPostHook {
 public:
  explicit GradientReadyHook(std::function<void()> on_ready) : on_ready_(std::move(on_ready)) {}
  torch::autograd::variable_list operator()(
      const torch::autograd::variable_list& outputs,
      const torch::autograd::variable_list& /*inputs*/) override {
    on_ready_();
    return outputs;
  }

 private:
  std::function<void()> on_ready_;
};

// Blocks until the kernels already queued on `device`'s current stream
// have run; nothing to wait for on the CPU.
void SynchronizeCurrentStream(const torch::Device& device) {
  if (device.is_cpu()) return;
  c10::impl::VirtualGuardImpl guard(device.type());
  guard.getStream(device).synchronize();
}

}  // namespace

GradientBuckets::GradientBuckets(std::vector<torch::Tensor> parameters,
                                 c10::intrusive_ptr<c10d::ProcessGroup> group, bool overlap,
                                 int64_t bucket_cap_bytes, int64_t first_bucket_cap_bytes)
    : parameters_(std::move(parameters)),
      group_(std::move(group)),
      overlap_(overlap),
      bucket_cap_bytes_(bucket_cap_bytes),
      first_bucket_cap_bytes_(first_bucket_cap_bytes),
      world_(group_ ? group_->getSize() : 0) {
  if (!group_) throw std::invalid_argument("GradientBuckets: group is null");
  if (bucket_cap_bytes <= 0 || first_bucket_cap_bytes <= 0) {
    throw std::invalid_argument(absl::StrCat(
        "GradientBuckets: bucket_cap_bytes and first_bucket_cap_bytes must be > 0 (got ",
        bucket_cap_bytes, " and ", first_bucket_cap_bytes, ")"));
  }
  std::unordered_map<const void*, size_t> seen;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const torch::Tensor& p = parameters_[i];
    if (!p.defined() || !p.requires_grad() || !p.is_leaf() || p.layout() != torch::kStrided) {
      throw std::invalid_argument(absl::StrCat(
          "GradientBuckets: parameters[", i,
          "] must be a defined, dense leaf tensor that requires grad (a trainable parameter)"));
    }
    const auto [earlier, fresh] = seen.emplace(p.unsafeGetTensorImpl(), i);
    if (!fresh) {
      throw std::invalid_argument(absl::StrCat("GradientBuckets: parameters[", i,
                                               "] is parameters[", earlier->second, "] again"));
    }
  }
  AssignBuckets(first_bucket_cap_bytes, bucket_cap_bytes);
  completed_at_ = std::make_shared<CompletionTimes>(buckets_.size());
  {
    absl::MutexLock lock(&mu_);
    ResetStepLocked();
  }
  InstallHooks();
}

GradientBuckets::~GradientBuckets() {
  for (size_t i = 0; i < accumulators_.size(); ++i) {
    accumulators_[i]->del_post_hook(hook_keys_[i]);
  }
}

void GradientBuckets::AssignBuckets(int64_t first_cap, int64_t cap) {
  // One open bucket per (dtype, device); each key's first bucket has the
  // small cap, as DDP's compute_bucket_assignment_by_size does.
  struct Open {
    std::vector<size_t> parameters;
    int64_t bytes = 0;
    bool first = true;
  };
  std::map<std::tuple<int, int, int>, Open> open;
  std::vector<std::vector<size_t>> closed;
  for (size_t k = parameters_.size(); k-- > 0;) {
    const torch::Tensor& p = parameters_[k];
    const auto key = std::make_tuple(static_cast<int>(p.scalar_type()),
                                     static_cast<int>(p.device().type()), p.device().index());
    Open& bucket = open[key];
    bucket.parameters.push_back(k);
    bucket.bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (bucket.bytes >= (bucket.first ? first_cap : cap)) {
      closed.push_back(std::move(bucket.parameters));
      bucket = Open{{}, 0, false};
    }
  }
  for (auto& [key, bucket] : open) {
    if (!bucket.parameters.empty()) closed.push_back(std::move(bucket.parameters));
  }
  bucket_of_.assign(parameters_.size(), 0);
  slots_.assign(parameters_.size(), torch::Tensor());
  for (std::vector<size_t>& members : closed) {
    int64_t elements = 0;
    for (size_t k : members) elements += parameters_[k].numel();
    const torch::Tensor& first = parameters_[members.front()];
    Bucket bucket;
    bucket.buffer = torch::empty(
        {elements},
        first.options().dtype(ReductionDtype(first.scalar_type())).requires_grad(false));
    bucket.bytes = elements * static_cast<int64_t>(bucket.buffer.element_size());
    int64_t offset = 0;
    for (size_t k : members) {
      const torch::Tensor& p = parameters_[k];
      bucket_of_[k] = buckets_.size();
      // Laid out like the parameter where it is dense (channels_last
      // included), as autograd lays out gradients: the optimizer then reads
      // the average in place.
      slots_[k] = p.is_non_overlapping_and_dense()
                      ? bucket.buffer.as_strided(p.sizes(), p.strides(), offset)
                      : bucket.buffer.narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
    }
    bucket.parameters = std::move(members);
    buckets_.push_back(std::move(bucket));
  }
}

torch::ScalarType GradientBuckets::ReductionDtype(torch::ScalarType dtype) const {
  // LibTorch 1.13's Gloo has no bfloat16 sum ("Invalid scalar type"): such
  // buckets travel and add up in float32, which rounds once, at the end.
  if (dtype != torch::kBFloat16) return dtype;
  std::string backend;
  try {
    backend = group_->getBackendName();
  } catch (const std::exception&) {
    // A group that does not say what it is: taken for one that adds bfloat16.
  }
  return backend == "gloo" ? torch::kFloat32 : dtype;
}

void GradientBuckets::InstallHooks() {
  for (size_t k = 0; k < parameters_.size(); ++k) {
    // Held here: the parameter keeps only a weak reference, and backward
    // must find the accumulator that carries the hook.
    std::shared_ptr<torch::autograd::Node> accumulator =
        torch::autograd::impl::grad_accumulator(parameters_[k]);
    hook_keys_.push_back(accumulator->add_post_hook(
        std::make_unique<GradientReadyHook>([this, k] { OnGradientReady(k); })));
    accumulators_.push_back(std::move(accumulator));
  }
}

void GradientBuckets::OnGradientReady(size_t parameter) {
  absl::MutexLock lock(&mu_);
  if (produced_[parameter]) {
    throw std::logic_error(absl::StrCat(
        "GradientBuckets: parameters[", parameter,
        "] got a second gradient before FinishBackward (one backward per FinishBackward)"));
  }
  produced_[parameter] = true;
  if (!overlap_) return;
  const size_t bucket = bucket_of_[parameter];
  --pending_[bucket];
  // Copied now, while backward goes on, so the launch need not wait.
  CopyIntoBucket(parameter, /*produced=*/true);
  if (pending_[bucket] == 0) LaunchReadyLocked();
}

void GradientBuckets::CopyIntoBucket(size_t index, bool produced) {
  torch::NoGradGuard no_grad;
  torch::Tensor& slot = slots_[index];
  copied_[index] = true;
  if (!produced) {
    slot.zero_();
    return;
  }
  const torch::Tensor& grad = parameters_[index].grad();
  if (grad.layout() != torch::kStrided) {
    throw std::invalid_argument(absl::StrCat("GradientBuckets: parameters[", index,
                                             "] has a sparse gradient; only dense ones reduce"));
  }
  // Each rank adds its gradient / world: the sum is then the mean, with no
  // pass over the gradients after the all-reduce.
  if (grad.is_alias_of(slot) && grad.strides() == slot.strides()) {
    // Last step's average, accumulated into in place (no zero_grad
    // between): already where it goes.
    if (world_ > 1) slot.div_(world_);
  } else if (grad.scalar_type() == slot.scalar_type() && world_ > 1) {
    at::div_out(slot, grad, world_);
  } else {
    slot.copy_(grad);  // widened first (bfloat16 over Gloo), so the division rounds once
    if (world_ > 1) slot.div_(world_);
  }
}

void GradientBuckets::LaunchReadyLocked() {
  while (next_launch_ < buckets_.size() && pending_[next_launch_] == 0) {
    LaunchLocked(next_launch_++);
  }
}

void GradientBuckets::LaunchLocked(size_t bucket) {
  if (bucket == 0) first_launch_ = Clock::now();
  std::vector<at::Tensor> tensors = {buckets_[bucket].buffer};
  c10::intrusive_ptr<c10d::Work> work = group_->allreduce(tensors);
  // Run by c10d when the collective completes (or fails), on its thread;
  // at once, here, if it already has.
  std::shared_ptr<CompletionTimes> completed_at = completed_at_;
  work->getFuture()->addCallback([completed_at, bucket](c10::ivalue::Future& /*done*/) {
    (*completed_at)[bucket].store(NowNanos());
  });
  works_[bucket] = std::move(work);
}

StepCommunication GradientBuckets::FinishBackward() {
  StepCommunication step;
  if (buckets_.empty()) return step;
  const torch::Device device = parameters_.front().device();
  Clock::time_point start = Clock::now();
  if (!device.is_cpu()) {
    SynchronizeCurrentStream(device);
    const Clock::time_point synchronized = Clock::now();
    step.backward_tail_s = SecondsBetween(start, synchronized);
    start = synchronized;
  }
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  Clock::time_point first_launch;
  {
    absl::MutexLock lock(&mu_);
    try {
      for (size_t k = 0; k < parameters_.size(); ++k) {
        if (!produced_[k]) ++step.unused_parameters;
      }
      // Bucket by bucket, so that copying the next overlaps reducing this one.
      for (size_t b = next_launch_; b < buckets_.size(); ++b) {
        for (size_t k : buckets_[b].parameters) {
          if (!copied_[k]) CopyIntoBucket(k, produced_[k]);
        }
        pending_[b] = 0;
        LaunchLocked(next_launch_++);
      }
    } catch (...) {
      ResetStepLocked();
      throw;
    }
    works = works_;
    first_launch = first_launch_;
    ResetStepLocked();
  }
  // Every bucket is waited for, even after one failed: none may still be
  // writing into a buffer the next step fills.
  std::string failure;
  for (c10::intrusive_ptr<c10d::Work>& work : works) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  if (!failure.empty()) {
    throw std::runtime_error(absl::StrCat("gradient all-reduce failed: ", failure));
  }
  SynchronizeCurrentStream(device);
  int64_t last_completion = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    // Every callback has run: a Work completes its future before its wait returns.
    last_completion = std::max(last_completion, (*completed_at_)[b].exchange(0));
    step.allreduce_bytes += buckets_[b].bytes;
  }
  // NCCL completes its future when the collective is queued; on a device
  // the stream synchronized above is what saw the last bucket complete.
  if (!device.is_cpu()) last_completion = std::max(last_completion, NowNanos());
  const Clock::time_point completed{std::chrono::nanoseconds(last_completion)};
  step.allreduce_s = SecondsBetween(first_launch, std::max(completed, first_launch));
  CopyAveragesBack();
  step.exposed_s = SecondsBetween(start, Clock::now());
  return step;
}

void GradientBuckets::CopyAveragesBack() {
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < parameters_.size(); ++k) {
    const torch::Tensor& p = parameters_[k];
    torch::Tensor& grad = p.mutable_grad();
    if (slots_[k].scalar_type() == p.scalar_type()) {
      // The gradient becomes its slot (DDP's gradient_as_bucket_view): no copy.
      if (!grad.defined() || !grad.is_same(slots_[k])) grad = slots_[k];
      continue;
    }
    if (!grad.defined()) grad = torch::empty_like(p, p.options().requires_grad(false));
    grad.copy_(slots_[k]);
  }
}

void GradientBuckets::ResetStepLocked() {
  produced_.assign(parameters_.size(), false);
  copied_.assign(parameters_.size(), false);
  pending_.clear();
  for (const Bucket& bucket : buckets_) {
    pending_.push_back(static_cast<int>(bucket.parameters.size()));
  }
  works_.assign(buckets_.size(), {});
  next_launch_ = 0;
}

std::vector<std::vector<size_t>> GradientBuckets::BucketParameters() const {
  std::vector<std::vector<size_t>> out;
  out.reserve(buckets_.size());
  for (const Bucket& bucket : buckets_) out.push_back(bucket.parameters);
  return out;
}

int GradientBuckets::LaunchedBuckets() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(next_launch_);
}

double AllReduceBusFactor(int ranks) {
  if (ranks < 1) {
    throw std::invalid_argument(
        absl::StrCat("AllReduceBusFactor: ranks must be >= 1 (got ", ranks, ")"));
  }
  return model::AllReduceBusFactor(ranks);
}

}  // namespace paradnn::runner
