// The framework parallelism settings a tuner starts from and compares with
// (issue 40; docs/tuning.md): the guideline of Wang, Wu, Wang, Hazelwood and
// Brooks ("Exploiting Parallelism Opportunities with Deep Learning
// Frameworks", ACM TACO 2021) and the baselines a user would otherwise take,
// Intel's recommended settings and the TensorFlow guide's defaults.
// LibTorch's own defaults are not here: they are what LibTorch picks on the
// host, so the runner reads them there. Torch-free.
#ifndef PARADNN_MODEL_THREAD_GUIDELINE_H_
#define PARADNN_MODEL_THREAD_GUIDELINE_H_

#include <map>
#include <string>

#include "model/model_counts.h"
#include "platform/thread_profile.h"

namespace paradnn::model {

// The host's CPUs as the settings count them (hostfacts::CpuTopology, or a
// worker's --cpus share of it).
struct CpuCores {
  int logical_cpus = 0;
  int physical_cores = 0;
  int sockets = 1;
};

// Whether the runner pins its OpenMP threads one per CPU.
enum class ThreadPinning {
  kRunnerRule,  // when the intra-op threads equal the process's CPUs
  kOn,          // thread i on the i-th CPU of the process, whatever the count
  kOff,         // never (the OpenMP runtime's own placement)
};

// One process's parallelism settings.
struct ThreadSettings {
  std::string name;  // "guideline", "intel", "tensorflow", "libtorch", "intra=2,inter=1"
  // 0 (libtorch only): what LibTorch picks by itself, not set.
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  ThreadPinning pinning = ThreadPinning::kRunnerRule;
  // Processes of the job at once, each on its own share of the CPUs with
  // the counts above (explicit profiles' replicas=P; 1 otherwise).
  int replicas = 1;
  // The process on one logical CPU per physical core (the guideline's rule;
  // explicit profiles' cores=physical), and its memory bound to the NUMA
  // nodes of its CPUs (explicit numa=on).
  bool physical_cores = false;
  bool numa = false;
  // Environment variables the settings set for the OpenMP runtime (empty:
  // left as installed).
  std::map<std::string, std::string> env;
  std::string why;  // one line: where the numbers come from
};

// The guideline: inter-op pools = the model's average operator width,
// rounded, within [1, physical cores] (1 for a model without heavy
// operators); intra-op threads = physical cores / pools (at least 1), on
// physical cores, not hyper-threads.
ThreadSettings GuidelineSettings(const OperatorWidth& width, const CpuCores& cores);

// Intel's recommendation for its optimized frameworks: intra-op = physical
// cores per socket, inter-op = sockets, a block time of 1 ms and compact
// affinity (KMP_BLOCKTIME=1, KMP_AFFINITY=granularity=fine,compact,1,0, for
// Intel's OpenMP; with GNU OpenMP, which Debian's LibTorch uses, the same
// intent as OMP_PROC_BIND=close, OMP_PLACES=cores and a short spin,
// GOMP_SPINCOUNT=1000, recorded beside them).
ThreadSettings IntelRecommendedSettings(const CpuCores& cores);

// The TensorFlow performance guide's defaults: both pools the number of
// logical CPUs.
ThreadSettings TensorFlowDefaultSettings(const CpuCores& cores);

// LibTorch's own defaults: no thread count set, no pinning, libgomp's
// defaults (PARADNN_RUNNER_KEEP_OPENMP_ENV=1 keeps the runner from setting
// its short spin, docs/measurement.md).
ThreadSettings LibTorchDefaultSettings();

// What `profile` means for a model of `width` on `cores`: one of the above,
// or the explicit counts (pin=on|off, else the runner's rule). The baselines
// other than the guideline leave the pinning to the OpenMP runtime (kOff):
// neither LibTorch nor the guides pin threads themselves.
ThreadSettings ResolveThreadProfile(const platform::ThreadProfile& profile,
                                    const OperatorWidth& width, const CpuCores& cores);

// The environment a job's runner starts in under `profile`, before any
// library reads it: NAME -> value. Not model- or host-dependent, so the
// worker computes it before the runner knows the model.
std::map<std::string, std::string> ThreadProfileEnvironment(const platform::ThreadProfile& profile);

// What a measurement under `settings` ran with besides them: whether its
// OpenMP threads were pinned one per CPU (Measurement.thread_pinning), and
// the runner's default GOMP_SPINCOUNT where the settings kept it ("" where
// they set the OpenMP environment themselves).
struct RanWith {
  bool threads_pinned = false;
  std::string runner_spincount;
  // The counts it ran with (0: unknown), said beside LibTorch's own.
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  // The host has hyper-thread siblings (logical CPUs > physical cores):
  // only then does running on physical cores need a line of its own.
  bool hyper_threads = false;
};

// The lines a user copies into a training script to run as measured: the
// environment (export NAME=value, set before Python starts: the settings'
// own, the runner's spin count, OMP_PROC_BIND=true where threads were
// pinned) and the torch.set_num_threads / set_num_interop_threads calls,
// then how to start the process(es) where the settings placed them
// (replicas, physical cores, numactl); for LibTorch's defaults a line
// saying nothing is set.
std::string SettingsToCopy(const ThreadSettings& settings, const RanWith& ran);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_THREAD_GUIDELINE_H_
