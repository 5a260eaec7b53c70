// The data-parallel side of a job's timing loop (docs/measurement.md, "Data
// parallelism"): the job's replicas in this process (params.devices) and,
// in a gang (RunnerJob.gang), its membership; what every rank must agree on
// so that all run the same steps; each timed sample's parts; and at the end
// the ranks' step times gathered at rank 0 into the job's Measurement.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_GANG_TRAINING_H_
#define PARADNN_WORKER_RUNNER_GANG_TRAINING_H_

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/data_parallel.h"
#include "worker/runner/gang_rendezvous.h"
#include "worker/runner/model_builder.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// Whether `job` trains data-parallel: several replicas here, a gang, or one
// replica of a job that names params.hosts or params.devices (the 1-rank
// baseline of a scaling sweep, on the same path).
bool IsDataParallel(const v1::RunnerJob& job);

// One data-parallel job's replicas, started. Not thread-safe: the timing
// loop's thread drives it.
class DataParallelRun {
 public:
  // Joins the gang first when job.gang is set (rendezvous, tag and secret:
  // GangBroken on failure), then builds replica r of this process on
  // devices[r] with `make` (seeded by its global rank) and joins every
  // replica to one process group: `backend` over the gang's store, or over
  // an in-process store with `timeout` when there is no gang.
  DataParallelRun(const v1::RunnerJob& job, const std::string& backend,
                  const std::vector<torch::Device>& devices, const ReplicaGroup::MakeTrainer& make,
                  std::chrono::milliseconds timeout);
  // The allreduce family (model/families/allreduce.h): joins as above, but
  // builds no model; this process is one rank (on `device`) and each
  // Step() is one in-place sum all-reduce of a float32 tensor of `bytes`,
  // waited for: what a bare c10d loop does, nothing more.
  DataParallelRun(const v1::RunnerJob& job, const std::string& backend, const torch::Device& device,
                  int64_t bytes, std::chrono::milliseconds timeout);
  ~DataParallelRun();

  // Replica 0's trainer; training jobs only.
  Trainer& leader() { return replicas_->leader(); }
  // One step of every replica here; returns replica 0's loss (the
  // allreduce family: one all-reduce, and a 0-dim zero). A gang's
  // collectives that fail throw GangBroken.
  torch::Tensor Step();
  // Rank 0's `mine` on every rank; `mine` itself without a gang. Throws
  // GangBroken.
  int64_t FollowRankZero(int64_t mine);
  // Around each timed sample of `block` steps: records its parts per step.
  void BeginSample();
  void EndSample(int block);
  // After the last timed sample (every rank the same number): at rank 0 of
  // a gang, replaces `seconds_per_step` with the slowest rank's time of each
  // sample; fills m->data_parallel. Throws GangBroken.
  void Finish(std::vector<double>* seconds_per_step, v1::Measurement* m);

  int ranks() const { return ranks_; }
  // Runs `body` (the job's timed steps). A failure of this rank's own (an
  // OOM, a model error) is published to the gang and this rank's
  // collectives are closed before it propagates, so that the peers learn of
  // it at once; a GangBroken that a peer's published failure caused becomes
  // that failure (GangPeerFailed): a benchmark failure on any rank is the
  // job's outcome, whichever rank's result the coordinator stores. Without
  // a gang, just runs `body`.
  void RunPublishingFailures(const std::function<void()>& body);

  // Whether this process is one rank of a gang (FollowRankZero is then a
  // collective).
  bool in_gang() const { return gang_.has_value(); }
  // What the job runs on, for its log: "2 ranks (2 hosts x 1 device), gloo, ..."
  std::string Describe() const;
  // "weights fnv1a 0x...": replica 0's weights after the last step, equal on
  // every rank of a healthy job.
  std::string WeightsDigest();

 private:
  struct SampleParts {
    std::vector<double> compute_s, exposed_s, optimizer_s, allreduce_s;
    std::vector<double> allreduce_bytes;
  };
  // Joins the gang (job.gang) or makes an in-process store; sets hosts_
  // and, for a gang, `timeout` and `address` (what Gloo listens on).
  c10::intrusive_ptr<c10d::Store> Meet(const v1::RunnerJob& job, std::chrono::milliseconds* timeout,
                                       std::string* address);
  // Rank `rank`'s process group over `store`; a gang's failure is GangBroken.
  c10::intrusive_ptr<c10d::ProcessGroup> JoinGroup(c10::intrusive_ptr<c10d::Store> store, int rank,
                                                   std::chrono::milliseconds timeout,
                                                   const std::string& address) const;
  // A training gang's control group: its processes (rank = host rank) over
  // the CPU backend; null where the build has none (decisions then travel
  // through the store).
  c10::intrusive_ptr<c10d::ProcessGroup> JoinControlGroup(
      const c10::intrusive_ptr<c10d::Store>& store, std::chrono::milliseconds timeout,
      const std::string& address) const;
  torch::Tensor AllReduceStep();
  // RunPublishingFailures' side of this rank's own failure.
  void PublishOwnFailure(v1::Outcome outcome, const std::string& message);
  // A training step's parts: averages over the middle half of the samples.
  void FillTrainingParts(const std::vector<double>& seconds_per_step,
                         v1::DataParallelStep* step) const;
  v1::DataParallelStep OwnStep(const std::vector<double>& seconds_per_step) const;

  std::optional<GangControl> gang_;
  std::string backend_;
  bool overlap_ = true;
  int hosts_ = 1;
  int devices_per_host_ = 1;
  int ranks_ = 1;
  std::unique_ptr<ReplicaGroup> replicas_;  // training jobs
  // A training gang's control group (JoinControlGroup): rank 0's decisions
  // travel as a one-element all-reduce over it.
  c10::intrusive_ptr<c10d::ProcessGroup> control_;
  // The allreduce family: its group, its one-tensor message and the value
  // Step() returns.
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  std::vector<torch::Tensor> message_;
  torch::Tensor zero_;
  Trainer::StepParts parts_before_;
  GradientSyncTimes sync_before_;
  SampleParts samples_;
};

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_GANG_TRAINING_H_
