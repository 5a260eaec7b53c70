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

namespace paradnn::model {

// The host's CPUs as the settings count them (hostfacts::CpuTopology, or a
// worker's --cpus share of it).
struct CpuCores {
  int logical_cpus = 0;
  int physical_cores = 0;
  int sockets = 1;
};

// One process's parallelism settings.
struct ThreadSettings {
  std::string name;  // "guideline", "intel", "tensorflow"
  int intra_op_threads = 0;
  int inter_op_threads = 0;
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

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_THREAD_GUIDELINE_H_
