#include "server/prediction/space_filling_design.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "server/prediction/feature_space.h"

namespace paradnn::server::prediction {
namespace {

using ::testing::ElementsAre;

// A k x k grid with its values at the centres of k strata per axis.
std::vector<std::vector<double>> CentredGrid(int k) {
  std::vector<std::vector<double>> points;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) points.push_back({(i + 0.5) / k, (j + 0.5) / k});
  }
  return points;
}

TEST(SpaceFillingDesignTest, EveryStratumOfEveryAxisHoldsOnePoint) {
  const std::vector<std::vector<double>> grid = CentredGrid(9);
  const std::vector<size_t> design = SpaceFillingDesign(grid, 9, /*seed=*/7);
  ASSERT_EQ(design.size(), 9u);
  std::set<double> rows, columns;
  for (size_t index : design) {
    rows.insert(grid[index][0]);
    columns.insert(grid[index][1]);
  }
  EXPECT_EQ(rows.size(), 9u);
  EXPECT_EQ(columns.size(), 9u);
}

TEST(SpaceFillingDesignTest, TheSameSeedGivesTheSameDesignAndAnotherSeedAnother) {
  const std::vector<std::vector<double>> grid = CentredGrid(12);
  const std::vector<size_t> a = SpaceFillingDesign(grid, 10, 1);
  EXPECT_EQ(a, SpaceFillingDesign(grid, 10, 1));
  EXPECT_NE(a, SpaceFillingDesign(grid, 10, 2));
  // SplitMix64's first outputs are fixed by its definition.
  SeededRandom random(0);
  EXPECT_EQ(random.Next(), 0xE220A8397B1DCDAFULL);
}

TEST(SpaceFillingDesignTest, ItSpreadsFartherThanARandomSubset) {
  const std::vector<std::vector<double>> grid = CentredGrid(12);
  const std::vector<size_t> design = SpaceFillingDesign(grid, 12, 3);
  // The mean closest-pair distance of seeded random subsets of the same size.
  SeededRandom random(11);
  double random_spread = 0;
  constexpr int kSubsets = 50;
  for (int s = 0; s < kSubsets; ++s) {
    std::vector<size_t> subset(grid.size());
    for (size_t i = 0; i < subset.size(); ++i) subset[i] = i;
    for (size_t i = subset.size(); i > 1; --i) std::swap(subset[i - 1], subset[random.Below(i)]);
    subset.resize(12);
    random_spread += MinPairDistance(grid, subset) / kSubsets;
  }
  EXPECT_GT(MinPairDistance(grid, design), 1.5 * random_spread);
}

TEST(SpaceFillingDesignTest, PointsMeasuredBeforeAreNeverChosenAgain) {
  const std::vector<std::vector<double>> grid = CentredGrid(5);
  const std::vector<size_t> already = {0, 6, 12, 18, 24};
  const std::vector<size_t> design = SpaceFillingDesign(grid, 30, 5, already);
  EXPECT_EQ(design.size(), 20u);  // only 20 are left
  const std::set<size_t> unique(design.begin(), design.end());
  EXPECT_EQ(unique.size(), design.size());
  for (size_t index : already) EXPECT_EQ(unique.count(index), 0u) << index;
  EXPECT_TRUE(SpaceFillingDesign(grid, 3, 5, {}).size() == 3);
  EXPECT_TRUE(SpaceFillingDesign({}, 3, 5).empty());
}

v1::ModelConfig Fc(int64_t layer, int64_t node, int64_t batch, const std::string& optimizer) {
  v1::ModelConfig config;
  config.set_family("fc");
  (*config.mutable_params())["layer"] = layer;
  (*config.mutable_params())["node"] = node;
  (*config.mutable_params())["batch"] = batch;
  (*config.mutable_params())["input"] = 2000;
  config.set_optimizer(optimizer);
  return config;
}

TEST(FeatureSpaceTest, GeometricAxesAreLogScaledAndConstantOnesLeftOut) {
  std::vector<v1::ModelConfig> grid;
  for (int64_t node : {32, 64, 128, 256, 512}) {
    for (int64_t layer : {3, 4, 5}) grid.push_back(Fc(layer, node, 64, "sgd"));
  }
  grid.push_back(Fc(3, 32, 64, "rmsprop"));
  const FeatureSpace space = FeatureSpace::Of(grid);
  std::vector<std::string> names;
  for (const FeatureAxis& axis : space.axes()) names.push_back(axis.name);
  // batch and input do not vary; the optimizer does, one indicator per value.
  EXPECT_THAT(names, ElementsAre("layer", "node", "optimizer=rmsprop", "optimizer=sgd"));
  EXPECT_FALSE(space.axes()[0].log_scale);  // 3..5: less than a factor of 4
  EXPECT_TRUE(space.axes()[1].log_scale);
  // node 128 is half-way between 32 and 512 on a log scale.
  EXPECT_THAT(space.Encode(Fc(4, 128, 64, "sgd")), ElementsAre(0.5, 0.5, 0.0, 1.0));
  EXPECT_THAT(space.Encode(Fc(3, 1024, 64, "rmsprop")), ElementsAre(0.0, 1.25, 1.0, 0.0));
}

}  // namespace
}  // namespace paradnn::server::prediction
