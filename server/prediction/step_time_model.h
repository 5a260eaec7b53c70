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

#include <map>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/statusor.h"

namespace paradnn::server::prediction {

// The roofs a prior is computed against.
struct PriorRoofs {
  double compute_flops_per_sec = 0;  // calibrated roof of the job's kernel path and dtype
  double memory_bytes_per_sec = 0;   // DRAM plateau
  // The platform's all-reduce roof per rank count (the allreduce family's
  // alpha-beta fit, server/analysis/communication_roofs.h): latency and
  // asymptotic bus bandwidth. A data-parallel configuration's prior adds
  // the roof's time for its gradients; without a roof for its ranks, none.
  struct Allreduce {
    double latency_s = 0;
    double bus_bytes_per_sec = 0;
  };
  std::map<int64_t, Allreduce> allreduce_by_ranks;
};

// The roof's time to all-reduce `bytes` over `ranks`: latency + bus bytes
// (bytes x 2 (ranks - 1) / ranks) / bus bandwidth; 0 for one rank or
// without a roof for `ranks`.
double AllreduceRoofSeconds(double bytes, int64_t ranks, const PriorRoofs& roofs);

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
  // What bounds a fit's cost, whatever the sweep's size: the correction
  // conditions on at most `max_points` measurements (a space-filling subset,
  // SpreadSubset, when there are more; O(n³) time and O(n²) memory), and its
  // scales are searched on the first `max_search_points` of that subset
  // (each of ~100 likelihood evaluations is a factorization). A 12,000-row
  // sweep otherwise took 3.1 GB and minutes. bench/predict_bench.cc prints
  // what the cap costs in accuracy.
  size_t max_points = 512;
  size_t max_search_points = 256;
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

// Indices of up to `count` of `points` (rows) spread over their extent:
// greedy farthest-point order from the point nearest their mean, so any
// prefix of the answer is itself spread out. Deterministic (ties to the
// lower index); O(rows x count x columns) time, O(rows) memory.
std::vector<size_t> SpreadSubset(const Eigen::MatrixXd& points, size_t count);

class StepTimeModel {
 public:
  // InvalidArgument when `data` is empty, has a non-positive time, or its
  // inputs differ in size.
  static absl::StatusOr<StepTimeModel> Fit(const std::vector<Observation>& data,
                                           const FitOptions& options = {});

  StepTimePrediction Predict(const PredictorInput& input) const;
  // Predict(input).seconds alone: O(n) rather than Predict's O(n²).
  double PredictSeconds(const PredictorInput& input) const;

  // Candidates for a batch of measurements (acquisition.cc): each one's
  // prediction given the data and every candidate Add()ed so far as a
  // pending measurement at its predicted time, exactly as WithPending would
  // give it. Adding one costs O(candidates x (n + added)) instead of a
  // refactorization per choice. Valid while the model lives.
  class Batch {
   public:
    size_t size() const { return static_cast<size_t>(latent_variance_.size()); }
    // Predict(candidate i).seconds: pending points do not move the mean.
    double seconds(size_t i) const { return seconds_[i]; }
    // Predict(candidate i).log_sd given the candidates added so far.
    double log_sd(size_t i) const;
    // Conditions every candidate on candidate i measured (at most
    // `max_added` of Candidates' times).
    void Add(size_t i);

   private:
    friend class StepTimeModel;
    const StepTimeModel* model_ = nullptr;
    Eigen::MatrixXd features_;         // C x d: rows z of the candidates
    Eigen::MatrixXd solved_;           // (n + max_added) x C: L⁻¹ k(conditioning points, c)
    Eigen::VectorXd latent_variance_;  // of g at each candidate, given the above
    std::vector<double> seconds_;
    Eigen::Index rows_ = 0;  // rows of solved_ in use: n + added
  };
  Batch Candidates(const std::vector<PredictorInput>& candidates, size_t max_added) const;

  // This model with `pending` added as if measured at their predicted
  // times (the mean is unchanged; the variance is exact, as a GP's variance
  // does not depend on the values): how a batch is chosen before its
  // results arrive. Keeps the fitted scales.
  StepTimeModel WithPending(const std::vector<PredictorInput>& pending) const;

  // Measurements the correction conditions on (at most FitOptions.max_points)
  // and measurements it was given.
  size_t measurements() const { return static_cast<size_t>(targets_.size()); }
  size_t measurements_given() const { return given_; }
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
  // Kernel(z, every row of `rows`), without a per-row allocation.
  Eigen::VectorXd KernelRows(const Eigen::MatrixXd& rows, const Eigen::VectorXd& z) const;
  // Negative log marginal likelihood (the trend integrated out) of
  // `scales` on `inputs` (rows z) and their `targets`; +inf when not
  // positive definite.
  static double NegativeLogLikelihood(const KernelScales& scales, const Eigen::MatrixXd& inputs,
                                      const Eigen::VectorXd& targets);
  // The scales maximizing the likelihood of `targets` at `inputs`, by a
  // coordinate search of `rounds` from `*scales`.
  static void SearchScales(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& targets,
                           int rounds, KernelScales* scales);
  void Solve();  // fills the factorizations for scales_
  static double CrossValidatedScale(const std::vector<Observation>& data, const FitOptions& options,
                                    double z);

  bool has_prior_ = false;
  double prior_log_offset_ = 0;  // mean log10 prior of the data (z's last coordinate is centred)
  double interval_z_ = 1.6448536269514722;
  KernelScales scales_;
  size_t given_ = 0;         // measurements given to Fit
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
