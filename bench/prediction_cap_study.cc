#include "bench/prediction_cap_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "server/prediction/space_filling_design.h"
#include "server/prediction/step_time_model.h"

namespace paradnn::bench {
namespace {

namespace pr = server::prediction;

constexpr double kNoiseSd = 0.05;  // lognormal run-to-run noise, as a shared host's

// A 3-axis FC-like world at continuous coordinates in [0, 1]: layers
// 2^(4u), width 2^(5+6v), batch 2^(4+6w) on a 100 GFLOP/s, 20 GB/s host,
// with a small-matrix penalty (up to 2x) the roofline prior does not know.
struct WorldPoint {
  pr::PredictorInput input;
  double truth = 0;
};

WorldPoint At(double u, double v, double w) {
  const double layer = std::exp2(4 * u), node = std::exp2(5 + 6 * v), batch = std::exp2(4 + 6 * w);
  const double flops = 6 * layer * node * node * batch;
  const double bytes = 4 * (3 * layer * node * node + 4 * layer * node * batch);
  WorldPoint p;
  p.input.coordinates = {u, v, w};
  pr::PriorRoofs roofs;
  roofs.compute_flops_per_sec = 100e9;
  roofs.memory_bytes_per_sec = 20e9;
  p.input.prior_seconds = pr::PriorStepSeconds(flops, bytes, roofs);
  p.truth = p.input.prior_seconds * (1 + std::exp(-3 * v) * std::exp(-2 * w));
  return p;
}

double Normal(pr::SeededRandom& random) {
  const double u = std::max(random.Uniform(), 1e-12), v = random.Uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

double QuantileOf(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0
                        : values[static_cast<size_t>(q * static_cast<double>(values.size() - 1))];
}

}  // namespace

int RunCapStudy(int measurements, uint64_t seed) {
  pr::SeededRandom random(seed);
  std::vector<pr::Observation> data;
  for (int i = 0; i < measurements; ++i) {
    const WorldPoint p = At(random.Uniform(), random.Uniform(), random.Uniform());
    data.push_back({p.input, p.truth * std::exp(kNoiseSd * Normal(random))});
  }
  std::vector<WorldPoint> held_out;
  for (int i = 0; i < 2000; ++i) {
    held_out.push_back(At(random.Uniform(), random.Uniform(), random.Uniform()));
  }
  std::printf(
      "cap study: %d measurements of a known world (3 axes, %.0f %% lognormal noise), 2,000 "
      "held-out configurations\n\n%-10s %-8s %10s %10s %12s %10s %12s\n",
      measurements, 100 * kNoiseSd, "max_points", "search", "median|e|", "p90|e|", "cover 90%",
      "fit (s)", "K (MB)");
  for (size_t cap : {64, 128, 256, 512, 1024}) {
    pr::FitOptions options;
    options.max_points = cap;
    options.max_search_points = std::min<size_t>(cap, 256);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<pr::StepTimeModel> model = pr::StepTimeModel::Fit(data, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!model.ok()) {
      std::fprintf(stderr, "fit with max_points %zu: %s\n", cap, model.status().ToString().c_str());
      return 1;
    }
    std::vector<double> errors;
    int covered = 0;
    for (const WorldPoint& p : held_out) {
      const pr::StepTimePrediction predicted = model->Predict(p.input);
      errors.push_back(std::fabs(predicted.seconds / p.truth - 1));
      const double again = p.truth * std::exp(kNoiseSd * Normal(random));
      covered += again >= predicted.low && again <= predicted.high ? 1 : 0;
    }
    const double n = static_cast<double>(std::min<size_t>(cap, data.size()));
    std::printf("%-10zu %-8zu %9.2f%% %9.2f%% %11.1f%% %10.2f %12.1f\n", cap,
                options.max_search_points, 100 * QuantileOf(errors, 0.5),
                100 * QuantileOf(errors, 0.9),
                100.0 * covered / static_cast<double>(held_out.size()), seconds, n * n * 8 / 1e6);
  }
  std::printf(
      "\nthe coordinator fits with max_points 512, search 256 (FitOptions' defaults); uncapped,\n"
      "a fit of %d points would take O(N^3) time and %.0f MB per covariance matrix\n",
      measurements, 8.0 * measurements * measurements / 1e6);
  return 0;
}

}  // namespace paradnn::bench
