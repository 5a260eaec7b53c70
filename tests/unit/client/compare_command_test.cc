// `paradnn compare`'s request (client/compare_command.h): two sweeps become
// a speedup over the field "sweep", two values of a field one within the
// given sweeps; every misuse is refused naming what to give instead.
#include "client/compare_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

TEST(CompareCommandTest, TwoSweepsAreComparedOverTheSweepField) {
  CompareFlags flags;
  flags.sides = {"3", "5"};
  flags.where = {"precision=float32"};
  absl::StatusOr<v1::AnalyzeRequest> request = BuildCompareRequest(flags);
  ASSERT_TRUE(request.ok()) << request.status();
  const v1::SpeedupRequest& s = request->speedup();
  EXPECT_EQ(s.field(), "sweep");
  EXPECT_EQ(s.baseline(), "3");
  EXPECT_EQ(s.candidate(), "5");
  EXPECT_EQ(s.metric(), "step_time");
  EXPECT_DOUBLE_EQ(s.fdr(), 0.05);
  EXPECT_THAT(request->selection().sweep_ids(), ::testing::ElementsAre(3, 5));
  EXPECT_EQ(request->selection().where().at("precision"), "float32");
}

TEST(CompareCommandTest, TwoValuesOfAFieldWithinTheGivenSweeps) {
  CompareFlags flags;
  flags.sides = {"Prescott", "Zen"};
  flags.field = "blas_core";
  flags.sweeps = {7};
  flags.fdr = 0.01;
  absl::StatusOr<v1::AnalyzeRequest> request = BuildCompareRequest(flags);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->speedup().field(), "blas_core");
  EXPECT_EQ(request->speedup().baseline(), "Prescott");
  EXPECT_THAT(request->selection().sweep_ids(), ::testing::ElementsAre(7));
  EXPECT_DOUBLE_EQ(request->speedup().fdr(), 0.01);
}

TEST(CompareCommandTest, RefusesWhatItCannotCompare) {
  auto refused = [](CompareFlags flags) {
    absl::StatusOr<v1::AnalyzeRequest> request = BuildCompareRequest(flags);
    EXPECT_FALSE(request.ok());
    return std::string(request.status().message());
  };
  CompareFlags not_sweeps;
  not_sweeps.sides = {"Prescott", "Zen"};
  EXPECT_THAT(refused(not_sweeps), HasSubstr("'Prescott' is not a sweep id"));
  EXPECT_THAT(refused(not_sweeps), HasSubstr("--field FIELD and --sweep ID"));
  CompareFlags no_sweep = not_sweeps;
  no_sweep.field = "blas_core";
  EXPECT_THAT(refused(no_sweep), HasSubstr("give the sweeps to look in (--sweep ID)"));
  CompareFlags same;
  same.sides = {"3", "3"};
  EXPECT_THAT(refused(same), HasSubstr("both '3'"));
  CompareFlags stray_sweep;
  stray_sweep.sides = {"3", "4"};
  stray_sweep.sweeps = {5};
  EXPECT_THAT(refused(stray_sweep), HasSubstr("--sweep goes with --field"));
  CompareFlags bad_fdr;
  bad_fdr.sides = {"3", "4"};
  bad_fdr.fdr = 1.5;
  EXPECT_THAT(refused(bad_fdr), HasSubstr("between 0 and 1"));
}

}  // namespace
}  // namespace paradnn::client
