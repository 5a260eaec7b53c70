// What the step-time predictor reads about a configuration besides its
// coordinates: the group it is fitted in and its physical prior (the
// analytic counts of model/ against the platform's calibrated roofs).
#ifndef PARADNN_SERVER_PREDICTION_PREDICTION_INPUTS_H_
#define PARADNN_SERVER_PREDICTION_PREDICTION_INPUTS_H_

#include <string>

#include "paradnn/v1/metrics.pb.h"
#include "paradnn/v1/sweep.pb.h"
#include "server/prediction/step_time_model.h"

namespace paradnn::server::prediction {

// The roofs of `platform` a job of compute dtype `dtype` on kernel path
// `kernel` ("matmul", "conv") runs against: the calibrated roof of that
// kernel and dtype (the matmul roof when the platform has no conv roof), and
// the DRAM plateau of its bandwidth calibration (the best bandwidth point
// when no level is named DRAM). A missing roof is 0: no prior.
PriorRoofs PriorRoofsOf(const v1::Platform& platform, const std::string& dtype,
                        const std::string& kernel);

// The model a configuration's result belongs to: one per family, platform
// fingerprint, precision and stack settings ("fc|<fp>|float32|").
std::string PredictionGroupKey(const v1::ModelConfig& config, const std::string& fingerprint);

// PriorStepSeconds of `config` from its analytic counts (model/model_counts.h);
// 0 when the configuration does not parse or a roof is missing.
double PriorOf(const v1::ModelConfig& config, const PriorRoofs& roofs);

}  // namespace paradnn::server::prediction

#endif  // PARADNN_SERVER_PREDICTION_PREDICTION_INPUTS_H_
