// The inception family's rules and analytic counts against figures worked
// by hand (docs/models.md "Inception").
#include "model/families/inception.h"

#include <gtest/gtest.h>

#include "model/family.h"
#include "model/model_counts.h"

namespace paradnn::model {
namespace {

TEST(InceptionFamilyTest, ParametersAndMacsAreTheLayersOnes) {
  // block 2, branches 4, filter 16, image 32, output 10: C = 64, side 16.
  const InceptionShape s{2, 4, 16, 32, 10, 8};
  const v1::ModelCounts c = CountModel(MakeInceptionSpec(s));
  const int64_t stem = 27 * 64 + 2 * 64;
  const int64_t branch = 64 * 16 + 2 * 16 + 9 * 16 * 16 + 2 * 16;
  const int64_t head = 64 * 10 + 10;
  EXPECT_EQ(c.params(), stem + 2 * 4 * branch + head);  // 29642
  const int64_t side2 = 16 * 16;
  const int64_t macs = 27 * 64 * side2 + 2 * 4 * (64 * 16 + 9 * 16 * 16) * side2 + 64 * 10;
  EXPECT_EQ(c.macs_per_example(), macs);
  EXPECT_DOUBLE_EQ(c.model_flops(), 6.0 * static_cast<double>(macs) * 8);
}

TEST(InceptionFamilyTest, ItsWidthIsItsBranches) {
  for (int64_t branches : {1, 2, 5, 16}) {
    const OperatorWidth w = CountWork(MakeInceptionSpec({6, branches, 4, 8, 2, 1})).width;
    EXPECT_EQ(w.heavy_ops, 1 + 6 * 2 * branches + 1);
    EXPECT_EQ(w.longest_path, 1 + 6 * 2 + 1);
  }
}

TEST(InceptionFamilyTest, RangesAreEnforcedNamingTheField) {
  const FamilyDef* family = FindFamily("inception");
  ASSERT_NE(family, nullptr);
  const ParamRule* branches = FindParam(*family, "branches");
  ASSERT_NE(branches, nullptr);
  EXPECT_EQ(branches->min_value, 1);
  EXPECT_EQ(branches->max_value, 16);
  v1::ModelConfig config;
  config.set_family("inception");
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"block", 1},
                                   {"branches", 17},
                                   {"filter", 4},
                                   {"image", 8},
                                   {"output", 2},
                                   {"batch", 1}}) {
    (*config.mutable_params())[key] = value;
  }
  const absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, FieldStyle::kProto);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("config.params.branches"), std::string::npos)
      << spec.status();
}

}  // namespace
}  // namespace paradnn::model
