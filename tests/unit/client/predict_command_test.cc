#include "client/predict_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "client/output_format.h"
#include "client/sweep_file.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

TEST(ParseConfigAssignmentsTest, IntegersAreParamsOthersOptionsAndTwoFieldsByName) {
  absl::StatusOr<v1::ModelConfig> config = ParseConfigAssignments(
      "layer=16, node=4096,block_fn=bottleneck,precision=bfloat16,"
      "optimizer=sgd");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->params().at("layer"), 16);
  EXPECT_EQ(config->params().at("node"), 4096);
  EXPECT_EQ(config->options().at("block_fn"), "bottleneck");
  EXPECT_EQ(config->precision(), "bfloat16");
  EXPECT_EQ(config->optimizer(), "sgd");
  EXPECT_EQ(config->params().size(), 2u);
}

TEST(ParseConfigAssignmentsTest, BadPartsAreNamed) {
  EXPECT_THAT(ParseConfigAssignments("layer").status().message(),
              HasSubstr("'layer' is not KEY=VALUE"));
  EXPECT_THAT(ParseConfigAssignments("layer=1,layer=2").status().message(),
              HasSubstr("'layer' is given twice"));
  EXPECT_THAT(ParseConfigAssignments("=4").status().message(), HasSubstr("not KEY=VALUE"));
  EXPECT_FALSE(ParseConfigAssignments("").ok());
}

// A one-configuration FC sweep file ending in `tail`, parsed.
absl::StatusOr<v1::SweepSpec> ParseTinySweep(const std::string& tail) {
  return ParseSweepText(
      "name: b\nfamily: fc\nparams: {layer: 1, node: 8, input: 8, output: 4, batch: 4}\n" + tail,
      "b.yaml", 0);
}

TEST(BudgetedSweepFileTest, RunBudgetTakesADurationAndRefusesOtherText) {
  absl::StatusOr<v1::SweepSpec> spec = ParseTinySweep("run: {budget: 1h30m}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DOUBLE_EQ(spec->run().budget_seconds(), 5400);
  absl::StatusOr<v1::SweepSpec> bad = ParseTinySweep("run: {budget: soon}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("run.budget"));
  EXPECT_THAT(bad.status().message(), HasSubstr("e.g. 90s, 30m, 1h"));
  absl::StatusOr<v1::SweepSpec> repeated = ParseTinySweep("repeats: 3\nrun: {budget: 10m}\n");
  ASSERT_FALSE(repeated.ok());
  EXPECT_THAT(repeated.status().message(), HasSubstr("at most once"));
}

// A predicted row says so in every format, with its interval; a measured
// one has none.
TEST(PredictedRowsTest, SourceAndIntervalInEveryFormat) {
  v1::ResultRow measured;
  measured.set_job_id(1);
  measured.set_state(v1::JOB_DONE);
  measured.mutable_config()->set_family("fc");
  (*measured.mutable_config()->mutable_params())["node"] = 64;
  measured.mutable_measurement()->set_outcome(v1::OK);
  measured.mutable_measurement()->mutable_stats()->set_median_s(0.010);
  measured.mutable_measurement()->mutable_stats()->set_steps(5);
  v1::ResultRow predicted;
  predicted.set_job_id(2);
  predicted.set_state(v1::JOB_PREDICTED);
  *predicted.mutable_config() = measured.config();
  (*predicted.mutable_config()->mutable_params())["node"] = 128;
  v1::PredictedStep* p = predicted.mutable_prediction();
  p->set_step_seconds(0.020);
  p->set_step_seconds_low(0.018);
  p->set_step_seconds_high(0.023);
  p->set_measurements(9);
  const ResultTable table = BuildResultTable({measured, predicted});
  const std::string csv = FormatCsv(table, false);
  EXPECT_THAT(csv, HasSubstr("source"));
  EXPECT_THAT(csv, HasSubstr(",measured,"));
  EXPECT_THAT(csv, HasSubstr(",predicted,"));
  EXPECT_THAT(csv, HasSubstr(",20,18,23,9,"));
  const std::string narrow = FormatNarrowTable(table);
  EXPECT_THAT(narrow, HasSubstr("predicted"));
  EXPECT_THAT(narrow, HasSubstr("pred lo"));
  EXPECT_THAT(narrow, HasSubstr("PREDICTED"));
}

}  // namespace
}  // namespace paradnn::client
