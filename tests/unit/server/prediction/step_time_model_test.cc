#include "server/prediction/step_time_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/model_counts.h"
#include "model/model_spec.h"
#include "server/prediction/acquisition.h"
#include "server/prediction/prediction_inputs.h"
#include "server/prediction/space_filling_design.h"

namespace paradnn::server::prediction {
namespace {

using ::testing::HasSubstr;

// A known roofline world: an FC-like step of `layer` layers of width
// `node` at batch `batch` (log2 coordinates in [0, 1]) on a 100 GFLOP/s,
// 20 GB/s host.
struct World {
  PriorRoofs roofs{100e9, 20e9, {}};
  double efficiency_dip = 0;  // a small-matrix penalty the prior does not know
  double noise_sd = 0;        // lognormal measurement noise

  // A world whose smallest configurations run 1 + `dip` times below the roof.
  static World WithDip(double dip) {
    World world;
    world.efficiency_dip = dip;
    return world;
  }

  struct Point {
    PredictorInput input;
    double truth = 0;
  };

  Point At(int layer_log2, int node_log2, int batch_log2) const {
    const double layer = std::exp2(layer_log2), node = std::exp2(node_log2),
                 batch = std::exp2(batch_log2);
    const double flops = 6 * layer * node * node * batch;
    const double bytes = 4 * (3 * layer * node * node + 4 * layer * node * batch);
    Point p;
    p.input.coordinates = {layer_log2 / 4.0, (node_log2 - 5) / 6.0, (batch_log2 - 4) / 6.0};
    p.input.prior_seconds = PriorStepSeconds(flops, bytes, roofs);
    // Small matrices run below the roof: up to 1 + dip times slower.
    const double small = std::exp(-(node_log2 - 5) / 2.0) * std::exp(-(batch_log2 - 4) / 3.0);
    p.truth = p.input.prior_seconds * (1 + efficiency_dip * small);
    return p;
  }

  std::vector<Point> Grid() const {
    std::vector<Point> grid;
    for (int l = 0; l <= 4; ++l) {
      for (int n = 5; n <= 11; ++n) {
        for (int b = 4; b <= 10; ++b) grid.push_back(At(l, n, b));
      }
    }
    return grid;
  }
};

std::vector<std::vector<double>> Coordinates(const std::vector<World::Point>& grid) {
  std::vector<std::vector<double>> out;
  for (const World::Point& p : grid) out.push_back(p.input.coordinates);
  return out;
}

// Standard normal draws from a seeded generator (Box-Muller).
double Normal(SeededRandom& random) {
  const double u = std::max(random.Uniform(), 1e-12), v = random.Uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

std::vector<Observation> Measure(const std::vector<World::Point>& grid,
                                 const std::vector<size_t>& chosen, double noise_sd,
                                 uint64_t seed) {
  SeededRandom random(seed);
  std::vector<Observation> data;
  for (size_t index : chosen) {
    data.push_back({grid[index].input, grid[index].truth * std::exp(noise_sd * Normal(random))});
  }
  return data;
}

// A model fit on `points` of `grid` chosen by the space-filling design
// (`design_seed`), measured with `noise_sd` (`noise_seed`).
absl::StatusOr<StepTimeModel> FitOnDesign(const std::vector<World::Point>& grid, size_t points,
                                          uint64_t design_seed, double noise_sd,
                                          uint64_t noise_seed) {
  const std::vector<size_t> design = SpaceFillingDesign(Coordinates(grid), points, design_seed);
  return StepTimeModel::Fit(Measure(grid, design, noise_sd, noise_seed));
}

// The value `percent` % of the way up the sorted `values` (the element at
// size * percent / 100): how the accuracy checks read an error spread.
double Percentile(std::vector<double> values, size_t percent) {
  std::sort(values.begin(), values.end());
  return values[values.size() * percent / 100];
}

// Every index of `grid`.
std::vector<size_t> Every(const std::vector<World::Point>& grid) {
  std::vector<size_t> all(grid.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// A data-parallel configuration's prior adds its float32 gradients'
// all-reduce at the platform's roof for its rank count: latency + bus bytes
// over bus bandwidth; one rank, or a rank count without a roof, adds none.
TEST(StepTimeModelTest, ADataParallelPriorAddsTheAllreduceRoofsTime) {
  PriorRoofs roofs{100e9, 20e9, {}};
  roofs.allreduce_by_ranks[4] = {2e-4, 1e9};
  EXPECT_DOUBLE_EQ(AllreduceRoofSeconds(8e6, 4, roofs), 2e-4 + 8e6 * 2 * 3 / 4 / 1e9);
  EXPECT_EQ(AllreduceRoofSeconds(8e6, 1, roofs), 0);
  EXPECT_EQ(AllreduceRoofSeconds(8e6, 2, roofs), 0) << "no roof for 2 ranks";

  v1::ModelConfig config;
  config.set_family("fc");
  for (const auto& [key, value] : std::vector<std::pair<std::string, int64_t>>{
           {"layer", 2}, {"node", 512}, {"input", 256}, {"output", 10}, {"batch", 64}}) {
    (*config.mutable_params())[key] = value;
  }
  const double alone = PriorOf(config, roofs);
  ASSERT_GT(alone, 0);
  (*config.mutable_params())["hosts"] = 4;
  const v1::ModelCounts counts =
      model::CountModel(*model::ParseModelSpec(config, model::FieldStyle::kProto));
  EXPECT_NEAR(PriorOf(config, roofs) - alone,
              AllreduceRoofSeconds(4.0 * static_cast<double>(counts.params()), 4, roofs), 1e-12);
  (*config.mutable_params())["hosts"] = 2;
  EXPECT_NEAR(PriorOf(config, roofs), alone, 1e-12);
}

TEST(StepTimeModelTest, APureRooflineWorldIsRecoveredExactly) {
  const World world;
  const std::vector<World::Point> grid = world.Grid();
  absl::StatusOr<StepTimeModel> model = FitOnDesign(grid, 20, 1, 0, 0);
  ASSERT_TRUE(model.ok()) << model.status();
  for (const World::Point& p : grid) {
    const StepTimePrediction prediction = model->Predict(p.input);
    EXPECT_NEAR(prediction.seconds / p.truth, 1, 0.01);
    EXPECT_LE(prediction.low, p.truth * 1.0001);
    EXPECT_GE(prediction.high, p.truth * 0.9999);
  }
  EXPECT_LT(model->scales().noise_sd, 0.02);
}

TEST(StepTimeModelTest, TheCorrectionLearnsWhatThePriorMisses) {
  const World world = World::WithDip(3);  // the smallest configurations run 4x below the roof
  const std::vector<World::Point> grid = world.Grid();
  const std::vector<size_t> design = SpaceFillingDesign(Coordinates(grid), 45, 2);
  absl::StatusOr<StepTimeModel> model = StepTimeModel::Fit(Measure(grid, design, 0, 0));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<LogLinearRegression> regression =
      LogLinearRegression::Fit(Measure(grid, design, 0, 0));
  ASSERT_TRUE(regression.ok());
  std::vector<double> ours, baseline;
  for (const World::Point& p : grid) {
    ours.push_back(std::fabs(model->Predict(p.input).seconds / p.truth - 1));
    baseline.push_back(std::fabs(regression->Predict(p.input).seconds / p.truth - 1));
  }
  EXPECT_LT(Percentile(ours, 50), 0.03);
  EXPECT_LT(Percentile(ours, 90), 0.10);
  EXPECT_GT(Percentile(baseline, 50), 2 * Percentile(ours, 50));
}

TEST(StepTimeModelTest, NoisyMeasurementsGiveIntervalsThatCoverTheirShare) {
  const World world = World::WithDip(1);
  const std::vector<World::Point> grid = world.Grid();
  absl::StatusOr<StepTimeModel> model = FitOnDesign(grid, 60, 3, 0.1, 4);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(model->scales().noise_sd, 0.05);
  EXPECT_LT(model->scales().noise_sd, 0.2);
  // Fresh noisy re-measurements of every configuration.
  const std::vector<Observation> fresh = Measure(grid, Every(grid), 0.1, 99);
  int covered = 0;
  for (const Observation& o : fresh) {
    const StepTimePrediction p = model->Predict(o.input);
    covered += o.seconds >= p.low && o.seconds <= p.high ? 1 : 0;
  }
  const double coverage = static_cast<double>(covered) / static_cast<double>(fresh.size());
  EXPECT_GT(coverage, 0.80);
  EXPECT_LT(coverage, 0.98);
}

TEST(StepTimeModelTest, WithoutAPriorItLearnsTheLogTimeItself) {
  std::vector<Observation> data;
  for (double x : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    for (double y : {0.0, 0.5, 1.0}) data.push_back({{{x, y}, 0}, std::exp2(3 * x - y)});
  }
  absl::StatusOr<StepTimeModel> model = StepTimeModel::Fit(data);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_NEAR(model->Predict({{0.6, 0.25}, 0}).seconds, std::exp2(1.8 - 0.25), 0.02);
  EXPECT_THAT(model->Describe({"x", "y"}), HasSubstr("no prior x learned correction, 15 "));
}

TEST(StepTimeModelTest, BadDataIsRefusedNamingTheMeasurement) {
  EXPECT_EQ(StepTimeModel::Fit({}).status().code(), absl::StatusCode::kInvalidArgument);
  const absl::Status zero = StepTimeModel::Fit({{{{0.5}, 1}, 1}, {{{0.2}, 1}, 0}}).status();
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("measurement 1: step time 0"));
  const absl::Status sizes = StepTimeModel::Fit({{{{0.5}, 1}, 1}, {{{0.2, 1}, 1}, 2}}).status();
  EXPECT_THAT(sizes.message(), HasSubstr("measurement 1: 2 coordinates, not 1"));
}

TEST(SpreadSubsetTest, APrefixIsSpreadOverTheWholeExtent) {
  // A 21 x 21 grid on [0, 1]²: the first pick is its centre, the next four
  // its corners, and 25 picks leave no point farther than a cell diagonal
  // or two from one of them.
  Eigen::MatrixXd points(21 * 21, 2);
  for (int i = 0; i < 21; ++i) {
    for (int j = 0; j < 21; ++j) points.row(i * 21 + j) << i / 20.0, j / 20.0;
  }
  const std::vector<size_t> chosen = SpreadSubset(points, 25);
  ASSERT_EQ(chosen.size(), 25u);
  EXPECT_EQ(chosen[0], 10u * 21 + 10);
  std::vector<size_t> corners(chosen.begin() + 1, chosen.begin() + 5);
  std::sort(corners.begin(), corners.end());
  EXPECT_EQ(corners, (std::vector<size_t>{0, 20, 20 * 21, 21 * 21 - 1}));
  std::vector<size_t> sorted = chosen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end()) << "a point chosen twice";
  double farthest = 0;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    double nearest = 1e9;
    for (size_t c : chosen) {
      nearest =
          std::min(nearest, (points.row(i) - points.row(static_cast<Eigen::Index>(c))).norm());
    }
    farthest = std::max(farthest, nearest);
  }
  EXPECT_LT(farthest, 0.2);
  // More than there are: every point, once.
  EXPECT_EQ(SpreadSubset(points.topRows(3), 10).size(), 3u);
  EXPECT_EQ(SpreadSubset(points, 25), chosen) << "not deterministic";
}

// 12,000 noisy measurements (the size that took 3.1 GB and aborted the
// coordinator): the fit conditions on max_points of them, says so, and
// still predicts the world within its noise.
TEST(StepTimeModelTest, AFitOfManyMeasurementsIsBoundedAndStillAccurate) {
  const World world = World::WithDip(1);
  std::vector<World::Point> grid;
  for (int i = 0; i < 12000; ++i) {
    const int l = i % 5, n = 5 + (i / 5) % 7, b = 4 + (i / 35) % 7;
    grid.push_back(world.At(l, n, b));
  }
  const std::vector<size_t> all = Every(grid);
  FitOptions options;
  options.max_points = 300;
  options.max_search_points = 120;
  absl::StatusOr<StepTimeModel> model = StepTimeModel::Fit(Measure(grid, all, 0.05, 8), options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->measurements(), 300u);
  EXPECT_EQ(model->measurements_given(), 12000u);
  EXPECT_THAT(model->Describe({"layer", "node", "batch"}),
              HasSubstr("12000 measurements (the correction conditions on 300 spread over them)"));
  std::vector<double> errors;
  for (const World::Point& p : world.Grid()) {
    errors.push_back(std::fabs(std::log(model->Predict(p.input).seconds / p.truth)));
  }
  EXPECT_LT(Percentile(errors, 50), 0.05);
  EXPECT_LT(Percentile(errors, 90), 0.10);
  FitOptions none;
  none.max_points = 0;
  EXPECT_EQ(StepTimeModel::Fit(Measure(grid, all, 0.05, 8), none).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The batch machinery of acquisition gives exactly what WithPending gives.
TEST(StepTimeModelTest, ABatchConditionsAsWithPendingDoes) {
  const World world = World::WithDip(1);
  const std::vector<World::Point> grid = world.Grid();
  absl::StatusOr<StepTimeModel> model = FitOnDesign(grid, 30, 6, 0.05, 7);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<PredictorInput> candidates;
  for (const World::Point& p : grid) candidates.push_back(p.input);
  StepTimeModel::Batch batch = model->Candidates(candidates, 3);
  std::vector<PredictorInput> pending;
  for (size_t added : {7u, 100u, 201u}) {
    batch.Add(added);
    pending.push_back(candidates[added]);
    const StepTimeModel conditioned = model->WithPending(pending);
    for (size_t i = 0; i < candidates.size(); i += 17) {
      const StepTimePrediction expected = conditioned.Predict(candidates[i]);
      EXPECT_NEAR(batch.log_sd(i), expected.log_sd, 1e-9 * expected.log_sd) << i;
      EXPECT_NEAR(batch.seconds(i) / expected.seconds, 1, 1e-9) << i;
      EXPECT_NEAR(model->PredictSeconds(candidates[i]) / model->Predict(candidates[i]).seconds, 1,
                  1e-12);
    }
  }
  // Past max_added nothing more is conditioned on.
  const double before = batch.log_sd(5);
  batch.Add(5);
  EXPECT_EQ(batch.log_sd(5), before);
}

TEST(AcquisitionTest, ItPicksTheMostUncertainPoint) {
  const World world;
  const std::vector<World::Point> grid = world.Grid();
  // Measured: only configurations in one corner (small layer, node, batch).
  std::vector<size_t> corner;
  std::vector<bool> measured(grid.size(), false);
  for (size_t i = 0; i < grid.size(); ++i) {
    const std::vector<double>& c = grid[i].input.coordinates;
    if (c[0] <= 0.25 && c[1] <= 0.34 && c[2] <= 0.34) {
      corner.push_back(i);
      measured[i] = true;
    }
  }
  absl::StatusOr<StepTimeModel> model = StepTimeModel::Fit(Measure(grid, corner, 0.05, 5));
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<PredictorInput> candidates;
  for (const World::Point& p : grid) candidates.push_back(p.input);
  size_t most = 0;
  double most_sd = -1;
  for (size_t i = 0; i < grid.size(); ++i) {
    const double sd = model->Predict(candidates[i]).log_sd;
    if (!measured[i] && sd > most_sd) {
      most_sd = sd;
      most = i;
    }
  }
  const std::vector<size_t> next = NextToMeasure(*model, candidates, measured, 1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0], most);
  // Far from the corner: in the opposite half of at least two axes.
  const std::vector<double>& far = grid[most].input.coordinates;
  EXPECT_GE((far[0] > 0.5) + (far[1] > 0.5) + (far[2] > 0.5), 2);

  // A batch spreads out: its second point is not the first one's neighbour.
  const std::vector<size_t> batch = NextToMeasure(*model, candidates, measured, 2);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0], most);
  double distance = 0;
  for (size_t d = 0; d < 3; ++d) {
    const double delta = candidates[batch[0]].coordinates[d] - candidates[batch[1]].coordinates[d];
    distance += delta * delta;
  }
  EXPECT_GT(std::sqrt(distance), 0.4);
  // Measured points are never proposed.
  for (size_t index : NextToMeasure(*model, candidates, measured, 20)) {
    EXPECT_FALSE(measured[index]) << index;
  }
}

TEST(BaselineTest, NearestMeasuredAnswersItsNeighboursTime) {
  const std::vector<Observation> data = {
      {{{0.0, 0.0}, 0}, 1.0}, {{{1.0, 1.0}, 0}, 8.0}, {{{0.1, 0.0}, 0}, 1.2}};
  absl::StatusOr<NearestMeasured> nearest = NearestMeasured::Fit(data);
  ASSERT_TRUE(nearest.ok());
  EXPECT_DOUBLE_EQ(nearest->Predict({{0.9, 0.8}, 0}).seconds, 8.0);
  EXPECT_EQ(nearest->Nearest({{0.04, 0.0}, 0}, 2), (std::vector<size_t>{0, 2}));
}

}  // namespace
}  // namespace paradnn::server::prediction
