#include "server/analysis/allreduce_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/math/distributions/students_t.hpp"
#include "model/families/allreduce.h"

namespace paradnn::server::analysis {
namespace {

constexpr int kAlpha = 0;      // column of the design matrix: 1 / t
constexpr int kBandwidth = 1;  // busbytes / t, whose coefficient is 1 / beta
constexpr double kTail = 0.025;

// A least-squares fit of ones on some columns of the design (each row one
// run divided by its time, so the residuals are relative errors).
struct Solution {
  bool ok = false;
  Eigen::VectorXd coef;    // by the columns asked for
  Eigen::MatrixXd normal;  // (A^T A)^-1: the covariance over the residual variance
  double rss = 0;
};

Solution Solve(const Eigen::MatrixXd& design, const std::vector<int>& columns) {
  const Eigen::Index k = static_cast<Eigen::Index>(columns.size());
  Eigen::MatrixXd a(design.rows(), k);
  Eigen::VectorXd scale(k);
  // Columns scaled to unit norm: 1/t (~1e4) and bytes/t (~1e10) side by
  // side would leave A^T A near singular in double precision.
  for (Eigen::Index j = 0; j < k; ++j) {
    a.col(j) = design.col(columns[static_cast<size_t>(j)]);
    scale(j) = a.col(j).norm();
    if (!(scale(j) > 0)) return {};
    a.col(j) /= scale(j);
  }
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(a.rows());
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  if (qr.rank() < k) return {};
  const Eigen::VectorXd scaled = qr.solve(ones);
  Solution out;
  out.ok = true;
  out.rss = (a * scaled - ones).squaredNorm();
  out.coef = scaled.cwiseQuotient(scale);
  out.normal = (a.transpose() * a).inverse().cwiseQuotient(scale * scale.transpose());
  return out;
}

// The half-widths of the 95 % intervals of `solution`'s coefficients; empty
// without degrees of freedom left.
std::vector<double> HalfWidths(const Solution& solution, int runs) {
  const int dof = runs - static_cast<int>(solution.coef.size());
  if (dof < 1) return {};
  const double variance = solution.rss / dof;
  const double q =
      boost::math::quantile(boost::math::complement(boost::math::students_t(dof), kTail));
  std::vector<double> half;
  half.reserve(static_cast<size_t>(solution.coef.size()));
  for (Eigen::Index j = 0; j < solution.coef.size(); ++j) {
    half.push_back(q * std::sqrt(variance * solution.normal(j, j)));
  }
  return half;
}

void SetAlpha(double alpha, const std::vector<double>& half, size_t index,
              v1::AllreduceRoof* roof) {
  roof->set_alpha_s(alpha);
  if (index >= half.size()) return;
  roof->set_alpha_low_s(std::max(0.0, alpha - half[index]));
  roof->set_alpha_high_s(alpha + half[index]);
}

// beta = 1 / g; g's interval maps to beta's, unbounded above when it
// reaches 0 (the data cannot rule out an infinitely fast bus).
void SetBandwidth(double g, const std::vector<double>& half, size_t index,
                  v1::AllreduceRoof* roof) {
  roof->set_beta_bytes_per_sec(1 / g);
  if (index >= half.size()) return;
  roof->set_beta_low_bytes_per_sec(1 / (g + half[index]));
  if (g - half[index] > 0) roof->set_beta_high_bytes_per_sec(1 / (g - half[index]));
}

// Of the two fits on a bound (alpha = 0; no bandwidth term), the better one
// whose free parameter is feasible: with two parameters and sign bounds,
// the constrained optimum is on one of them when the unconstrained one is
// not feasible.
void FitOnBound(const Eigen::MatrixXd& design, int runs, double alpha, double g,
                v1::AllreduceRoof* roof) {
  const Solution bandwidth_only = Solve(design, {kBandwidth});
  const Solution latency_only = Solve(design, {kAlpha});
  const bool bandwidth_ok = bandwidth_only.ok && bandwidth_only.coef(0) > 0;
  const bool latency_ok = latency_only.ok && latency_only.coef(0) >= 0;
  const std::string unconstrained =
      absl::StrFormat("the unconstrained fit gave alpha %.3g s, 1/beta %.3g s/B", alpha, g);
  if (bandwidth_ok && (!latency_ok || bandwidth_only.rss <= latency_only.rss)) {
    roof->set_alpha_s(0);
    SetBandwidth(bandwidth_only.coef(0), HalfWidths(bandwidth_only, runs), 0, roof);
    roof->set_constraint(absl::StrCat("alpha held at 0 (", unconstrained,
                                      "): no latency resolved beside the bandwidth term"));
    return;
  }
  if (latency_ok) {
    SetAlpha(latency_only.coef(0), HalfWidths(latency_only, runs), 0, roof);
    roof->set_beta_bytes_per_sec(0);
    roof->set_constraint(absl::StrCat("beta unresolved (", unconstrained,
                                      "): the time does not grow with the message over the "
                                      "measured sizes, latency-bound"));
    return;
  }
  roof->set_fitted(false);
  roof->set_note(absl::StrCat("no fit with alpha >= 0 and beta > 0 (", unconstrained, ")"));
}

}  // namespace

double BusBytes(double bytes, int32_t ranks) { return bytes * model::AllReduceBusFactor(ranks); }

v1::AllreduceRoof FitAllreduceRoof(const std::vector<AllreduceSample>& samples, int32_t ranks) {
  v1::AllreduceRoof roof;
  roof.set_ranks(ranks);
  std::vector<AllreduceSample> kept;
  std::set<double> sizes;
  for (const AllreduceSample& s : samples) {
    if (!(s.time_s > 0) || !std::isfinite(s.time_s) || !(s.bytes >= 0) || !std::isfinite(s.bytes))
      continue;
    kept.push_back(s);
    sizes.insert(s.bytes);
  }
  roof.set_sizes(static_cast<int32_t>(sizes.size()));
  roof.set_runs(static_cast<int32_t>(kept.size()));
  if (sizes.size() < 2) {
    roof.set_note(absl::StrCat("no fit: it needs runs at two or more message sizes (has ",
                               kept.size(), " runs at ", sizes.size(),
                               " size); sweep params.bytes, e.g. [1024, 65536, 4194304]"));
    return roof;
  }
  const int runs = static_cast<int>(kept.size());
  Eigen::MatrixXd design(runs, 2);
  for (int i = 0; i < runs; ++i) {
    design(i, kAlpha) = 1 / kept[i].time_s;
    design(i, kBandwidth) = BusBytes(kept[i].bytes, ranks) / kept[i].time_s;
  }
  roof.set_fitted(true);
  if (ranks <= 1) {
    const Solution latency = Solve(design, {kAlpha});
    SetAlpha(latency.coef(0), HalfWidths(latency, runs), 0, &roof);
    roof.set_note("one rank: no bytes cross between ranks, so the time is latency alone");
  } else {
    const Solution both = Solve(design, {kAlpha, kBandwidth});
    if (both.ok && both.coef(kAlpha) >= 0 && both.coef(kBandwidth) > 0) {
      const std::vector<double> half = HalfWidths(both, runs);
      SetAlpha(both.coef(kAlpha), half, kAlpha, &roof);
      SetBandwidth(both.coef(kBandwidth), half, kBandwidth, &roof);
    } else if (both.ok) {
      FitOnBound(design, runs, both.coef(kAlpha), both.coef(kBandwidth), &roof);
    } else {
      roof.set_fitted(false);
      roof.set_note("no fit: the runs do not determine both parameters");
    }
  }
  if (!roof.fitted()) return roof;
  double squares = 0;
  for (const AllreduceSample& s : kept) {
    const double relative = (s.time_s - RoofSeconds(roof, s.bytes, ranks)) / s.time_s;
    squares += relative * relative;
  }
  roof.set_relative_residual(std::sqrt(squares / runs));
  return roof;
}

double RoofSeconds(const v1::AllreduceRoof& roof, double bytes, int32_t ranks, int32_t messages) {
  if (!roof.fitted()) return 0;
  double seconds = roof.alpha_s() * std::max<int32_t>(messages, 1);
  if (roof.beta_bytes_per_sec() > 0) seconds += BusBytes(bytes, ranks) / roof.beta_bytes_per_sec();
  return seconds;
}

}  // namespace paradnn::server::analysis
