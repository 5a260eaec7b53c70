// Pins the OpenMP threads LibTorch computes on, one per CPU. Torch-free;
// thread_pinning.cc is compiled with -fopenmp (LibTorch's own parallel_for
// header runs serially in code built without it) and so shares LibTorch's
// libgomp thread pool.
#ifndef PARADNN_WORKER_RUNNER_THREAD_PINNING_H_
#define PARADNN_WORKER_RUNNER_THREAD_PINNING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paradnn::runner {

// The CPUs of a list like "0-3,8" (RunnerJob.cpus), ascending and unique.
// InvalidArgument naming the field `cpus` and its syntax when malformed.
absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& list);

// The CPUs this process started with: where OMP_PROC_BIND or OMP_PLACES is
// set (a threads profile's OpenMP environment), libgomp binds the main
// thread to its first place before main(), so the main thread's affinity
// (common::AllowedCpus) says one core; its places list every CPU it found
// at start. Elsewhere AllowedCpus.
std::vector<int> ProcessCpusAtStart();

// The CPUs a job's process runs on: those of `list` (RunnerJob.cpus) where
// given, else what the process started with (ProcessCpusAtStart).
// InvalidArgument as ParseCpuList for a malformed list.
absl::StatusOr<std::vector<int>> JobCpus(const std::string& list);

// Confines every thread of this process to the CPUs of `list` (RunnerJob.cpus;
// "" leaves the process as it is) and returns what was done, for
// Measurement.thread_pinning. Call before LibTorch's thread pools start:
// threads inherit the set of the thread that creates them. InvalidArgument
// (the UNSUPPORTED outcome) naming `cpus` and the CPUs this process may use
// when the list is malformed or names a CPU outside them.
absl::StatusOr<std::string> ConfineProcessToCpus(const std::string& list);

// Sets the CPUs of every thread of this process (and so of the threads it
// starts later) to `cpus`; how many threads it set. InvalidArgument with
// the kernel's reason when sched_setaffinity refuses.
absl::StatusOr<int> SetProcessAffinity(const std::vector<int>& cpus);

// When `threads` equals the number of CPUs this process may run on, pins
// OpenMP thread i (the main thread is thread 0) to the i-th of those CPUs,
// as OMP_PROC_BIND=true would; decided per job, because the thread count
// comes with the job. Unpinned, the scheduler sometimes keeps the main thread
// and a pool thread on one core for the life of the process: on a 2-core host
// (FC 4x64, batch 256, 2 threads) 4 of 12 processes ran at 3.8 ms per step
// instead of 1.4 ms; with OMP_PROC_BIND=true 12 of 12 ran at 1.36-1.48 ms.
// With fewer threads than CPUs nothing is pinned, so runners sharing a host
// do not pile onto the same CPUs, unless `always` (a job's threads profile
// with pin=on): then thread i goes to the i-th CPU whatever the count.
// Returns what was done, for the result.
std::string PinOpenMpThreads(int threads, bool always = false);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_THREAD_PINNING_H_
