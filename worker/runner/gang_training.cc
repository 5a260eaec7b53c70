#include "worker/runner/gang_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/family.h"
#include "worker/runner/gradient_buckets.h"
#include "worker/runner/outcome.h"
#include "worker/runner/step_stats.h"

namespace paradnn::runner {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle)) +
          upper) /
         2;
}

std::string FirstLine(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// Who a failed collective of `role`'s rank waited for: the other rank of a
// two-host gang; of a larger one, c10d's message names the address.
std::string PeerNote(const v1::GangRole& role) {
  if (role.hosts() != 2) return "";
  return absl::StrCat(" (peer: ", GangRankName(role, 1 - role.host_rank()), ")");
}

// A gang replica's gradient averaging: c10d's errors become GangBroken,
// naming this rank and its peer.
class GangReplicaSync final : public ReplicaSync {
 public:
  GangReplicaSync(std::unique_ptr<ReplicaSync> sync, v1::GangRole role)
      : sync_(std::move(sync)), role_(std::move(role)) {}

  void BroadcastFromFirst(const std::vector<torch::Tensor>& parameters) override {
    try {
      sync_->BroadcastFromFirst(parameters);
    } catch (const std::exception& e) {
      throw Broken("the broadcast of rank 0's initial weights", e);
    }
  }
  GradientSyncTimes AverageGradients(const std::vector<torch::Tensor>& parameters) override {
    try {
      return sync_->AverageGradients(parameters);
    } catch (const std::exception& e) {
      throw Broken("a gradient all-reduce", e);
    }
  }
  int buckets() const override { return sync_->buckets(); }
  int64_t bucket_cap_bytes() const override { return sync_->bucket_cap_bytes(); }

 private:
  GangBroken Broken(const std::string& what, const std::exception& e) const {
    return GangBroken(absl::StrFormat("%s: %s failed%s within the %g s collective timeout: %s",
                                      GangRankName(role_, role_.host_rank()), what, PeerNote(role_),
                                      role_.collective_timeout_s(), FirstLine(e)));
  }

  std::unique_ptr<ReplicaSync> sync_;
  v1::GangRole role_;
};

}  // namespace

bool IsDataParallel(const v1::RunnerJob& job) {
  // A job that names hosts or devices at all, 1 included, is wrapped: the
  // 1-rank run of a scaling sweep is its baseline on the same path (buckets,
  // a process group of one), so that the efficiencies measure communication
  // and not the wrapping's own cost.
  const auto& params = job.config().params();
  return job.has_gang() || model::DataParallelDevices(job.config()) > 1 ||
         params.count(model::kHostsRule.name) > 0 || params.count(model::kDevicesRule.name) > 0;
}

c10::intrusive_ptr<c10d::Store> DataParallelRun::Meet(const v1::RunnerJob& job,
                                                      std::chrono::milliseconds* timeout,
                                                      std::string* address) {
  *address = "127.0.0.1";  // replicas of one process: loopback is the network
  if (!job.has_gang()) return ReplicaStore(MakeReplicaStore());
  gang_.emplace(JoinGang(job.gang()));
  *address = gang_->membership().local_address;
  hosts_ = job.gang().hosts();
  *timeout =
      std::chrono::milliseconds(static_cast<int64_t>(job.gang().collective_timeout_s() * 1000));
  return gang_->membership().store;
}

c10::intrusive_ptr<c10d::ProcessGroup> DataParallelRun::JoinGroup(
    c10::intrusive_ptr<c10d::Store> store, int rank, std::chrono::milliseconds timeout,
    const std::string& address) const {
  if (!gang_) return JoinProcessGroup(backend_, std::move(store), rank, ranks_, timeout, address);
  const v1::GangRole& role = gang_->role();
  try {
    return JoinProcessGroup(backend_, std::move(store), rank, ranks_, timeout, address);
  } catch (const std::exception& e) {
    throw GangBroken(absl::StrFormat(
        "%s could not form the %s process group of %d ranks (listening on %s) within %g s: %s",
        GangRankName(role, role.host_rank()), backend_, ranks_, address,
        role.collective_timeout_s(), FirstLine(e)));
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> DataParallelRun::JoinControlGroup(
    const c10::intrusive_ptr<c10d::Store>& store, std::chrono::milliseconds timeout,
    const std::string& address) const {
  absl::StatusOr<std::string> cpu_backend = CollectiveBackendFor(torch::kCPU);
  if (!cpu_backend.ok()) return {};
  const v1::GangRole& role = gang_->role();
  try {
    return JoinProcessGroup(*cpu_backend, c10::make_intrusive<c10d::PrefixStore>("control", store),
                            role.host_rank(), hosts_, timeout, address);
  } catch (const std::exception& e) {
    throw GangBroken(absl::StrFormat(
        "%s could not form the gang's control group of %d processes within %g s: %s",
        GangRankName(role, role.host_rank()), hosts_, role.collective_timeout_s(), FirstLine(e)));
  }
}

DataParallelRun::DataParallelRun(const v1::RunnerJob& job, const std::string& backend,
                                 const std::vector<torch::Device>& devices,
                                 const ReplicaGroup::MakeTrainer& make,
                                 std::chrono::milliseconds timeout)
    : backend_(backend),
      overlap_(model::DataParallelOverlap(job.config())),
      devices_per_host_(static_cast<int>(devices.size())) {
  std::string address;
  c10::intrusive_ptr<c10d::Store> store = Meet(job, &timeout, &address);
  ranks_ = hosts_ * devices_per_host_;
  if (gang_) control_ = JoinControlGroup(store, timeout, address);
  const int first_rank = gang_ ? gang_->role().host_rank() * devices_per_host_ : 0;
  const bool overlap = overlap_;
  ReplicaGroup::JoinSync join = [=](int local_rank,
                                    Trainer& trainer) -> std::unique_ptr<ReplicaSync> {
    std::unique_ptr<ReplicaSync> sync = MakeBucketSync(
        JoinGroup(store, first_rank + local_rank, timeout, address), trainer.parameters(), overlap);
    if (!gang_) return sync;
    return std::make_unique<GangReplicaSync>(std::move(sync), gang_->role());
  };
  replicas_ = std::make_unique<ReplicaGroup>(
      devices,
      [&make, first_rank](int local_rank, const torch::Device& device) {
        return make(first_rank + local_rank, device);
      },
      join);
}

DataParallelRun::DataParallelRun(const v1::RunnerJob& job, const std::string& backend,
                                 const torch::Device& device, int64_t bytes,
                                 std::chrono::milliseconds timeout)
    : backend_(backend), overlap_(false) {
  std::string address;
  c10::intrusive_ptr<c10d::Store> store = Meet(job, &timeout, &address);
  ranks_ = hosts_;
  group_ = JoinGroup(std::move(store), gang_ ? gang_->role().host_rank() : 0, timeout, address);
  // Zeros stay zeros under a sum: no value grows into inf or a subnormal
  // that could change the time of the additions.
  message_.push_back(torch::zeros({bytes / 4}, torch::dtype(torch::kFloat32).device(device)));
  zero_ = torch::zeros({});
}

DataParallelRun::~DataParallelRun() = default;

torch::Tensor DataParallelRun::Step() { return replicas_ ? replicas_->Step() : AllReduceStep(); }

torch::Tensor DataParallelRun::AllReduceStep() {
  try {
    group_->allreduce(message_)->wait();
  } catch (const std::exception& e) {
    if (!gang_) throw;
    const v1::GangRole& role = gang_->role();
    throw GangBroken(absl::StrFormat(
        "%s: an all-reduce of %d bytes failed%s within the %g s collective timeout: %s",
        GangRankName(role, role.host_rank()), message_.front().numel() * 4, PeerNote(role),
        role.collective_timeout_s(), FirstLine(e)));
  }
  return zero_;
}

void DataParallelRun::RunPublishingFailures(const std::function<void()>& body) {
  if (!gang_) {
    body();
    return;
  }
  try {
    body();
  } catch (const GangBroken&) {
    if (std::optional<GangPeerFailed> peer = gang_->PeerFailure()) throw *peer;
    throw;
  } catch (const GangPeerFailed&) {
    throw;
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    PublishOwnFailure(ClassifyModelError(message), message);
    throw;
  } catch (const std::bad_alloc& e) {
    PublishOwnFailure(v1::OOM, absl::StrCat("std::bad_alloc: ", e.what()));
    throw;
  } catch (const std::exception& e) {
    PublishOwnFailure(ClassifyModelError(e.what()), e.what());
    throw;
  }
}

void DataParallelRun::PublishOwnFailure(v1::Outcome outcome, const std::string& message) {
  gang_->PublishFailure(outcome, message);
  // Closing this rank's collectives breaks the peers' at once, not at their
  // collective timeout.
  group_.reset();
  control_.reset();
  replicas_.reset();
  // Rank 0's store lives in this process: it stays until the peers have
  // read the failure (a few seconds at most).
  const auto wait = std::min(
      std::chrono::milliseconds(5000),
      std::chrono::milliseconds(static_cast<int64_t>(gang_->role().collective_timeout_s() * 1000)));
  if (gang_->role().host_rank() == 0) gang_->AwaitFailureRead(wait);
}

int64_t DataParallelRun::FollowRankZero(int64_t mine) {
  if (!gang_) return mine;
  // Decisions travel over a process group, not the store: every rank leaves
  // a collective at about the same moment, so no rank starts its next timed
  // sample while another still waits for the decision. Through the store
  // rank 0 went on at once, and its next collective waited out the others'
  // store read (on a CPU shared with the store's thread, up to a scheduler
  // tick: 4 ms samples of a 0.2 ms all-reduce in
  // bench/allreduce_family_bench.cc). The allreduce family votes over its
  // own group, a training gang over its control group.
  const c10::intrusive_ptr<c10d::ProcessGroup>& group = group_ ? group_ : control_;
  if (!group) return gang_->FollowRankZero(mine);
  const torch::Device device = group_ ? message_.front().device() : torch::Device(torch::kCPU);
  const bool root = gang_->role().host_rank() == 0;
  std::vector<torch::Tensor> vote{
      torch::full({1}, root ? mine : 0, torch::dtype(torch::kInt64).device(device))};
  try {
    group->allreduce(vote)->wait();
  } catch (const std::exception& e) {
    const v1::GangRole& role = gang_->role();
    throw GangBroken(
        absl::StrFormat("%s: rank 0's decision failed%s within the %g s collective "
                        "timeout: %s",
                        GangRankName(role, role.host_rank()), PeerNote(role),
                        role.collective_timeout_s(), FirstLine(e)));
  }
  return vote.front().item<int64_t>();
}

void DataParallelRun::BeginSample() {
  if (!replicas_) return;  // the allreduce family: the step is its only part
  parts_before_ = leader().step_parts();
  sync_before_ = replicas_->leader_sync_totals();
}

void DataParallelRun::EndSample(int block) {
  if (!replicas_) return;
  const Trainer::StepParts& parts = leader().step_parts();
  const GradientSyncTimes& sync = replicas_->leader_sync_totals();
  const double steps = block;
  samples_.compute_s.push_back((parts.compute_s - parts_before_.compute_s) / steps);
  samples_.exposed_s.push_back((parts.gradient_hook_s - parts_before_.gradient_hook_s) / steps);
  samples_.optimizer_s.push_back((parts.optimizer_s - parts_before_.optimizer_s) / steps);
  samples_.allreduce_s.push_back((sync.allreduce_s - sync_before_.allreduce_s) / steps);
  samples_.allreduce_bytes.push_back(
      static_cast<double>(sync.allreduce_bytes - sync_before_.allreduce_bytes) / steps);
}

void DataParallelRun::FillTrainingParts(const std::vector<double>& seconds_per_step,
                                        v1::DataParallelStep* step) const {
  step->set_buckets(replicas_->buckets());
  step->set_bucket_cap_bytes(replicas_->bucket_cap_bytes());
  // The parts are averaged over the middle half of the samples by step
  // time: each sample's parts add up to its step, so these add up to about
  // the median step, which separate medians of each part need not (under
  // contention a part's time jumps between samples).
  std::vector<size_t> order(std::min(seconds_per_step.size(), samples_.compute_s.size()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return seconds_per_step[a] < seconds_per_step[b]; });
  const size_t from = order.size() / 4;
  const size_t to = std::max(from + 1, order.size() - order.size() / 4);
  auto middle_mean = [&](const std::vector<double>& part) {
    double sum = 0;
    for (size_t k = from; k < to && k < order.size(); ++k) sum += part[order[k]];
    return order.empty() ? 0 : sum / static_cast<double>(std::min(to, order.size()) - from);
  };
  step->set_compute_s(middle_mean(samples_.compute_s));
  step->set_exposed_communication_s(middle_mean(samples_.exposed_s));
  step->set_optimizer_s(middle_mean(samples_.optimizer_s));
  step->set_allreduce_s(middle_mean(samples_.allreduce_s));
  step->set_allreduce_bytes(
      static_cast<int64_t>(std::llround(middle_mean(samples_.allreduce_bytes))));
}

v1::DataParallelStep DataParallelRun::OwnStep(const std::vector<double>& seconds_per_step) const {
  v1::DataParallelStep step;
  step.set_ranks(ranks_);
  step.set_hosts(hosts_);
  step.set_devices_per_host(devices_per_host_);
  step.set_backend(backend_);
  step.set_overlap(overlap_);
  if (!replicas_) {
    // The allreduce family: the step is one all-reduce, all of it exposed.
    const int64_t bytes = message_.front().numel() * 4;
    const double median = Median(seconds_per_step);
    step.set_buckets(1);
    step.set_bucket_cap_bytes(bytes);
    step.set_exposed_communication_s(median);
    step.set_allreduce_s(median);
    step.set_allreduce_bytes(bytes);
  } else {
    FillTrainingParts(seconds_per_step, &step);
  }
  step.set_slowest_rank(gang_ ? gang_->role().host_rank() * devices_per_host_ : 0);
  step.add_rank_median_step_s(Median(seconds_per_step));
  return step;
}

void DataParallelRun::Finish(std::vector<double>* seconds_per_step, v1::Measurement* m) {
  v1::DataParallelStep own = OwnStep(*seconds_per_step);
  v1::DataParallelStep* out = m->mutable_data_parallel();
  *out = own;
  if (gang_) {
    // Each rank's step times and parts travel as a Measurement.
    v1::Measurement report;
    *report.mutable_data_parallel() = own;
    for (double s : *seconds_per_step) report.add_step_seconds(s);
    const std::vector<std::string> all = gang_->GatherAtRankZero(report.SerializeAsString());
    double slowest_median = -1;
    out->clear_rank_median_step_s();
    for (size_t host = 0; host < all.size(); ++host) {
      v1::Measurement rank;
      rank.ParseFromString(all[host]);
      const double median = rank.data_parallel().rank_median_step_s(0);
      out->add_rank_median_step_s(median);
      const int samples =
          std::min(rank.step_seconds_size(), static_cast<int>(seconds_per_step->size()));
      for (int i = 0; i < samples; ++i) {
        (*seconds_per_step)[i] = std::max((*seconds_per_step)[i], rank.step_seconds(i));
      }
      if (median > slowest_median) {
        slowest_median = median;
        const auto list = out->rank_median_step_s();
        *out = rank.data_parallel();
        *out->mutable_rank_median_step_s() = list;
      }
    }
  }
  if (out->allreduce_s() > 0) {
    out->set_algorithm_bytes_per_sec(static_cast<double>(out->allreduce_bytes()) /
                                     out->allreduce_s());
    out->set_bus_bytes_per_sec(out->algorithm_bytes_per_sec() * AllReduceBusFactor(ranks_));
  }
}

std::string DataParallelRun::Describe() const {
  if (!replicas_) {
    return absl::StrFormat("%d ranks (%d hosts x 1 device), %s, one all-reduce of %d bytes a step",
                           ranks_, hosts_, backend_, message_.front().numel() * 4);
  }
  return absl::StrFormat(
      "%d ranks (%d hosts x %d devices), %s, gradients in %d buckets of up to %d bytes "
      "all-reduced %s",
      ranks_, hosts_, devices_per_host_, backend_, replicas_->buckets(),
      replicas_->bucket_cap_bytes(), overlap_ ? "during backward" : "after backward");
}

std::string DataParallelRun::WeightsDigest() {
  // FNV-1a over the bytes: equal weights give equal digests whatever the
  // thread count, which a floating-point sum would not promise.
  uint64_t hash = 1469598103934665603ULL;
  for (const torch::Tensor& p : leader().parameters()) {
    const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    const size_t count = static_cast<size_t>(host.numel()) * host.element_size();
    for (size_t i = 0; i < count; ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
  }
  return absl::StrFormat("weights fnv1a %016x over %d tensors", hash, leader().parameters().size());
}

}  // namespace paradnn::runner
