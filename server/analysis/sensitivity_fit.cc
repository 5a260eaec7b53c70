#include "server/analysis/sensitivity_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace paradnn::server::analysis {
namespace {

// Standardizes `column` in place to z-scores. The spread is the population
// standard deviation (divide by n, numpy's default and sklearn's
// StandardScaler): the standardized coefficients are the same with either
// convention because features and target are scaled alike, and with this
// one SS_tot of the standardized target is exactly n. Returns false when the
// column is constant (nothing to divide by).
bool Standardize(Eigen::VectorXd& column) {
  const double mean = column.mean();
  column.array() -= mean;
  const double std = std::sqrt(column.squaredNorm() / static_cast<double>(column.size()));
  // Relative to the mean's magnitude, so a column of large equal values that
  // rounding made slightly uneven still counts as constant.
  if (!(std > 1e-12 * std::max(1.0, std::abs(mean)))) return false;
  column /= std;
  return true;
}

absl::Status ConstantFeatureError(absl::string_view what, double value, size_t points) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, " is constant (", value, ") over the ", points,
      " selected results; it cannot explain anything: leave it out or select results where it "
      "varies"));
}

// Checks one raw value and applies log2 when asked. `what` names the column
// for messages ("feature 'node'", "the target").
absl::StatusOr<double> Prepare(double raw, bool log2, absl::string_view what, size_t point) {
  if (!std::isfinite(raw)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has a non-finite value (", raw,
                                                   ") at point ", point,
                                                   "; every value must be a finite number"));
  }
  if (!log2) return raw;
  if (raw <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("log2 of ", what, " needs values > 0, got ", raw));
  }
  return std::log2(raw);
}

// InvalidArgument unless there is a feature, and one target value and one
// value per feature for each point.
absl::Status CheckPointShape(const SensitivityInput& input) {
  const size_t n = input.features.size();
  const size_t k = input.feature_names.size();
  if (k == 0) return absl::InvalidArgumentError("sensitivity needs at least one feature");
  if (input.target.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("sensitivity needs one target value per point: ", input.target.size(),
                     " target values for ", n, " feature rows"));
  }
  for (size_t i = 0; i < n; ++i) {
    if (input.features[i].size() != k) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature row ", i, " has ", input.features[i].size(), " values for ", k,
                       " features (", absl::StrJoin(input.feature_names, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

// For `n` points, `k` features and `pairs` interactions: ResourceExhausted
// past kMaxSensitivityTerms; InvalidArgument unless there are more points
// than terms (features + interactions + intercept).
absl::Status CheckTermCount(size_t n, size_t k, size_t pairs) {
  const size_t terms = k + pairs + 1;  // + intercept
  if (k + pairs > kMaxSensitivityTerms) {
    return absl::ResourceExhaustedError(
        absl::StrCat("sensitivity with ", k, " features",
                     pairs > 0 ? absl::StrCat(" and ", pairs, " interactions") : "", " = ",
                     k + pairs, " terms; at most ", kMaxSensitivityTerms, ": name fewer --features",
                     pairs > 0 ? " or drop --interactions" : ""));
  }
  // Strictly more points than terms: with as many, the fit interpolates the
  // points exactly and R² = 1 says nothing.
  if (n <= terms) {
    std::string breakdown = absl::StrCat(k, " features");
    if (pairs > 0) absl::StrAppend(&breakdown, " + ", pairs, " interactions");
    return absl::InvalidArgumentError(absl::StrCat("sensitivity needs more points than terms: ", n,
                                                   " points for ", terms, " terms (", breakdown,
                                                   " + intercept)"));
  }
  return absl::OkStatus();
}

// Sets columns 1..k of `design` to the standardized features.
absl::Status SetFeatureColumns(const SensitivityInput& input, Eigen::MatrixXd* design) {
  const size_t n = input.features.size();
  for (size_t j = 0; j < input.feature_names.size(); ++j) {
    const std::string what = absl::StrCat("feature '", input.feature_names[j], "'");
    Eigen::VectorXd column(n);
    for (size_t i = 0; i < n; ++i) {
      absl::StatusOr<double> value = Prepare(input.features[i][j], input.log2_features, what, i);
      if (!value.ok()) return value.status();
      column(i) = *value;
    }
    const double first = input.features[0][j];
    if (!Standardize(column)) return ConstantFeatureError(what, first, n);
    design->col(j + 1) = column;
  }
  return absl::OkStatus();
}

absl::StatusOr<Eigen::VectorXd> StandardizedTarget(const SensitivityInput& input) {
  const size_t n = input.target.size();
  Eigen::VectorXd y(n);
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<double> value = Prepare(input.target[i], input.log2_target, "the target", i);
    if (!value.ok()) return value.status();
    y(i) = *value;
  }
  if (!Standardize(y)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the target is constant (", input.target[0], ") over the ", n,
        " selected results; there is nothing to explain: select results where the metric varies"));
  }
  return y;
}

// Sets the columns after the features to the standardized products of each
// pair of them, and appends their names ("a×b") to `names`.
absl::Status SetInteractionColumns(const SensitivityInput& input, Eigen::MatrixXd* design,
                                   std::vector<std::string>* names) {
  const size_t n = input.features.size();
  const size_t k = input.feature_names.size();
  size_t col = k + 1;
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = a + 1; b < k; ++b, ++col) {
      // Standardized again so an interaction's weight reads on the same
      // scale as a main effect's.
      Eigen::VectorXd product = design->col(a + 1).cwiseProduct(design->col(b + 1));
      const std::string name = absl::StrCat(input.feature_names[a], "×", input.feature_names[b]);
      const double first = product(0);  // Standardize shifts it
      if (!Standardize(product)) {
        return ConstantFeatureError(absl::StrCat("interaction '", name, "'"), first, n);
      }
      design->col(col) = product;
      names->push_back(name);
    }
  }
  return absl::OkStatus();
}

// Solves the standardized least squares; `names` names design's columns
// after the intercept.
v1::SensitivityResponse SolveWeights(const Eigen::MatrixXd& design, const Eigen::VectorXd& y,
                                     const std::vector<std::string>& names,
                                     const SensitivityInput& input) {
  const Eigen::VectorXd coef = design.colPivHouseholderQr().solve(y);
  const Eigen::VectorXd residual = y - design * coef;
  const double ss_tot = y.squaredNorm();  // y has mean 0 after standardization

  v1::SensitivityResponse response;
  for (size_t j = 0; j < names.size(); ++j) {
    v1::SensitivityWeight* weight = response.add_weights();
    weight->set_term(names[j]);
    weight->set_weight(coef(j + 1));
  }
  response.set_intercept(coef(0));
  response.set_r_squared(1.0 - residual.squaredNorm() / ss_tot);
  response.set_points(static_cast<int64_t>(y.size()));
  response.set_log2_features(input.log2_features);
  response.set_log2_target(input.log2_target);
  return response;
}

}  // namespace

absl::StatusOr<v1::SensitivityResponse> FitSensitivity(const SensitivityInput& input) {
  if (absl::Status s = CheckPointShape(input); !s.ok()) return s;
  const size_t n = input.features.size();
  const size_t k = input.feature_names.size();
  const size_t pairs = input.interactions ? k * (k - 1) / 2 : 0;
  if (absl::Status s = CheckTermCount(n, k, pairs); !s.ok()) return s;

  // Column 0 is the intercept; features follow, interactions last.
  Eigen::MatrixXd design(n, k + pairs + 1);
  design.col(0).setOnes();
  if (absl::Status s = SetFeatureColumns(input, &design); !s.ok()) return s;
  absl::StatusOr<Eigen::VectorXd> y = StandardizedTarget(input);
  if (!y.ok()) return y.status();
  std::vector<std::string> names = input.feature_names;
  if (pairs > 0) {
    if (absl::Status s = SetInteractionColumns(input, &design, &names); !s.ok()) return s;
  }
  return SolveWeights(design, *y, names, input);
}

}  // namespace paradnn::server::analysis
