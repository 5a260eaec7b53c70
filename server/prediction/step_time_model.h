// The step-time predictor of budgeted sweeps (docs/prediction.md): a
// physical prior times a learned correction.
//
//   prior(c)  = executed FLOPs / calibrated compute roof of c's kernel path
//               and dtype + bytes per step / measured DRAM bandwidth
//               (the analytic counts of model/ against the platform's roofs)
//   log t(c)  = log prior(c) + h(z)ᵀβ + g(z),   z = (coordinates of c, log prior)
//
// h(z)ᵀβ is a linear trend in the log-scaled coordinates (what the paper's
// regression sees) and g a Gaussian process with an anisotropic squared-
// exponential kernel: the learned correction, which also gives the
// uncertainty that chooses the next measurement. The trend's coefficients
// are estimated with the GP (universal kriging), so their uncertainty is in
// the interval too. Kernel scales, signal and noise maximize the marginal
// likelihood (coordinate search on log scales, deterministic). The noise
// is the host's run-to-run drift as the data shows it; a 90 % interval is
// for a re-measurement, not only for the mean, and is widened until it
// covers 90 % of the data in 5-fold cross-validation (each fold's model
// fitting its own scales).
//
// Fit once per (family, platform fingerprint, precision, stack) group.
// Immutable after Fit; thread-compatible.
#ifndef PARADNN_SERVER_PREDICTION_STEP_TIME_MODEL_H_
#define PARADNN_SERVER_PREDICTION_STEP_TIME_MODEL_H_

#include <string>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/statusor.h"

namespace paradnn::server::prediction {

// The roofs a prior is computed against.
struct PriorRoofs {
  double compute_flops_per_sec = 0;  // calibrated roof of the job's kernel path and dtype
  double memory_bytes_per_sec = 0;   // DRAM plateau
};

// executed_flops / compute roof + bytes / bandwidth; 0 when a roof is not
// positive or both counts are 0 (no prior: the model then learns log t).
double PriorStepSeconds(double executed_flops, double bytes_per_step, const PriorRoofs& roofs);

// One configuration as the predictor sees it.
struct PredictorInput {
  std::vector<double> coordinates;  // FeatureSpace::Encode
  double prior_seconds = 0;         // PriorStepSeconds; 0 = none
};

struct Observation {
  PredictorInput input;
  double seconds = 0;  // measured median step time, > 0
};

struct StepTimePrediction {
  double seconds = 0;  // exp of the predicted mean of log t (a median)
  double low = 0;      // the interval (FitOptions.interval) of a re-measurement
  double high = 0;
  double log_sd = 0;  // predictive standard deviation of log t
};

struct FitOptions {
  double interval = 0.90;
  // Rounds of coordinate search over the kernel's log scales.
  int search_rounds = 6;
  // Widen the intervals to what cross-validation shows (KernelScales::
  // interval_scale); the fold models themselves are not calibrated.
  bool calibrate = true;
};

// The fitted hyper-parameters, for Describe() and tests.
struct KernelScales {
  std::vector<double> length;  // per coordinate of z (the last: log prior)
  double signal_sd = 0;        // of g, in log t
  double noise_sd = 0;         // of a measurement, in log t
  // What the predictive sd is multiplied by so that the intervals cover
  // their share of the data's own leave-one-out residuals (>= 1; 1 below
  // kMinCalibrationPoints measurements). Host drift is heavier-tailed than
  // a Gaussian: without it a 90 % interval covered 75 % of held-out points.
  double interval_scale = 1;
};

inline constexpr size_t kMinCalibrationPoints = 8;
inline constexpr size_t kCalibrationFolds = 5;

class StepTimeModel {
 public:
  // InvalidArgument when `data` is empty, has a non-positive time, or its
  // inputs differ in size.
  static absl::StatusOr<StepTimeModel> Fit(const std::vector<Observation>& data,
                                           const FitOptions& options = {});

  StepTimePrediction Predict(const PredictorInput& input) const;

  // This model with `pending` added as if measured at their predicted
  // times (the mean is unchanged; the variance is exact, as a GP's variance
  // does not depend on the values): how a batch is chosen before its
  // results arrive. Keeps the fitted scales.
  StepTimeModel WithPending(const std::vector<PredictorInput>& pending) const;

  size_t measurements() const { return static_cast<size_t>(targets_.size()); }
  const KernelScales& scales() const { return scales_; }
  // One line a performance engineer can read: what the correction learned.
  std::string Describe(const std::vector<std::string>& coordinate_names) const;

 private:
  StepTimeModel() = default;
  Eigen::VectorXd Features(const PredictorInput& input) const;  // z
  Eigen::VectorXd Basis(const Eigen::VectorXd& z) const;        // h(z) = (1, z)
  // Log of the prior (or of 1) that targets are measured against.
  double LogPrior(const PredictorInput& input) const;
  double Kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const;
  // Negative log marginal likelihood (restricted: the trend integrated
  // out) of `scales` on the data; +inf when not positive definite.
  double NegativeLogLikelihood(const KernelScales& scales) const;
  void Solve();  // fills the factorizations for scales_
  static double CrossValidatedScale(const std::vector<Observation>& data, const FitOptions& options,
                                    double z);

  bool has_prior_ = false;
  double prior_log_offset_ = 0;  // mean log10 prior of the data (z's last coordinate is centred)
  double interval_z_ = 1.6448536269514722;
  KernelScales scales_;
  Eigen::MatrixXd inputs_;   // n x d (rows z)
  Eigen::VectorXd targets_;  // log t - log prior
  // Solved state.
  Eigen::LLT<Eigen::MatrixXd> k_factor_;  // of the observations' covariance K
  Eigen::VectorXd alpha_;                 // K⁻¹ y
};

// ---- Baselines the benchmark compares against ------------------------------

// The paper's linear regression, in log space: log t = a + Σ b_d x_d over
// the coordinates (least squares, a small ridge for collinear axes); the
// interval from the residuals' spread.
class LogLinearRegression {
 public:
  static absl::StatusOr<LogLinearRegression> Fit(const std::vector<Observation>& data,
                                                 double interval = 0.90);
  StepTimePrediction Predict(const PredictorInput& input) const;

 private:
  Eigen::VectorXd coefficients_;
  double residual_sd_ = 0;
  double interval_z_ = 1.6448536269514722;
};

// The nearest measured configuration's time (Euclidean in the coordinates);
// the interval from the spread of leave-one-out nearest-neighbour errors.
class NearestMeasured {
 public:
  static absl::StatusOr<NearestMeasured> Fit(const std::vector<Observation>& data,
                                             double interval = 0.90);
  StepTimePrediction Predict(const PredictorInput& input) const;
  // Index into the fitted data of the `count` nearest (closest first).
  std::vector<size_t> Nearest(const PredictorInput& input, size_t count) const;

 private:
  std::vector<Observation> data_;
  double log_error_quantile_ = 0;
};

// The normal quantile of a two-sided central interval (0.90 -> 1.645).
double CentralIntervalZ(double interval);

}  // namespace paradnn::server::prediction

#endif  // PARADNN_SERVER_PREDICTION_STEP_TIME_MODEL_H_
