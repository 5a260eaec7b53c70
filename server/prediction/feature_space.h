// FeatureSpace: the coordinates the step-time predictor sees for one group of
// configurations (one family, platform, precision and stack): every
// hyper-parameter that varies across the group's grid, mapped to [0, 1].
// A numeric axis whose values span a factor of 4 or more (and are all
// positive) is log-scaled, as ParaDnn's grids are geometric (node 32..8192
// by x2); others are linear. A categorical option (block_fn, cell) or the
// optimizer, when it varies, becomes one 0/1 coordinate per value.
// Immutable after Of(); thread-compatible.
#ifndef PARADNN_SERVER_PREDICTION_FEATURE_SPACE_H_
#define PARADNN_SERVER_PREDICTION_FEATURE_SPACE_H_

#include <string>
#include <vector>

#include "paradnn/v1/sweep.pb.h"

namespace paradnn::server::prediction {

struct FeatureAxis {
  std::string name;          // hyper-parameter, or "block_fn=bottleneck" for a category
  bool categorical = false;  // a 0/1 indicator of `name`'s value
  bool log_scale = false;
  double low = 0;  // the grid's range (log2 of it when log_scale)
  double high = 0;
};

class FeatureSpace {
 public:
  FeatureSpace() = default;

  // The axes of `grid` (every configuration the group may measure), sorted
  // by name so that the order does not depend on the grid's.
  static FeatureSpace Of(const std::vector<v1::ModelConfig>& grid);
  // The same over configurations held elsewhere (a sweep's rows: a copy of
  // a 100,000-configuration grid was ~50 MB more at every plan).
  static FeatureSpace Of(const std::vector<const v1::ModelConfig*>& grid);

  // `config`'s coordinates, one per axis, each in [0, 1] for a value inside
  // the grid's range (outside it: beyond, linearly, so that a prediction off
  // the grid is an extrapolation and its interval says so). A missing
  // hyper-parameter reads as the low end.
  std::vector<double> Encode(const v1::ModelConfig& config) const;

  const std::vector<FeatureAxis>& axes() const { return axes_; }
  size_t size() const { return axes_.size(); }

 private:
  std::vector<FeatureAxis> axes_;
};

}  // namespace paradnn::server::prediction

#endif  // PARADNN_SERVER_PREDICTION_FEATURE_SPACE_H_
