#include "server/prediction/prediction_inputs.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "platform/silicon_peak.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::prediction {

PriorRoofs PriorRoofsOf(const v1::Platform& platform, const std::string& dtype,
                        const std::string& kernel) {
  PriorRoofs roofs;
  for (const char* path : {kernel.c_str(), "matmul"}) {
    if (const v1::MatmulRoof* roof = platform::CalibratedRoof(platform, path, dtype)) {
      roofs.compute_flops_per_sec = roof->flops_per_sec();
      break;
    }
  }
  for (const v1::BandwidthRoof& roof : analysis::BandwidthRoofs(platform)) {
    if (absl::StartsWith(roof.level(), "DRAM")) roofs.memory_bytes_per_sec = roof.bytes_per_sec();
  }
  if (roofs.memory_bytes_per_sec <= 0) {
    for (const v1::BandwidthPoint& point : platform.bandwidth()) {
      roofs.memory_bytes_per_sec = std::max(roofs.memory_bytes_per_sec, point.bytes_per_sec());
    }
  }
  return roofs;
}

std::string PredictionGroupKey(const v1::ModelConfig& config, const std::string& fingerprint) {
  std::string stack;
  for (const auto& [key, value] : config.stack()) absl::StrAppend(&stack, key, "=", value, ";");
  const std::string precision = config.precision().empty() ? "float32" : config.precision();
  return absl::StrCat(config.family(), "|", fingerprint, "|", precision, "|", stack);
}

double PriorOf(const v1::ModelConfig& config, const PriorRoofs& roofs) {
  absl::StatusOr<model::ModelSpec> spec = model::ParseModelSpec(config, model::FieldStyle::kProto);
  if (!spec.ok()) return 0;
  const v1::ModelCounts counts = model::CountModel(*spec);
  const double compute = PriorStepSeconds(counts.executed_flops(), counts.bytes_per_step(), roofs);
  if (compute <= 0) return compute;
  // Data parallelism adds the gradients' all-reduce at the platform's
  // all-reduce roof, not overlapped: float32 gradients (mixed precision
  // keeps float32 masters; Gloo sums bfloat16 as float32), one latency (the
  // buckets' latencies are small beside their bytes). The model learns how
  // much backward hides.
  return compute + AllreduceRoofSeconds(4.0 * static_cast<double>(counts.params()),
                                        model::DataParallelRanks(config), roofs);
}

}  // namespace paradnn::server::prediction
