// The sensitivity analysis's arithmetic: how strongly each hyper-parameter
// (and, when asked, each pair of them) explains a metric over the selected
// results, as standardized least-squares weights (Eigen). The only Eigen
// user of the analyses. analysis_math.h includes this header, so its
// callers see it too. Pure functions of their inputs; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_SENSITIVITY_FIT_H_
#define PARADNN_SERVER_ANALYSIS_SENSITIVITY_FIT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paradnn/v1/analysis.pb.h"

namespace paradnn::server::analysis {

// The most terms (features + interactions) one fit may have, so that no
// request exhausts the coordinator's memory (RESOURCE_EXHAUSTED past it);
// one of the analyses' bounds (analysis_math.h).
inline constexpr size_t kMaxSensitivityTerms = 256;

struct SensitivityInput {
  std::vector<std::string> feature_names;
  // One row per point, one column per feature (raw values).
  std::vector<std::vector<double>> features;
  std::vector<double> target;
  bool log2_features = false;
  bool log2_target = false;
  bool interactions = false;
};

// Ordinary least squares with intercept on standardized features and target
// (z-scores; after log2 where asked; interaction columns are products of
// standardized features, standardized again), solved with Eigen (column-
// pivoting Householder QR). Weights are the standardized coefficients.
// InvalidArgument naming the problem when: there are fewer points than
// terms + 1; a feature (or the target) is constant; log2 meets a value
// <= 0; a value is not finite.
absl::StatusOr<v1::SensitivityResponse> FitSensitivity(const SensitivityInput& input);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_SENSITIVITY_FIT_H_
