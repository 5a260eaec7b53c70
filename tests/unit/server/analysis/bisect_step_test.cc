#include "server/analysis/bisect_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace paradnn::server::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Stacks that differ in three settings; blas_core=Prescott doubles the step.
v1::BisectRequest ThreeSettings() {
  v1::BisectRequest request;
  (*request.mutable_good())["blas_core"] = "Haswell";
  (*request.mutable_good())["env.OMP_WAIT_POLICY"] = "active";
  (*request.mutable_good())["intra_op_threads"] = "2";
  (*request.mutable_bad())["blas_core"] = "Prescott";
  (*request.mutable_bad())["env.OMP_WAIT_POLICY"] = "passive";
  (*request.mutable_bad())["intra_op_threads"] = "1";
  return request;
}

// Three repeats of a 50 ms step (x `guilty_factor` under Prescott), with a
// few per cent of deterministic jitter by measurement.
std::vector<double> StepTimes(const v1::BisectMix& mix, double guilty_factor) {
  double t = 0.05 * std::exp(0.03 * std::sin(1.7 * mix.index()));
  if (mix.settings().at("blas_core") == "Prescott") t *= guilty_factor;
  return {t * 0.99, t, t * 1.02};
}

// Runs the search through BisectStep as `paradnn bisect` does; the final
// response, and the request that carries every measurement.
v1::BisectResponse RunSteps(v1::BisectRequest* request, double guilty_factor) {
  for (int call = 0; call < 100; ++call) {
    absl::StatusOr<v1::BisectResponse> step = BisectStep(*request);
    EXPECT_TRUE(step.ok()) << step.status();
    if (!step.ok() || step->done()) return step.ok() ? *step : v1::BisectResponse();
    EXPECT_EQ(step->measurements(), request->measurements_size());
    EXPECT_EQ(step->pending(0).index(), request->measurements_size());
    for (const v1::BisectMix& mix : step->pending()) {
      v1::BisectMeasurement* m = request->add_measurements();
      *m->mutable_from_bad() = mix.from_bad();
      for (double t : StepTimes(mix, guilty_factor)) m->add_step_seconds(t);
    }
  }
  ADD_FAILURE() << "no end after 100 steps";
  return {};
}

TEST(BisectStepTest, ReplayingTheMeasurementsFindsTheGuiltySetting) {
  v1::BisectRequest request = ThreeSettings();
  const v1::BisectResponse result = RunSteps(&request, 2.0);
  EXPECT_EQ(result.outcome(), "culprits found");
  EXPECT_THAT(result.culprits(), ElementsAre("blas_core"));
  EXPECT_THAT(result.differing(),
              ElementsAre("blas_core", "env.OMP_WAIT_POLICY", "intra_op_threads"));
  EXPECT_NEAR(result.culprit_effect().ratio(), 2.0, 0.1);
  EXPECT_LT(result.culprit_effect().low(), result.culprit_effect().ratio());
  EXPECT_GT(result.culprit_effect().high(), result.culprit_effect().ratio());
  EXPECT_NEAR(result.stack_effect().ratio(), 2.0, 0.1);
  EXPECT_NEAR(result.culprit_share(), 1.0, 0.1);
  EXPECT_FALSE(result.decisions().empty());
  EXPECT_TRUE(result.pending().empty());
  EXPECT_EQ(result.measurements(), request.measurements_size());
  // 8 reference measurements and a few probes; one at a time each setting
  // would take at least 3 x 8.
  EXPECT_LT(result.measurements(), 20);
  EXPECT_THAT(result.summary(), HasSubstr("blas_core carries the effect"));
  // Stateless: the same measurements give the same answer again.
  absl::StatusOr<v1::BisectResponse> again = BisectStep(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->done());
  EXPECT_EQ(again->summary(), result.summary());
}

TEST(BisectStepTest, NoDifferenceStopsAfterTheReferenceRounds) {
  v1::BisectRequest request = ThreeSettings();
  const v1::BisectResponse result = RunSteps(&request, 1.0);
  EXPECT_EQ(result.outcome(), "no difference detected between the stacks");
  EXPECT_TRUE(result.culprits().empty());
  EXPECT_EQ(result.measurements(), 8);  // 4 rounds of A and B
}

TEST(BisectStepTest, APartOfABatchLeavesTheRestOfItPending) {
  v1::BisectRequest request = ThreeSettings();
  absl::StatusOr<v1::BisectResponse> first = BisectStep(request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->pending_size(), 8);
  EXPECT_TRUE(first->pending(0).from_bad().empty());  // A first, then B
  EXPECT_EQ(first->pending(1).from_bad_size(), 3);
  EXPECT_EQ(first->pending(1).settings().at("blas_core"), "Prescott");
  for (int i = 0; i < 3; ++i) {
    v1::BisectMeasurement* m = request.add_measurements();
    *m->mutable_from_bad() = first->pending(i).from_bad();
    m->add_step_seconds(0.05);
  }
  absl::StatusOr<v1::BisectResponse> rest = BisectStep(request);
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_EQ(rest->pending_size(), 5);
  EXPECT_EQ(rest->pending(0).index(), 3);
  EXPECT_EQ(rest->pending(0).round(), first->pending(3).round());
  EXPECT_FALSE(rest->done());
  EXPECT_EQ(rest->outcome(), "searching");
}

TEST(BisectStepTest, RefusesWhatTheSearchDidNotAskFor) {
  v1::BisectRequest request = ThreeSettings();
  v1::BisectMeasurement* wrong = request.add_measurements();
  wrong->add_from_bad("blas_core");
  absl::StatusOr<v1::BisectResponse> step = BisectStep(request);
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.status().message(),
            "bisect.measurements[0]: measured A with blas_core from B; the search asked for A "
            "(nothing from B)");

  v1::BisectRequest same;
  (*same.mutable_good())["blas_core"] = "Haswell";
  (*same.mutable_bad())["blas_core"] = "Haswell";
  EXPECT_EQ(BisectStep(same).status().message(),
            "bisect: the two stacks do not differ in any setting");

  v1::BisectRequest options = ThreeSettings();
  options.set_reference_rounds(1);
  EXPECT_THAT(std::string(BisectStep(options).status().message()),
              HasSubstr("reference_rounds must be at least 2"));
  options = ThreeSettings();
  options.set_max_measurements(5000);
  EXPECT_EQ(BisectStep(options).status().message(),
            "bisect.max_measurements: 5000; allowed 1..1000");

  // One more measurement than the finished search asked for.
  v1::BisectRequest finished = ThreeSettings();
  const v1::BisectResponse result = RunSteps(&finished, 1.0);
  ASSERT_TRUE(result.done());
  finished.add_measurements()->add_step_seconds(0.05);
  EXPECT_EQ(BisectStep(finished).status().message(),
            absl::StrCat("bisect.measurements[", result.measurements(),
                         "]: the search was done after ", result.measurements(), " measurements"));
}

}  // namespace
}  // namespace paradnn::server::analysis
