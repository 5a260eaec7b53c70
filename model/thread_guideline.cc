#include "model/thread_guideline.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace paradnn::model {
namespace {

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
  s.why = absl::StrFormat("the TensorFlow guide's defaults: both pools = %d logical CPUs", logical);
  return s;
}

}  // namespace paradnn::model
