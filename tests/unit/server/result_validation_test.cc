#include "server/result_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace paradnn::server {
namespace {

v1::Measurement Valid() {
  v1::Measurement m;
  m.set_outcome(v1::OK);
  m.set_examples_per_sec(100);
  m.mutable_stats()->set_steps(2);
  m.mutable_stats()->set_median_s(0.5);
  m.add_step_seconds(0.5);
  m.add_step_seconds(0.5);
  m.set_first_loss(-3.5);  // a torchscript "output" loss may be negative
  m.set_subnormal_gradient_fraction(-1);
  m.mutable_stats()->set_lag1_autocorrelation(-0.79);  // alternating step times
  (*m.mutable_stack())["blas_core"] = "Haswell";
  m.add_op_profile()->set_self_seconds(0.1);
  return m;
}

TEST(ResultValidationTest, AnHonestResultPasses) {
  EXPECT_TRUE(ValidateMeasurement(Valid()).ok()) << ValidateMeasurement(Valid());
  v1::Measurement failed;
  failed.set_outcome(v1::CRASHED);
  failed.set_error("runner killed by signal 9");
  EXPECT_TRUE(ValidateMeasurement(failed).ok());
}

TEST(ResultValidationTest, EachBrokenRuleNamesItsField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string message;
    std::function<void(v1::Measurement*)> spoil;
  };
  const std::vector<Case> cases = {
      {"measurement.stats.median_s: nan; a result's numbers must be finite and >= 0",
       [nan](v1::Measurement* m) { m->mutable_stats()->set_median_s(nan); }},
      {"measurement.examples_per_sec: -123;",
       [](v1::Measurement* m) { m->set_examples_per_sec(-123); }},
      {"measurement.step_seconds[1]: -inf;",
       [inf](v1::Measurement* m) { m->set_step_seconds(1, -inf); }},
      {"measurement.op_profile[0].self_seconds: nan;",
       [nan](v1::Measurement* m) { m->mutable_op_profile(0)->set_self_seconds(nan); }},
      {"measurement.counts.params: -5;",
       [](v1::Measurement* m) { m->mutable_counts()->set_params(-5); }},
      {"measurement.first_loss: inf;", [inf](v1::Measurement* m) { m->set_first_loss(inf); }},
      {"measurement.subnormal_gradient_fraction: -2;",
       [](v1::Measurement* m) { m->set_subnormal_gradient_fraction(-2); }},
      {"measurement.outcome: 0 is not an outcome",
       [](v1::Measurement* m) { m->set_outcome(v1::OUTCOME_UNSPECIFIED); }},
      {"measurement.stats.steps: 100001 entries; a result may have at most 100000",
       [](v1::Measurement* m) { m->mutable_stats()->set_steps(100001); }},
      {"measurement.suspect: 65 entries",
       [](v1::Measurement* m) {
         for (int i = 0; i < 65; ++i) m->add_suspect("x");
       }},
      {"measurement.error: 16385 bytes; at most 16384",
       [](v1::Measurement* m) { m->set_error(std::string(16385, 'e')); }},
      {"measurement: ",
       [](v1::Measurement* m) { m->set_thread_pinning(std::string((8 << 20) - 40, 'p')); }},
  };
  for (const Case& c : cases) {
    v1::Measurement m = Valid();
    c.spoil(&m);
    const absl::Status status = ValidateMeasurement(m);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(std::string(status.message()).rfind(c.message, 0), 0u)
        << "want prefix: " << c.message << "\ngot: " << status.message();
  }
}

TEST(ResultValidationTest, TheRefusedResultKeepsNoFigures) {
  v1::Measurement m = Valid();
  m.set_examples_per_sec(-1);
  m.set_device("cpu");
  const v1::Measurement refused = RefusedMeasurement(m, ValidateMeasurement(m));
  EXPECT_EQ(refused.outcome(), v1::ERROR);
  EXPECT_EQ(refused.device(), "cpu");
  EXPECT_EQ(refused.examples_per_sec(), 0);
  EXPECT_EQ(refused.step_seconds_size(), 0);
  EXPECT_EQ(
      refused.error().rfind("refused by the coordinator: measurement.examples_per_sec: -1", 0), 0u)
      << refused.error();
  EXPECT_TRUE(ValidateMeasurement(refused).ok());
}

}  // namespace
}  // namespace paradnn::server
