// Concurrent replicas (stack.threads "intra=T,inter=I,replicas=P";
// docs/tuning.md "Concurrent replicas"): P processes of one job at once,
// each confined to its own share of the job's CPUs with the profile's
// counts, each training its own copy of the model (no gradients exchanged:
// the paper's pools for throughput and its per-socket data parallelism).
// Every replica builds its model, then all start their warm-up together and
// time for the same span; their Measurements merge into the host's
// (metrics.proto ConcurrentReplicas).
#ifndef PARADNN_WORKER_RUNNER_JOB_REPLICAS_H_
#define PARADNN_WORKER_RUNNER_JOB_REPLICAS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/trainer.h"

namespace paradnn::runner {

// P of the job's stack.threads profile: 1 without a profile, for a
// malformed one (the job reports that itself) or for replicas=1.
int JobReplicas(const v1::RunnerJob& job);

// One replica's run: its Measurement, its CPUs, and when its timed steps
// began and ended (steady clock, nanoseconds; the clock is the host's, so
// the processes' spans compare).
struct ReplicaRun {
  v1::Measurement measurement;
  std::string cpus;
  int64_t timed_from_ns = 0;
  int64_t timed_to_ns = 0;
};

// The host's Measurement of replicas that all ended OK: the slowest
// replica's (largest median step) with its step times divided by the
// replica count and the statistics recomputed from them, the throughput
// and FLOP rates multiplied by it (the host finishes P steps
// in one replica step; utilization follows from them on the
// coordinator), peak RSS summed, the suspects of all (one every replica
// gave once, the others as "replica R: ..."), and
// concurrent_replicas filled; a suspect when the replicas timed together
// for less than 90 % of the slowest one's span. Where a replica did not end
// OK, its Measurement with the error prefixed "replica R of P (CPUs C): ".
// Pure.
v1::Measurement MergeReplicas(const std::vector<ReplicaRun>& runs);

// Runs `job` as JobReplicas(job) child processes on SplitCpus of the job's
// CPUs (RunnerJob.cpus, else this process's) and merges them; the result's
// config is the job's. UNSUPPORTED for more replicas than CPUs, for a
// data-parallel job or a job on an accelerator. Never throws.
v1::Measurement RunReplicas(const v1::RunnerJob& job, JobObserver* observer);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_JOB_REPLICAS_H_
