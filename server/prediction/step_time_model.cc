#include "server/prediction/step_time_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paradnn::server::prediction {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Prior spread of the trend (Bayesian linear regression inside the GP): the
// intercept in log t (a factor e^2 ≈ 7 off the prior), each slope across
// its axis's range ([0, 1]).
constexpr double kInterceptSd = 2.0;
constexpr double kSlopeSd = 1.0;
// Bounds of the search (coordinates are in [0, 1]; times in log units).
constexpr double kMinLength = 0.05, kMaxLength = 20;
constexpr double kMinSignal = 0.01, kMaxSignal = 5;
constexpr double kMinNoise = 0.005, kMaxNoise = 1;

absl::Status CheckData(const std::vector<Observation>& data) {
  if (data.empty()) return absl::InvalidArgumentError("no measurements to fit");
  const size_t dims = data.front().input.coordinates.size();
  for (size_t i = 0; i < data.size(); ++i) {
    if (!(data[i].seconds > 0) || !std::isfinite(data[i].seconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("measurement ", i, ": step time ", data[i].seconds, " is not > 0"));
    }
    if (data[i].input.coordinates.size() != dims) {
      return absl::InvalidArgumentError(absl::StrCat(
          "measurement ", i, ": ", data[i].input.coordinates.size(), " coordinates, not ", dims));
    }
  }
  return absl::OkStatus();
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double weight = position - static_cast<double>(below);
  return values[below] * (1 - weight) + values[above] * weight;
}

StepTimePrediction FromLog(double mean, double sd, double z) {
  StepTimePrediction p;
  p.seconds = std::exp(mean);
  p.low = std::exp(mean - z * sd);
  p.high = std::exp(mean + z * sd);
  p.log_sd = sd;
  return p;
}

}  // namespace

double CentralIntervalZ(double interval) {
  double low = 0, high = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = (low + high) / 2;
    (std::erf(mid / std::sqrt(2.0)) < interval ? low : high) = mid;
  }
  return (low + high) / 2;
}

double PriorStepSeconds(double executed_flops, double bytes_per_step, const PriorRoofs& roofs) {
  if (!(roofs.compute_flops_per_sec > 0) || !(roofs.memory_bytes_per_sec > 0)) return 0;
  const double seconds = std::max(executed_flops, 0.0) / roofs.compute_flops_per_sec +
                         std::max(bytes_per_step, 0.0) / roofs.memory_bytes_per_sec;
  return seconds > 0 && std::isfinite(seconds) ? seconds : 0;
}

double AllreduceRoofSeconds(double bytes, int64_t ranks, const PriorRoofs& roofs) {
  if (ranks < 2 || !(bytes > 0)) return 0;
  const auto roof = roofs.allreduce_by_ranks.find(ranks);
  if (roof == roofs.allreduce_by_ranks.end() || !(roof->second.bus_bytes_per_sec > 0)) return 0;
  const double n = static_cast<double>(ranks);
  return std::max(roof->second.latency_s, 0.0) +
         bytes * 2 * (n - 1) / n / roof->second.bus_bytes_per_sec;
}

// ---- StepTimeModel ----------------------------------------------------------

Eigen::VectorXd StepTimeModel::Features(const PredictorInput& input) const {
  const size_t dims = input.coordinates.size();
  Eigen::VectorXd z(dims + (has_prior_ ? 1 : 0));
  for (size_t d = 0; d < dims; ++d) z(static_cast<Eigen::Index>(d)) = input.coordinates[d];
  // log prior in decades: a length scale of 1 is a factor of 10 in work.
  if (has_prior_) {
    z(static_cast<Eigen::Index>(dims)) =
        std::log10(std::max(input.prior_seconds, 1e-12)) - prior_log_offset_;
  }
  return z;
}

Eigen::VectorXd StepTimeModel::Basis(const Eigen::VectorXd& z) const {
  Eigen::VectorXd h(z.size() + 1);
  h(0) = 1;
  h.tail(z.size()) = z;
  return h;
}

double StepTimeModel::Kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const {
  double sum = 0;
  for (Eigen::Index d = 0; d < a.size(); ++d) {
    const double u = (a(d) - b(d)) / scales_.length[static_cast<size_t>(d)];
    sum += u * u;
  }
  const Eigen::VectorXd ha = Basis(a), hb = Basis(b);
  double trend = kInterceptSd * kInterceptSd * ha(0) * hb(0);
  for (Eigen::Index d = 1; d < ha.size(); ++d) trend += kSlopeSd * kSlopeSd * ha(d) * hb(d);
  return scales_.signal_sd * scales_.signal_sd * std::exp(-0.5 * sum) + trend;
}

Eigen::VectorXd StepTimeModel::KernelRows(const Eigen::MatrixXd& rows,
                                          const Eigen::VectorXd& z) const {
  Eigen::VectorXd inverse_length(z.size());
  for (Eigen::Index d = 0; d < z.size(); ++d) {
    inverse_length(d) = 1 / scales_.length[static_cast<size_t>(d)];
  }
  const Eigen::RowVectorXd scaled_z = z.cwiseProduct(inverse_length).transpose();
  const Eigen::VectorXd squared =
      ((rows * inverse_length.asDiagonal()).rowwise() - scaled_z).rowwise().squaredNorm();
  // The trend's part: kInterceptSd² + kSlopeSd² z·x, as Kernel computes it.
  const Eigen::VectorXd trend =
      (kSlopeSd * kSlopeSd * (rows * z)).array() + kInterceptSd * kInterceptSd;
  return scales_.signal_sd * scales_.signal_sd * (-0.5 * squared.array()).exp().matrix() + trend;
}

namespace {

// The covariance of the observations under `scales` (kernel + trend + noise).
Eigen::MatrixXd Covariance(const Eigen::MatrixXd& inputs, const KernelScales& scales) {
  const Eigen::Index n = inputs.rows();
  Eigen::MatrixXd scaled = inputs;
  for (Eigen::Index d = 0; d < inputs.cols(); ++d) {
    scaled.col(d) /= scales.length[static_cast<size_t>(d)];
  }
  const Eigen::VectorXd norms = scaled.rowwise().squaredNorm();
  Eigen::MatrixXd distance = (-2.0 * scaled * scaled.transpose()).colwise() + norms;
  distance.rowwise() += norms.transpose();
  Eigen::MatrixXd k =
      (scales.signal_sd * scales.signal_sd) * (-0.5 * distance.array().max(0.0)).exp().matrix();
  Eigen::MatrixXd basis(n, inputs.cols() + 1);
  basis.col(0).setConstant(kInterceptSd);
  basis.rightCols(inputs.cols()) = inputs * kSlopeSd;
  k += basis * basis.transpose();
  k.diagonal().array() += scales.noise_sd * scales.noise_sd;
  return k;
}

}  // namespace

double StepTimeModel::NegativeLogLikelihood(const KernelScales& scales,
                                            const Eigen::MatrixXd& inputs,
                                            const Eigen::VectorXd& targets) {
  Eigen::LLT<Eigen::MatrixXd> factor(Covariance(inputs, scales));
  if (factor.info() != Eigen::Success) return kInfinity;
  const Eigen::VectorXd alpha = factor.solve(targets);
  const double log_det = 2 * factor.matrixLLT().diagonal().array().log().sum();
  const double value = 0.5 * targets.dot(alpha) + 0.5 * log_det;
  return std::isfinite(value) ? value : kInfinity;
}

void StepTimeModel::Solve() {
  k_factor_.compute(Covariance(inputs_, scales_));
  alpha_ = k_factor_.solve(targets_);
}

// What the predictive sd is multiplied by so that the intervals of models
// fitted without each fold (kCalibrationFolds, points i % k) cover
// `options.interval` of the fold's measurements. The fold models fit their
// own scales: leave-one-out with the full fit's scales was optimistic (its
// 90 % intervals covered 74 % of held-out configurations).
double StepTimeModel::CrossValidatedScale(const std::vector<Observation>& data,
                                          const FitOptions& options, double z) {
  FitOptions fold_options = options;
  fold_options.calibrate = false;
  std::vector<double> standardized;
  for (size_t fold = 0; fold < kCalibrationFolds; ++fold) {
    std::vector<Observation> train;
    std::vector<const Observation*> test;
    for (size_t i = 0; i < data.size(); ++i) {
      if (i % kCalibrationFolds == fold) {
        test.push_back(&data[i]);
      } else {
        train.push_back(data[i]);
      }
    }
    if (test.empty()) continue;
    absl::StatusOr<StepTimeModel> model = Fit(train, fold_options);
    if (!model.ok()) continue;
    for (const Observation* o : test) {
      const StepTimePrediction p = model->Predict(o->input);
      if (p.log_sd > 0) {
        standardized.push_back(std::fabs(std::log(o->seconds / p.seconds)) / p.log_sd);
      }
    }
  }
  if (standardized.empty()) return 1;
  // The split-conformal rank, ceil((n + 1) q): with few measurements the
  // plain q-quantile of n residuals undercovers (14 CNN points: 63 %).
  std::sort(standardized.begin(), standardized.end());
  const double n = static_cast<double>(standardized.size());
  const auto rank = static_cast<size_t>(std::ceil((n + 1) * options.interval));
  const double q = standardized[std::min(standardized.size(), std::max<size_t>(rank, 1)) - 1];
  return std::max(1.0, q / z);
}

void StepTimeModel::SearchScales(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& targets,
                                 int rounds, KernelScales* s) {
  double best = NegativeLogLikelihood(*s, inputs, targets);
  // Coordinate search on log scales, steps shrinking each round: every
  // candidate is evaluated in a fixed order, so a fit is deterministic.
  auto try_value = [&](double* value, double factor, double low, double high) {
    const double old = *value;
    const double candidate = std::clamp(old * factor, low, high);
    if (candidate == old) return;
    *value = candidate;
    const double score = NegativeLogLikelihood(*s, inputs, targets);
    if (score < best) {
      best = score;
    } else {
      *value = old;
    }
  };
  double step = 2.0;
  for (int round = 0; round < rounds; ++round) {
    for (double factor : {step, 1 / step}) {
      for (double& length : s->length) try_value(&length, factor, kMinLength, kMaxLength);
      try_value(&s->signal_sd, factor, kMinSignal, kMaxSignal);
      try_value(&s->noise_sd, factor, kMinNoise, kMaxNoise);
    }
    step = std::sqrt(step);
  }
}

std::vector<size_t> SpreadSubset(const Eigen::MatrixXd& points, size_t count) {
  const auto rows = static_cast<size_t>(points.rows());
  count = std::min(count, rows);
  std::vector<size_t> chosen;
  if (count == 0) return chosen;
  chosen.reserve(count);
  // Written out rather than with Eigen's minCoeff/maxCoeff, whose tie order
  // is not documented.
  // The first: the point nearest the mean. Then `nearest` holds each
  // point's squared distance to the nearest chosen one (-1 once chosen).
  const Eigen::RowVectorXd mean = points.colwise().mean();
  Eigen::VectorXd nearest = (points.rowwise() - mean).rowwise().squaredNorm();
  size_t next = 0;
  for (size_t i = 1; i < rows; ++i) {
    if (nearest(static_cast<Eigen::Index>(i)) < nearest(static_cast<Eigen::Index>(next))) next = i;
  }
  nearest.setConstant(std::numeric_limits<double>::infinity());
  for (;;) {
    chosen.push_back(next);
    const auto row = static_cast<Eigen::Index>(next);
    nearest(row) = -1;
    if (chosen.size() == count) break;
    const Eigen::RowVectorXd at = points.row(row);
    next = rows;
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      if (nearest(i) < 0) continue;
      nearest(i) = std::min(nearest(i), (points.row(i) - at).squaredNorm());
      // The farthest from every chosen point; ties to the lower index.
      if (next == rows || nearest(i) > nearest(static_cast<Eigen::Index>(next))) {
        next = static_cast<size_t>(i);
      }
    }
  }
  return chosen;
}

namespace {

// 0, 1, ..., count - 1.
std::vector<size_t> FirstIndices(size_t count) {
  std::vector<size_t> all(count);
  std::iota(all.begin(), all.end(), 0);
  return all;
}

}  // namespace

absl::StatusOr<StepTimeModel> StepTimeModel::Fit(const std::vector<Observation>& data,
                                                 const FitOptions& options) {
  if (absl::Status ok = CheckData(data); !ok.ok()) return ok;
  if (options.max_points < 1 || options.max_search_points < 1) {
    return absl::InvalidArgumentError("max_points and max_search_points must be >= 1");
  }
  StepTimeModel model;
  model.given_ = data.size();
  model.interval_z_ = CentralIntervalZ(options.interval);
  model.has_prior_ = std::all_of(data.begin(), data.end(),
                                 [](const Observation& o) { return o.input.prior_seconds > 0; });
  if (model.has_prior_) {
    double sum = 0;
    for (const Observation& o : data) sum += std::log10(o.input.prior_seconds);
    model.prior_log_offset_ = sum / static_cast<double>(data.size());
  }
  const Eigen::Index dims =
      static_cast<Eigen::Index>(data.front().input.coordinates.size()) + (model.has_prior_ ? 1 : 0);
  Eigen::MatrixXd features(static_cast<Eigen::Index>(data.size()), dims);
  for (size_t i = 0; i < data.size(); ++i) {
    features.row(static_cast<Eigen::Index>(i)) = model.Features(data[i].input).transpose();
  }
  // Up to max_points measurements spread over the data (all of them, in
  // their order, when there are no more).
  const std::vector<size_t> kept = data.size() > options.max_points
                                       ? SpreadSubset(features, options.max_points)
                                       : FirstIndices(data.size());
  const auto n = static_cast<Eigen::Index>(kept.size());
  model.inputs_.resize(n, dims);
  model.targets_.resize(n);
  std::vector<Observation> kept_data;
  kept_data.reserve(kept.size());
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& o = data[kept[static_cast<size_t>(i)]];
    model.inputs_.row(i) = features.row(static_cast<Eigen::Index>(kept[static_cast<size_t>(i)]));
    const double prior = model.has_prior_ ? o.input.prior_seconds : 1;
    model.targets_(i) = std::log(o.seconds / prior);
    kept_data.push_back(o);
  }
  // The scales are searched on a spread subset of those.
  const std::vector<size_t> searched = kept.size() > options.max_search_points
                                           ? SpreadSubset(model.inputs_, options.max_search_points)
                                           : FirstIndices(kept.size());
  Eigen::MatrixXd search_inputs(static_cast<Eigen::Index>(searched.size()), dims);
  Eigen::VectorXd search_targets(static_cast<Eigen::Index>(searched.size()));
  for (size_t i = 0; i < searched.size(); ++i) {
    search_inputs.row(static_cast<Eigen::Index>(i)) =
        model.inputs_.row(static_cast<Eigen::Index>(searched[i]));
    search_targets(static_cast<Eigen::Index>(i)) =
        model.targets_(static_cast<Eigen::Index>(searched[i]));
  }
  const double mean = model.targets_.mean();
  const double spread =
      std::sqrt((model.targets_.array() - mean).square().sum() / static_cast<double>(n));

  KernelScales& s = model.scales_;
  s.length.assign(static_cast<size_t>(dims), 0.5);
  s.signal_sd = std::clamp(spread, 0.1, kMaxSignal);
  s.noise_sd = 0.05;
  SearchScales(search_inputs, search_targets, options.search_rounds, &s);
  model.Solve();
  if (model.k_factor_.info() != Eigen::Success) {
    return absl::InternalError("the fitted covariance is not positive definite");
  }
  if (options.calibrate && kept_data.size() >= kMinCalibrationPoints) {
    s.interval_scale = CrossValidatedScale(kept_data, options, model.interval_z_);
  }
  return model;
}

double StepTimeModel::LogPrior(const PredictorInput& input) const {
  if (!has_prior_) return 0;
  // An input without a prior (no roofs) stands at the data's typical prior.
  return input.prior_seconds > 0 ? std::log(input.prior_seconds)
                                 : prior_log_offset_ * std::log(10.0);
}

StepTimeModel StepTimeModel::WithPending(const std::vector<PredictorInput>& pending) const {
  StepTimeModel model = *this;
  const Eigen::Index n = inputs_.rows();
  const Eigen::Index extra = static_cast<Eigen::Index>(pending.size());
  model.inputs_.conservativeResize(n + extra, inputs_.cols());
  model.targets_.conservativeResize(n + extra);
  for (Eigen::Index i = 0; i < extra; ++i) {
    const PredictorInput& input = pending[static_cast<size_t>(i)];
    PredictorInput effective = input;
    effective.prior_seconds = std::exp(LogPrior(input));
    model.inputs_.row(n + i) = Features(effective).transpose();
    model.targets_(n + i) = std::log(Predict(input).seconds) - LogPrior(input);
  }
  model.Solve();
  return model;
}

StepTimePrediction StepTimeModel::Predict(const PredictorInput& input) const {
  PredictorInput effective = input;
  if (has_prior_) effective.prior_seconds = std::exp(LogPrior(input));
  const Eigen::VectorXd z = Features(effective);
  const Eigen::VectorXd cross = KernelRows(inputs_, z);
  const double mean = cross.dot(alpha_);
  const Eigen::VectorXd v = k_factor_.matrixL().solve(cross);
  const double variance =
      std::max(Kernel(z, z) - v.squaredNorm(), 0.0) + scales_.noise_sd * scales_.noise_sd;
  return FromLog(LogPrior(input) + mean, scales_.interval_scale * std::sqrt(variance), interval_z_);
}

double StepTimeModel::PredictSeconds(const PredictorInput& input) const {
  PredictorInput effective = input;
  if (has_prior_) effective.prior_seconds = std::exp(LogPrior(input));
  return std::exp(LogPrior(input) + KernelRows(inputs_, Features(effective)).dot(alpha_));
}

StepTimeModel::Batch StepTimeModel::Candidates(const std::vector<PredictorInput>& candidates,
                                               size_t max_added) const {
  Batch batch;
  batch.model_ = this;
  const Eigen::Index n = inputs_.rows();
  const auto count = static_cast<Eigen::Index>(candidates.size());
  batch.features_.resize(count, inputs_.cols());
  Eigen::MatrixXd cross(n, count);
  batch.latent_variance_.resize(count);
  batch.seconds_.resize(candidates.size());
  for (Eigen::Index c = 0; c < count; ++c) {
    const PredictorInput& input = candidates[static_cast<size_t>(c)];
    PredictorInput effective = input;
    if (has_prior_) effective.prior_seconds = std::exp(LogPrior(input));
    const Eigen::VectorXd z = Features(effective);
    batch.features_.row(c) = z.transpose();
    cross.col(c) = KernelRows(inputs_, z);
    batch.seconds_[static_cast<size_t>(c)] = std::exp(LogPrior(input) + cross.col(c).dot(alpha_));
    batch.latent_variance_(c) = Kernel(z, z);
  }
  batch.solved_.resize(n + static_cast<Eigen::Index>(max_added), count);
  // One blocked triangular solve for every candidate (BLAS-3), not one each.
  batch.solved_.topRows(n) = k_factor_.matrixL().solve(cross);
  batch.latent_variance_ -= batch.solved_.topRows(n).colwise().squaredNorm().transpose();
  batch.rows_ = n;
  return batch;
}

double StepTimeModel::Batch::log_sd(size_t i) const {
  const double noise = model_->scales_.noise_sd;
  const double variance =
      std::max(latent_variance_(static_cast<Eigen::Index>(i)), 0.0) + noise * noise;
  return model_->scales_.interval_scale * std::sqrt(variance);
}

void StepTimeModel::Batch::Add(size_t i) {
  if (rows_ >= solved_.rows()) return;  // past max_added: nothing more is conditioned on
  const auto j = static_cast<Eigen::Index>(i);
  const double noise = model_->scales_.noise_sd;
  // The Cholesky factor extended by the pending point j: its diagonal is the
  // sd of a measurement there given everything before it.
  const double pivot = std::sqrt(std::max(latent_variance_(j), 0.0) + noise * noise);
  // k(c, j) for every candidate c, as Kernel computes it.
  const Eigen::VectorXd kernel = model_->KernelRows(features_, features_.row(j).transpose());
  const Eigen::VectorXd row =
      (kernel - solved_.topRows(rows_).transpose() * solved_.col(j).head(rows_)) / pivot;
  solved_.row(rows_) = row.transpose();
  ++rows_;
  latent_variance_ -= row.cwiseAbs2();
}

std::string StepTimeModel::Describe(const std::vector<std::string>& coordinate_names) const {
  std::string text = absl::StrFormat("%s x learned correction, %d measurements",
                                     has_prior_ ? "roofline prior" : "no prior",
                                     static_cast<int>(std::max(given_, measurements())));
  if (given_ > measurements()) {
    absl::StrAppend(&text, absl::StrFormat(" (the correction conditions on %d spread over them)",
                                           static_cast<int>(measurements())));
  }
  absl::StrAppend(&text, "; length scales");
  for (size_t d = 0; d < scales_.length.size(); ++d) {
    const std::string name = d < coordinate_names.size() ? coordinate_names[d]
                             : has_prior_                ? "log10 prior"
                                                         : absl::StrCat("z", d);
    absl::StrAppend(&text, " ", name, " ", absl::StrFormat("%.2g", scales_.length[d]));
  }
  absl::StrAppend(&text, absl::StrFormat("; correction sd %.2f, noise %.1f %%, intervals x%.2f",
                                         scales_.signal_sd, 100 * (std::exp(scales_.noise_sd) - 1),
                                         scales_.interval_scale));
  return text;
}

// ---- Baselines ----------------------------------------------------------------

absl::StatusOr<LogLinearRegression> LogLinearRegression::Fit(const std::vector<Observation>& data,
                                                             double interval) {
  if (absl::Status ok = CheckData(data); !ok.ok()) return ok;
  const Eigen::Index n = static_cast<Eigen::Index>(data.size());
  const Eigen::Index p = static_cast<Eigen::Index>(data.front().input.coordinates.size()) + 1;
  Eigen::MatrixXd design(n, p);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& o = data[static_cast<size_t>(i)];
    design(i, 0) = 1;
    for (Eigen::Index d = 1; d < p; ++d)
      design(i, d) = o.input.coordinates[static_cast<size_t>(d - 1)];
    y(i) = std::log(o.seconds);
  }
  Eigen::MatrixXd normal = design.transpose() * design;
  normal.diagonal().array() += 1e-6;
  LogLinearRegression model;
  model.interval_z_ = CentralIntervalZ(interval);
  model.coefficients_ = normal.ldlt().solve(design.transpose() * y);
  const Eigen::VectorXd residual = y - design * model.coefficients_;
  const double dof = static_cast<double>(std::max<Eigen::Index>(n - p, 1));
  model.residual_sd_ = std::sqrt(residual.squaredNorm() / dof);
  return model;
}

StepTimePrediction LogLinearRegression::Predict(const PredictorInput& input) const {
  double mean = coefficients_(0);
  for (Eigen::Index d = 1; d < coefficients_.size(); ++d) {
    mean += coefficients_(d) * input.coordinates[static_cast<size_t>(d - 1)];
  }
  return FromLog(mean, residual_sd_, interval_z_);
}

namespace {

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t d = 0; d < a.size(); ++d) sum += (a[d] - b[d]) * (a[d] - b[d]);
  return sum;
}

}  // namespace

absl::StatusOr<NearestMeasured> NearestMeasured::Fit(const std::vector<Observation>& data,
                                                     double interval) {
  if (absl::Status ok = CheckData(data); !ok.ok()) return ok;
  NearestMeasured model;
  model.data_ = data;
  std::vector<double> errors;
  for (size_t i = 0; i < data.size() && data.size() > 1; ++i) {
    size_t nearest = i;
    double best = kInfinity;
    for (size_t j = 0; j < data.size(); ++j) {
      const double distance = Distance(data[i].input.coordinates, data[j].input.coordinates);
      if (j != i && distance < best) {
        best = distance;
        nearest = j;
      }
    }
    errors.push_back(std::fabs(std::log(data[i].seconds / data[nearest].seconds)));
  }
  model.log_error_quantile_ = Quantile(errors, interval);
  return model;
}

std::vector<size_t> NearestMeasured::Nearest(const PredictorInput& input, size_t count) const {
  std::vector<size_t> order(data_.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> distance(data_.size());
  for (size_t i = 0; i < data_.size(); ++i) {
    distance[i] = Distance(input.coordinates, data_[i].input.coordinates);
  }
  count = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&](size_t a, size_t b) {
                      return distance[a] != distance[b] ? distance[a] < distance[b] : a < b;
                    });
  order.resize(count);
  return order;
}

StepTimePrediction NearestMeasured::Predict(const PredictorInput& input) const {
  const size_t nearest = Nearest(input, 1).front();
  StepTimePrediction p;
  p.seconds = data_[nearest].seconds;
  p.low = p.seconds * std::exp(-log_error_quantile_);
  p.high = p.seconds * std::exp(log_error_quantile_);
  p.log_sd = log_error_quantile_;
  return p;
}

}  // namespace paradnn::server::prediction
