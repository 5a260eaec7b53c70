#include "model/thread_guideline.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paradnn::model {
namespace {

// The runner's switch that keeps libgomp's defaults (openmp_env.cc): the
// baselines run OpenMP as installed, not with paradnn's short spin.
constexpr char kKeepOpenMpEnv[] = "PARADNN_RUNNER_KEEP_OPENMP_ENV";

int PhysicalCores(const CpuCores& cores) {
  return std::max(1, cores.physical_cores > 0 ? cores.physical_cores : cores.logical_cpus);
}

}  // namespace

ThreadSettings GuidelineSettings(const OperatorWidth& width, const CpuCores& cores) {
  const int physical = PhysicalCores(cores);
  const double average = width.average();
  const int pools = std::clamp(static_cast<int>(std::lround(average)), 1, physical);
  ThreadSettings s;
  s.name = "guideline";
  s.inter_op_threads = pools;
  s.intra_op_threads = std::max(1, physical / pools);
  s.physical_cores = true;
  s.why = absl::StrFormat(
      "inter-op pools = the model's average width %.2f (%d heavy operators, longest chain %d) "
      "rounded, within 1..%d physical cores; intra-op = %d physical cores / %d pools",
      average, width.heavy_ops, width.longest_path, physical, physical, pools);
  return s;
}

ThreadSettings IntelRecommendedSettings(const CpuCores& cores) {
  const int sockets = std::max(1, cores.sockets);
  ThreadSettings s;
  s.name = "intel";
  s.intra_op_threads = std::max(1, PhysicalCores(cores) / sockets);
  s.inter_op_threads = sockets;
  s.env = {{"KMP_BLOCKTIME", "1"},
           {"KMP_AFFINITY", "granularity=fine,compact,1,0"},
           {"OMP_PROC_BIND", "close"},
           {"OMP_PLACES", "cores"},
           {"GOMP_SPINCOUNT", "1000"}};
  s.pinning = ThreadPinning::kOff;  // OMP_PROC_BIND places the threads
  s.why = absl::StrFormat(
      "Intel's recommendation: intra-op = %d physical cores per socket, inter-op = %d "
      "socket(s), block time 1 ms, compact affinity (KMP_* for Intel OpenMP, their GNU OpenMP "
      "equivalents beside them)",
      s.intra_op_threads, sockets);
  return s;
}

ThreadSettings TensorFlowDefaultSettings(const CpuCores& cores) {
  const int logical = std::max(1, cores.logical_cpus);
  ThreadSettings s;
  s.name = "tensorflow";
  s.intra_op_threads = logical;
  s.inter_op_threads = logical;
  s.pinning = ThreadPinning::kOff;
  s.env = {{kKeepOpenMpEnv, "1"}};
  s.why = absl::StrFormat("the TensorFlow guide's defaults: both pools = %d logical CPUs", logical);
  return s;
}

ThreadSettings LibTorchDefaultSettings() {
  ThreadSettings s;
  s.name = "libtorch";
  s.pinning = ThreadPinning::kOff;
  s.env = {{kKeepOpenMpEnv, "1"}};
  s.why = "LibTorch's own defaults: no thread count set, no pinning, libgomp's default spin";
  return s;
}

ThreadSettings ResolveThreadProfile(const platform::ThreadProfile& profile,
                                    const OperatorWidth& width, const CpuCores& cores) {
  using Kind = platform::ThreadProfileKind;
  switch (profile.kind) {
    case Kind::kLibTorch:
      return LibTorchDefaultSettings();
    case Kind::kIntel:
      return IntelRecommendedSettings(cores);
    case Kind::kTensorFlow:
      return TensorFlowDefaultSettings(cores);
    case Kind::kGuideline:
      return GuidelineSettings(width, cores);
    case Kind::kExplicit:
      break;
  }
  ThreadSettings s;
  s.name = platform::ThreadProfileValue(profile);
  s.intra_op_threads = profile.intra_op_threads;
  s.inter_op_threads = profile.inter_op_threads;
  if (profile.pin.has_value()) s.pinning = *profile.pin ? ThreadPinning::kOn : ThreadPinning::kOff;
  s.replicas = profile.replicas;
  s.physical_cores = profile.physical_cores;
  s.numa = profile.numa;
  s.why = profile.replicas > 1 ? absl::StrCat("explicit counts, ", profile.replicas,
                                              " processes at once on disjoint CPUs")
                               : "explicit counts";
  return s;
}

std::map<std::string, std::string> ThreadProfileEnvironment(
    const platform::ThreadProfile& profile) {
  // Only the environment: the counts do not matter here.
  return ResolveThreadProfile(profile, OperatorWidth{}, CpuCores{1, 1, 1}).env;
}

namespace {

// "taskset -c 0 python train.py & taskset -c 1 python train.py &" for
// `replicas` processes of `threads` CPUs each (the first three written out).
// Under numa=on, "numactl --cpunodebind=0 --membind=0 python train.py &
// ..." instead: one process per node, its memory there.
std::string ReplicaLaunchExample(int replicas, int threads, bool numa) {
  std::string out;
  const int shown = std::min(replicas, 3);
  for (int r = 0; r < shown; ++r) {
    const int first = r * threads, last = first + threads - 1;
    absl::StrAppend(&out, r > 0 ? " " : "");
    if (numa) {
      absl::StrAppend(&out, "numactl --cpunodebind=", r, " --membind=", r, " python train.py &");
    } else {
      absl::StrAppend(&out, "taskset -c ",
                      threads > 1 ? absl::StrCat(first, "-", last) : absl::StrCat(first),
                      " python train.py &");
    }
  }
  if (replicas > shown) absl::StrAppend(&out, " ...");
  return out;
}

// How to start the training process(es) where the CPUs or the memory were
// placed: on hosts with hyper-threads, one CPU per physical core (lscpu's
// CORE column numbers cores across sockets); under numa=on, numactl.
std::string PlacementLines(const ThreadSettings& settings, const RanWith& ran) {
  std::string lines;
  if (settings.replicas > 1) {
    absl::StrAppend(
        &lines, "# ", settings.replicas, " training processes at once, each on its ",
        settings.numa ? "NUMA node's CPUs with its memory there" : "own CPUs", ", e.g. ",
        ReplicaLaunchExample(settings.replicas, settings.intra_op_threads, settings.numa), "\n");
    return lines;
  }
  if (settings.physical_cores && ran.hyper_threads) {
    absl::StrAppend(&lines,
                    "# one CPU per physical core, siblings idle, as measured:\n"
                    "taskset -c $(lscpu -p=CPU,CORE | awk -F, '!/^#/ && !seen[$2]++ "
                    "{printf \"%s%s\", sep, $1; sep=\",\"}') python train.py\n");
  }
  if (settings.numa) {
    absl::StrAppend(&lines,
                    "numactl --cpunodebind=0 --membind=0 python train.py  # memory on the node "
                    "of its CPUs, as measured\n");
  }
  return lines;
}

}  // namespace

std::string SettingsToCopy(const ThreadSettings& settings, const RanWith& ran) {
  std::string lines;
  for (const auto& [name, value] : settings.env) {
    if (name == kKeepOpenMpEnv) continue;  // paradnn's own; a script has no such step
    absl::StrAppend(&lines, "export ", name, "=", value, "\n");
  }
  if (!ran.runner_spincount.empty() && settings.env.empty()) {
    absl::StrAppend(&lines, "export GOMP_SPINCOUNT=", ran.runner_spincount,
                    "  # paradnn's runner ran with this short spin\n");
  }
  if (ran.threads_pinned && settings.env.count("OMP_PROC_BIND") == 0) {
    absl::StrAppend(&lines,
                    "export OMP_PROC_BIND=true  # one OpenMP thread per core, as measured\n");
  }
  if (settings.intra_op_threads == 0 && settings.inter_op_threads == 0) {
    absl::StrAppend(&lines, "# nothing to set: LibTorch's own thread counts");
    if (ran.intra_op_threads > 0) {
      absl::StrAppend(&lines, " (here intra-op ", ran.intra_op_threads, ", inter-op ",
                      ran.inter_op_threads, ")");
    }
    absl::StrAppend(&lines, "\n");
    return lines;
  }
  absl::StrAppend(&lines, "torch.set_num_threads(", settings.intra_op_threads, ")\n",
                  "torch.set_num_interop_threads(", settings.inter_op_threads,
                  ")  # before any inter-op work starts\n");
  absl::StrAppend(&lines, PlacementLines(settings, ran));
  return lines;
}

}  // namespace paradnn::model
