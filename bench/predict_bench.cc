// How well a budgeted sweep's predictions stand in for measurements: on
// sweeps measured in full (bench/prediction-fc.yaml, prediction-cnn.yaml),
// measure a share of each group's grid as a budgeted run would (a space-
// filling design, then the most uncertain configurations, refitting after
// each batch), predict the rest, and compare with what was measured there.
// Printed per measured share, for our model (roofline prior x GP
// correction), the prior alone (scaled by its median miss), the paper's
// regression in log space and the nearest measured neighbour, beside the
// targets: median |error| <= 10 %, p90 <= 25 %, 90 % intervals covering
// 85-95 %, at 20 % measured; the heat map from measured + predicted cells
// ranks like the fully measured one (Spearman >= 0.95).
//
// Usage: paradnn-bench-predict --db FILE [--sweep ID ...] [--seeds N]
//        paradnn-bench-predict --cap-study N   (what FitOptions.max_points costs;
//                                               bench/prediction_cap_study.h)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/prediction_cap_study.h"
#include "db/database.h"
#include "db/platform_store.h"
#include "db/result_store.h"
#include "db/sweep_store.h"
#include "server/prediction/acquisition.h"
#include "server/prediction/feature_space.h"
#include "server/prediction/prediction_inputs.h"
#include "server/prediction/space_filling_design.h"
#include "server/prediction/step_time_model.h"
#include "server/utilization.h"

namespace paradnn::bench {
namespace {

namespace pr = server::prediction;

struct Point {
  v1::ModelConfig config;
  pr::PredictorInput input;
  double seconds = 0;  // measured median step time
};

struct Group {
  std::string key;
  pr::FeatureSpace space;
  std::vector<Point> points;
  // The heat map's axes: the two numeric hyper-parameters with most values.
  std::string x_axis, y_axis;
};

int64_t Param(const v1::ModelConfig& config, const std::string& key) {
  auto it = config.params().find(key);
  return it == config.params().end() ? 0 : it->second;
}

// Every OK result of `sweeps` (every sweep of the file when empty), grouped.
absl::StatusOr<std::vector<Group>> LoadGroups(const db::Database& database,
                                              std::vector<int64_t> sweeps) {
  if (sweeps.empty()) {
    absl::StatusOr<std::vector<v1::SweepStatus>> all =
        db::SweepStore(const_cast<db::Database*>(&database)).List(0);
    if (!all.ok()) return all.status();
    for (const v1::SweepStatus& s : *all) sweeps.push_back(s.sweep_id());
  }
  std::map<std::string, Group> groups;
  std::map<std::string, pr::PriorRoofs> roofs;
  db::ResultStore results(const_cast<db::Database*>(&database));
  for (int64_t sweep : sweeps) {
    absl::StatusOr<std::vector<v1::ResultRow>> rows = results.Query(sweep, false);
    if (!rows.ok()) return rows.status();
    for (const v1::ResultRow& row : *rows) {
      const v1::Measurement& m = row.measurement();
      if (m.outcome() != v1::OK || !(m.stats().median_s() > 0)) continue;
      const std::string key = pr::PredictionGroupKey(row.config(), row.platform_fingerprint());
      if (roofs.count(row.platform_fingerprint() + row.config().family()) == 0) {
        absl::StatusOr<v1::Platform> platform =
            db::ReadPlatformByFingerprint(database, row.platform_fingerprint());
        if (!platform.ok()) return platform.status();
        roofs[row.platform_fingerprint() + row.config().family()] =
            pr::PriorRoofsOf(*platform, server::ComputeDtype(row.config().precision()),
                             server::RoofKernelOf(row.config().family()));
      }
      Point point;
      point.config = row.config();
      point.input.prior_seconds =
          pr::PriorOf(row.config(), roofs[row.platform_fingerprint() + row.config().family()]);
      point.seconds = m.stats().median_s();
      Group& group = groups[key];
      group.key = key;
      group.points.push_back(std::move(point));
    }
  }
  std::vector<Group> out;
  for (auto& [key, group] : groups) {
    std::vector<v1::ModelConfig> grid;
    for (const Point& p : group.points) grid.push_back(p.config);
    group.space = pr::FeatureSpace::Of(grid);
    for (Point& p : group.points) p.input.coordinates = group.space.Encode(p.config);
    std::map<std::string, std::set<int64_t>> values;
    for (const Point& p : group.points) {
      for (const auto& [name, value] : p.config.params()) values[name].insert(value);
    }
    std::vector<std::pair<size_t, std::string>> by_count;
    for (const auto& [name, set] : values) by_count.push_back({set.size(), name});
    std::sort(by_count.rbegin(), by_count.rend());
    if (by_count.size() >= 2) {
      group.x_axis = by_count[0].second;
      group.y_axis = by_count[1].second;
    }
    out.push_back(std::move(group));
  }
  return out;
}

// The indices a budgeted run of `count` measurements would have measured:
// half a space-filling design, then batches of the most uncertain.
std::vector<size_t> BudgetedMeasurements(const Group& group, size_t count, uint64_t seed) {
  std::vector<std::vector<double>> coordinates;
  std::vector<pr::PredictorInput> candidates;
  for (const Point& p : group.points) {
    coordinates.push_back(p.input.coordinates);
    candidates.push_back(p.input);
  }
  std::vector<size_t> measured =
      pr::SpaceFillingDesign(coordinates, std::max<size_t>(count / 2, 3), seed);
  const size_t batch = std::max<size_t>(count / 10, 1);
  while (measured.size() < count) {
    std::vector<pr::Observation> data;
    for (size_t i : measured) data.push_back({group.points[i].input, group.points[i].seconds});
    absl::StatusOr<pr::StepTimeModel> model = pr::StepTimeModel::Fit(data);
    if (!model.ok()) break;
    std::vector<bool> taken(group.points.size(), false);
    for (size_t i : measured) taken[i] = true;
    const std::vector<size_t> next =
        pr::NextToMeasure(*model, candidates, taken, std::min(batch, count - measured.size()));
    if (next.empty()) break;
    measured.insert(measured.end(), next.begin(), next.end());
  }
  return measured;
}

struct Prediction {
  double seconds = 0, low = 0, high = 0;
};

enum Method { kOurs, kPriorOnly, kLogLinear, kNearest, kMethods };
const char* kMethodNames[kMethods] = {"paradnn (prior x GP)", "roofline prior alone",
                                      "log-space regression", "nearest measured"};

// Every point's prediction by `method` from the measured ones (measured
// points keep their measurement).
std::vector<Prediction> PredictAll(const Group& group, const std::vector<size_t>& measured,
                                   Method method) {
  std::vector<pr::Observation> data;
  for (size_t i : measured) data.push_back({group.points[i].input, group.points[i].seconds});
  std::vector<Prediction> out(group.points.size());
  auto fill = [&](const auto& model) {
    for (size_t i = 0; i < group.points.size(); ++i) {
      const pr::StepTimePrediction p = model.Predict(group.points[i].input);
      out[i] = {p.seconds, p.low, p.high};
    }
  };
  if (method == kOurs) {
    if (auto model = pr::StepTimeModel::Fit(data); model.ok()) fill(*model);
  } else if (method == kLogLinear) {
    if (auto model = pr::LogLinearRegression::Fit(data); model.ok()) fill(*model);
  } else if (method == kNearest) {
    if (auto model = pr::NearestMeasured::Fit(data); model.ok()) fill(*model);
  } else {
    std::vector<double> misses;
    for (const pr::Observation& o : data)
      misses.push_back(std::log(o.seconds / o.input.prior_seconds));
    std::sort(misses.begin(), misses.end());
    const double median = misses[misses.size() / 2];
    std::vector<double> spread;
    for (double m : misses) spread.push_back(std::fabs(m - median));
    std::sort(spread.begin(), spread.end());
    const double q = spread[std::min(spread.size() - 1, spread.size() * 9 / 10)];
    for (size_t i = 0; i < group.points.size(); ++i) {
      const double center = group.points[i].input.prior_seconds * std::exp(median);
      out[i] = {center, center * std::exp(-q), center * std::exp(q)};
    }
  }
  for (size_t i : measured)
    out[i] = {group.points[i].seconds, group.points[i].seconds, group.points[i].seconds};
  return out;
}

std::vector<double> Ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = (static_cast<double>(i + j)) / 2;
    i = j + 1;
  }
  return ranks;
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n - 1) / 2;
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) * (ra[i] - mean);
    db += (rb[i] - mean) * (rb[i] - mean);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 1;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? NAN : values[values.size() / 2];
}

// The heat map's cells (x, y): median examples/s over the other axes, from
// `seconds` per point.
std::vector<double> HeatmapCells(const Group& group, const std::vector<double>& seconds) {
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> cells;
  for (size_t i = 0; i < group.points.size(); ++i) {
    const v1::ModelConfig& c = group.points[i].config;
    cells[{Param(c, group.x_axis), Param(c, group.y_axis)}].push_back(
        static_cast<double>(Param(c, "batch")) / seconds[i]);
  }
  std::vector<double> out;
  for (const auto& [cell, values] : cells) out.push_back(Median(values));
  return out;
}

struct Scores {
  std::vector<double> errors;  // |predicted / measured - 1| of held-out points
  int covered = 0;
  std::vector<double> rank_correlations;
};

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return NAN;
  return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))];
}

// One configuration's identity across databases.
std::string ConfigKey(const Group& group, const v1::ModelConfig& config) {
  std::string key = group.key;
  // Sorted: a protobuf map's iteration order differs between messages.
  const std::map<std::string, int64_t> params(config.params().begin(), config.params().end());
  const std::map<std::string, std::string> options(config.options().begin(),
                                                   config.options().end());
  for (const auto& [name, value] : params) absl::StrAppend(&key, " ", name, "=", value);
  for (const auto& [name, value] : options) absl::StrAppend(&key, " ", name, "=", value);
  absl::StrAppend(&key, " ", config.optimizer());
  return key;
}

// |t2 / t1 - 1| of every configuration measured in both: the error a
// perfect predictor shows against one measurement of a drifting host.
std::vector<double> RemeasurementErrors(const std::vector<Group>& first,
                                        const std::vector<Group>& second) {
  std::map<std::string, double> again;
  for (const Group& g : second) {
    for (const Point& p : g.points) again[ConfigKey(g, p.config)] = p.seconds;
  }
  std::vector<double> errors;
  for (const Group& g : first) {
    for (const Point& p : g.points) {
      auto it = again.find(ConfigKey(g, p.config));
      if (it != again.end()) errors.push_back(std::fabs(it->second / p.seconds - 1));
    }
  }
  return errors;
}

// The `count` held-out configurations our model missed most.
void PrintWorst(const Group& group, const std::vector<Prediction>& predicted,
                const std::vector<bool>& is_measured, int count) {
  std::vector<size_t> held;
  for (size_t i = 0; i < group.points.size(); ++i) {
    if (!is_measured[i]) held.push_back(i);
  }
  auto miss = [&](size_t i) {
    return std::fabs(std::log(predicted[i].seconds / group.points[i].seconds));
  };
  std::sort(held.begin(), held.end(), [&](size_t a, size_t b) { return miss(a) > miss(b); });
  for (size_t k = 0; k < held.size() && k < static_cast<size_t>(count); ++k) {
    const size_t i = held[k];
    std::string params;
    for (const auto& [key, value] : group.points[i].config.params()) {
      absl::StrAppend(&params, key, "=", value, " ");
    }
    std::printf("  worst %s: measured %.4g s, predicted %.4g [%.4g, %.4g], prior %.4g\n",
                params.c_str(), group.points[i].seconds, predicted[i].seconds, predicted[i].low,
                predicted[i].high, group.points[i].input.prior_seconds);
  }
}

struct FitTiming {
  double seconds = 0;
  int fits = 0;
};

// One share's rows of the table: every method on every group, `seeds`
// budgeted runs each.
void PrintShare(const std::vector<Group>& groups, double share, int seeds, int worst,
                FitTiming* timing) {
  Scores scores[kMethods];
  for (const Group& group : groups) {
    const size_t count =
        std::max<size_t>(5, static_cast<size_t>(std::lround(share * group.points.size())));
    for (int seed = 0; seed < seeds; ++seed) {
      const std::vector<size_t> measured =
          BudgetedMeasurements(group, count, static_cast<uint64_t>(seed) + 1);
      std::vector<bool> is_measured(group.points.size(), false);
      for (size_t i : measured) is_measured[i] = true;
      std::vector<double> truth;
      for (const Point& p : group.points) truth.push_back(p.seconds);
      const std::vector<double> full = HeatmapCells(group, truth);
      for (int method = 0; method < kMethods; ++method) {
        const auto start = std::chrono::steady_clock::now();
        const std::vector<Prediction> predicted =
            PredictAll(group, measured, static_cast<Method>(method));
        if (method == kOurs) {
          timing->seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          ++timing->fits;
          if (worst > 0 && seed == 0) PrintWorst(group, predicted, is_measured, worst);
        }
        std::vector<double> seconds;
        for (size_t i = 0; i < group.points.size(); ++i) {
          seconds.push_back(predicted[i].seconds);
          if (is_measured[i]) continue;
          scores[method].errors.push_back(std::fabs(predicted[i].seconds / truth[i] - 1));
          scores[method].covered +=
              truth[i] >= predicted[i].low && truth[i] <= predicted[i].high ? 1 : 0;
        }
        if (!group.x_axis.empty()) {
          scores[method].rank_correlations.push_back(Spearman(full, HeatmapCells(group, seconds)));
        }
      }
    }
  }
  for (int method = 0; method < kMethods; ++method) {
    const Scores& s = scores[method];
    std::printf("%5.0f%% %-22s %9.1f%% %9.1f%% %9.1f%% %12.3f\n", share * 100, kMethodNames[method],
                100 * Quantile(s.errors, 0.5), 100 * Quantile(s.errors, 0.9),
                100.0 * s.covered / std::max<size_t>(s.errors.size(), 1),
                Median(s.rank_correlations));
  }
}

}  // namespace
}  // namespace paradnn::bench

int main(int argc, char** argv) {
  using namespace paradnn;
  using namespace paradnn::bench;
  std::string db_path;
  std::vector<int64_t> sweeps;
  int seeds = 3;
  int worst = 0;
  std::string repeat_db;
  std::vector<double> shares = {0.05, 0.10, 0.20, 0.40};
  CLI::App app{"Budgeted-sweep prediction error on fully measured sweeps"};
  int cap_study = 0;
  app.add_option("--db", db_path, "Database holding the fully measured sweeps");
  app.add_option("--cap-study", cap_study,
                 "Instead: fit this many measurements of a known world with each "
                 "FitOptions.max_points and print what the cap costs")
      ->check(CLI::Range(100, 1'000'000));
  app.add_option("--sweep", sweeps, "Sweeps to use (default: every sweep in the file)");
  app.add_option("--seeds", seeds, "Designs per share (errors pooled)")->capture_default_str();
  app.add_option("--shares", shares, "Measured shares of each grid")->capture_default_str();
  app.add_option("--repeat-db", repeat_db,
                 "The same sweeps measured again: prints the re-measurement floor");
  app.add_option("--worst", worst, "Print this many worst held-out predictions of our model");
  CLI11_PARSE(app, argc, argv);
  if (cap_study > 0) return RunCapStudy(cap_study, 1);
  if (db_path.empty()) {
    std::fprintf(stderr, "--db FILE is required (or --cap-study N)\n");
    return 2;
  }

  db::DatabaseOptions options;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(db_path, options);
  if (!database.ok()) {
    std::fprintf(stderr, "%s\n", database.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::vector<Group>> groups = LoadGroups(**database, sweeps);
  if (!groups.ok()) {
    std::fprintf(stderr, "%s\n", groups.status().ToString().c_str());
    return 1;
  }
  size_t total = 0;
  for (const Group& g : *groups) {
    std::vector<std::string> names;
    for (const auto& axis : g.space.axes()) names.push_back(axis.name);
    std::printf("group %s: %zu measured configurations; axes %s; heat map %s x %s\n", g.key.c_str(),
                g.points.size(), absl::StrJoin(names, ", ").c_str(), g.x_axis.c_str(),
                g.y_axis.c_str());
    total += g.points.size();
  }
  std::printf("\n%-6s %-22s %10s %10s %10s %12s   (%zu configurations, %d designs per share)\n",
              "share", "method", "median|e|", "p90|e|", "cover 90%", "heatmap rho", total, seeds);
  FitTiming timing;
  for (double share : shares) PrintShare(*groups, share, seeds, worst, &timing);
  if (!repeat_db.empty()) {
    absl::StatusOr<std::unique_ptr<db::Database>> again = db::Database::Open(repeat_db, options);
    absl::StatusOr<std::vector<Group>> repeated =
        again.ok() ? LoadGroups(**again, {}) : absl::StatusOr<std::vector<Group>>(again.status());
    if (!repeated.ok()) {
      std::fprintf(stderr, "--repeat-db: %s\n", repeated.status().ToString().c_str());
      return 1;
    }
    const std::vector<double> floor = RemeasurementErrors(*groups, *repeated);
    std::printf("%-6s %-22s %9.1f%% %9.1f%%   (%zu configurations measured twice)\n", "-",
                "re-measurement floor", 100 * Quantile(floor, 0.5), 100 * Quantile(floor, 0.9),
                floor.size());
  }
  std::printf(
      "\ntargets at 20 %% measured: median|e| <= 10 %%, p90|e| <= 25 %%, coverage 85-95 %%, "
      "heatmap rho >= 0.95\n");
  std::printf("fit + predict of our model: %.1f ms on average (%d fits)\n",
              timing.fits > 0 ? 1000 * timing.seconds / timing.fits : 0.0, timing.fits);
  return 0;
}
