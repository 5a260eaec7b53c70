// The step-time models of one sweep (docs/prediction.md): its rows grouped
// by (family, precision, stack), each group's measured results fitted on
// the platform fingerprint that measured most of them, against that
// platform's calibrated roofs. What a budgeted sweep's planner chooses its
// next measurements with, what predicts the rest when its budget ends, and
// what `paradnn predict` answers from. Immutable after Of; thread-compatible.
#ifndef PARADNN_SERVER_SWEEP_PREDICTOR_H_
#define PARADNN_SERVER_SWEEP_PREDICTOR_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"
#include "server/prediction/feature_space.h"
#include "server/prediction/step_time_model.h"

namespace paradnn::server {

// The model's version, stored with every prediction.
inline constexpr char kPredictionModelVersion[] = "roofline-gp-v1";

// Fewer measurements than this in a group: no model, no prediction.
inline constexpr size_t kMinMeasurementsToPredict = 3;

class SweepPredictor {
 public:
  // One group of a sweep: every row of one (family, precision, stack).
  struct Group {
    std::string key;                                 // PredictionGroupKey without a fingerprint
    prediction::FeatureSpace space;                  // over every row of the group (the grid)
    std::vector<size_t> rows;                        // indices into the rows given to Of
    std::vector<prediction::PredictorInput> inputs;  // of `rows`, same order
    std::vector<bool> measured;                      // of `rows`: an OK result on `fingerprint`
    std::string fingerprint;                         // the platform the model is of ("" = none yet)
    prediction::PriorRoofs roofs;
    std::optional<prediction::StepTimeModel> model;  // once kMinMeasurementsToPredict
    // Mean seconds a measurement took besides its timed steps, and the
    // median timed steps (AcquisitionOptions); 0 before any measurement.
    double fixed_seconds = 0;
    double timed_steps = 0;
  };

  // Groups and fits `rows` (ResultStore::Query of one sweep); a platform
  // that cannot be read is an error. `calibrate_intervals` false skips the
  // cross-validation that widens the intervals (five more fits, most of the
  // cost): it scales every predictive sd alike, so what acquisition ranks
  // and the predicted medians do not change; predictions that are stored
  // or shown need it.
  static absl::StatusOr<SweepPredictor> Of(const db::Database& database,
                                           std::vector<v1::ResultRow> rows,
                                           bool calibrate_intervals = true);

  const std::vector<v1::ResultRow>& rows() const { return rows_; }
  const std::vector<Group>& groups() const { return groups_; }

  // `config`'s predicted step, or FailedPrecondition naming what is missing
  // (no group of its family/precision/stack, too few measurements).
  absl::StatusOr<v1::PredictedStep> Predict(const v1::ModelConfig& config) const;
  // The `count` measured rows of `config`'s group nearest to it (closest
  // first), in the group's coordinates.
  std::vector<v1::ResultRow> NearestMeasured(const v1::ModelConfig& config, size_t count) const;
  // What `config`'s group model learned, one line ("" without a model).
  std::string Describe(const v1::ModelConfig& config) const;

 private:
  const Group* GroupOf(const v1::ModelConfig& config) const;
  v1::PredictedStep ToPredictedStep(const Group& group, const v1::ModelConfig& config,
                                    const prediction::StepTimePrediction& p) const;

  std::vector<v1::ResultRow> rows_;
  std::vector<Group> groups_;
};

// `request` answered from the stored sweep's results. The configuration is
// completed from the sweep: family, precision and optimizer (its first),
// and every hyper-parameter it holds at one value; InvalidArgument names a
// hyper-parameter the sweep varies that the request lacks, or one the
// family does not have; NotFound for an unknown sweep.
absl::StatusOr<v1::PredictResponse> PredictFromSweep(db::Database* database,
                                                     const v1::PredictRequest& request);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_SWEEP_PREDICTOR_H_
