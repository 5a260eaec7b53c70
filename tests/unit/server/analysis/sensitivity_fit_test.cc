#include "server/analysis/sensitivity_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/server/analysis/analysis_math_test_support.h"

namespace paradnn::server::analysis {
namespace {

using testing_support::ExpectInvalid;

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// Population standard deviation: the expected standardized weights below
// are coef × std(feature) / std(target), a ratio that is the same whichever
// convention the implementation uses, as long as both use the same one.
double Std(const std::vector<double>& v) {
  const double mean = Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size()));
}

std::vector<double> Column(const std::vector<std::vector<double>>& rows, size_t j) {
  std::vector<double> out;
  for (const auto& row : rows) out.push_back(row[j]);
  return out;
}

// ---- Sensitivity ----------------------------------------------------------

// `n` points of three features drawn uniformly from different ranges, so
// their spreads (and hence standardized weights) differ.
std::vector<std::vector<double>> RandomFeatures(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> a(0, 10), b(-5, 5), c(100, 400);
  std::vector<std::vector<double>> rows;
  for (size_t i = 0; i < n; ++i) rows.push_back({a(rng), b(rng), c(rng)});
  return rows;
}

TEST(SensitivityTest, RecoversStandardizedWeightsOfALinearTarget) {
  SensitivityInput in;
  in.feature_names = {"a", "b", "c"};
  in.features = RandomFeatures(50, 1);
  const double coef[] = {3, -2, 0.5};
  for (const auto& row : in.features)
    in.target.push_back(7 + 3 * row[0] - 2 * row[1] + 0.5 * row[2]);
  absl::StatusOr<v1::SensitivityResponse> r = FitSensitivity(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->weights_size(), 3);
  const double sy = Std(in.target);
  for (size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(r->weights(j).term(), in.feature_names[j]);
    EXPECT_NEAR(r->weights(j).weight(), coef[j] * Std(Column(in.features, j)) / sy, 1e-9);
  }
  EXPECT_LT(r->weights(1).weight(), 0);
  EXPECT_NEAR(r->intercept(), 0, 1e-9);
  EXPECT_GT(r->r_squared(), 0.999999);
  EXPECT_EQ(r->points(), 50);
  EXPECT_FALSE(r->log2_features());
  EXPECT_FALSE(r->log2_target());
}

TEST(SensitivityTest, NoisyTargetWithinToleranceAndImperfectFit) {
  SensitivityInput in;
  in.feature_names = {"a", "b", "c"};
  in.features = RandomFeatures(200, 2);
  std::mt19937 rng(42);
  std::normal_distribution<double> noise(0, 5);
  const double coef[] = {3, -2, 0.5};
  for (const auto& row : in.features) {
    in.target.push_back(3 * row[0] - 2 * row[1] + 0.5 * row[2] + noise(rng));
  }
  absl::StatusOr<v1::SensitivityResponse> r = FitSensitivity(in);
  ASSERT_TRUE(r.ok()) << r.status();
  const double sy = Std(in.target);
  for (size_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(r->weights(j).weight(), coef[j] * Std(Column(in.features, j)) / sy, 0.05)
        << in.feature_names[j];
  }
  EXPECT_LT(r->r_squared(), 0.99);
  EXPECT_GT(r->r_squared(), 0.8);
}

TEST(SensitivityTest, InteractionOfStandardizedFeatures) {
  // y = a·b. With a = ma + sa·za and b = mb + sb·zb:
  //   y = ma·mb + mb·sa·za + ma·sb·zb + sa·sb·(za·zb),
  // and za·zb standardized again is (za·zb - m)/s, so the fit is exact with
  // weights mb·sa/sy, ma·sb/sy and sa·sb·s/sy.
  SensitivityInput in;
  in.feature_names = {"a", "b"};
  in.interactions = true;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> a(1, 5), b(10, 30);
  for (int i = 0; i < 60; ++i) {
    in.features.push_back({a(rng), b(rng)});
    in.target.push_back(in.features.back()[0] * in.features.back()[1]);
  }
  const std::vector<double> ca = Column(in.features, 0), cb = Column(in.features, 1);
  const double ma = Mean(ca), mb = Mean(cb);
  const double sa = Std(ca), sb = Std(cb), sy = Std(in.target);
  std::vector<double> zz;
  for (size_t i = 0; i < ca.size(); ++i) zz.push_back((ca[i] - ma) / sa * (cb[i] - mb) / sb);

  absl::StatusOr<v1::SensitivityResponse> r = FitSensitivity(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->weights_size(), 3);
  EXPECT_EQ(r->weights(2).term(), "a×b");
  EXPECT_NEAR(r->weights(0).weight(), mb * sa / sy, 1e-9);
  EXPECT_NEAR(r->weights(1).weight(), ma * sb / sy, 1e-9);
  EXPECT_NEAR(r->weights(2).weight(), sa * sb * Std(zz) / sy, 1e-9);
  EXPECT_GT(r->r_squared(), 0.999999);
}

TEST(SensitivityTest, Log2FeaturesAndTarget) {
  // y = a³ / b on powers of two: log2 y = 3·log2 a - log2 b, exactly linear.
  SensitivityInput in;
  in.feature_names = {"a", "b"};
  in.log2_features = true;
  in.log2_target = true;
  std::vector<double> log_a, log_b, log_y;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j) {
      const double a = std::pow(2.0, i), b = std::pow(2.0, 2 * j + (i % 2));
      in.features.push_back({a, b});
      in.target.push_back(a * a * a / b);
      log_a.push_back(std::log2(a));
      log_b.push_back(std::log2(b));
      log_y.push_back(std::log2(a * a * a / b));
    }
  }
  absl::StatusOr<v1::SensitivityResponse> r = FitSensitivity(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->weights(0).weight(), 3 * Std(log_a) / Std(log_y), 1e-9);
  EXPECT_NEAR(r->weights(1).weight(), -1 * Std(log_b) / Std(log_y), 1e-9);
  EXPECT_GT(r->r_squared(), 0.999999);
  EXPECT_TRUE(r->log2_features());
  EXPECT_TRUE(r->log2_target());

  // On raw values the same data is far from linear.
  in.log2_features = false;
  in.log2_target = false;
  absl::StatusOr<v1::SensitivityResponse> raw = FitSensitivity(in);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_LT(raw->r_squared(), 0.9);
}

TEST(SensitivityTest, NeedsMorePointsThanTerms) {
  SensitivityInput in;
  in.feature_names = {"a", "b", "c"};
  in.features = RandomFeatures(3, 3);
  in.target = {1, 2, 3};
  ExpectInvalid(FitSensitivity(in).status(),
                "sensitivity needs more points than terms: 3 points for 4 terms (3 features + "
                "intercept)");
  // As many points as terms would interpolate them exactly: still refused.
  in.features = RandomFeatures(4, 3);
  in.target = {1, 2, 3, 5};
  ExpectInvalid(FitSensitivity(in).status(), "4 points for 4 terms");
  in.features = RandomFeatures(6, 3);
  in.target = {1, 2, 3, 5, 4, 9};
  in.interactions = true;
  ExpectInvalid(FitSensitivity(in).status(),
                "6 points for 7 terms (3 features + 3 interactions + intercept)");
}

TEST(SensitivityTest, RejectsConstantFeatureAndTarget) {
  SensitivityInput in;
  in.feature_names = {"layer", "node"};
  for (int i = 0; i < 12; ++i) {
    in.features.push_back({4, static_cast<double>(64 << (i % 4))});
    in.target.push_back(i);
  }
  ExpectInvalid(FitSensitivity(in).status(),
                "feature 'layer' is constant (4) over the 12 selected results; it cannot explain "
                "anything: leave it out or select results where it varies");
  for (int i = 0; i < 12; ++i) in.features[i][0] = i % 3 + 1;
  in.target.assign(12, 5);
  ExpectInvalid(FitSensitivity(in).status(), "the target is constant (5) over the 12");
}

TEST(SensitivityTest, RejectsLog2OfNonPositive) {
  SensitivityInput in;
  in.feature_names = {"layer", "node"};
  in.log2_features = true;
  for (int i = 0; i < 8; ++i) {
    in.features.push_back({static_cast<double>(i + 1), static_cast<double>(i % 3 * 64)});
    in.target.push_back(i + 1);
  }
  ExpectInvalid(FitSensitivity(in).status(), "log2 of feature 'node' needs values > 0, got 0");
  in.log2_features = false;
  in.log2_target = true;
  in.target[5] = -2;
  ExpectInvalid(FitSensitivity(in).status(), "log2 of the target needs values > 0, got -2");
}

TEST(SensitivityTest, RejectsMismatchedSizesAndNonFiniteValues) {
  SensitivityInput in;
  in.feature_names = {"a", "b", "c"};
  in.features = RandomFeatures(10, 4);
  in.target.assign(10, 1);
  in.features[6].pop_back();
  ExpectInvalid(FitSensitivity(in).status(), "feature row 6 has 2 values for 3 features (a, b, c)");

  in.features = RandomFeatures(10, 4);
  in.target.pop_back();
  ExpectInvalid(FitSensitivity(in).status(), "9 target values for 10 feature rows");

  in.target.assign(10, 1);
  in.features[2][1] = std::nan("");
  ExpectInvalid(FitSensitivity(in).status(), "feature 'b' has a non-finite value (nan) at point 2");
}

}  // namespace
}  // namespace paradnn::server::analysis
