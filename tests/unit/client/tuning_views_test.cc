// The tuning analysis (the paper's thread-setting findings) in the CLI: its
// table (findings per family, then the configurations behind them), CSV,
// fractions in percent, no figure, and `analyze tuning` building its
// request.
#include "client/tuning_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "client/analysis_plots.h"
#include "client/analysis_views.h"
#include "client/analyze_flags.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

constexpr char kSmallFc[] = "fc batch=16 layer=4 precision=float32 optimizer=rmsprop";
constexpr char kLargeFc[] = "fc batch=512 layer=4 precision=float32 optimizer=rmsprop";

v1::TuningConfig TunedFc(const std::string& label, double one_pool, double pools,
                         const std::string& verdict) {
  v1::TuningConfig c;
  c.set_config(label);
  c.set_family("fc");
  c.set_platform("AMD EPYC");
  c.set_width(1);
  c.set_max_intra_op_threads(2);
  const bool pools_best = pools < one_pool;
  c.set_best_setting(pools_best ? "intra=1,inter=2" : "intra=2,inter=1");
  c.set_best_value(pools_best ? pools : one_pool);
  c.set_one_pool_setting("intra=2,inter=1");
  c.set_one_pool_value(one_pool);
  c.set_pools_setting("intra=1,inter=2");
  c.set_pools_value(pools);
  c.set_pool_gain(one_pool / pools);
  c.set_pools_verdict(verdict);
  return c;
}

// Two narrow FCs (batch 16: pools 1.5x faster; batch 512: no difference)
// and the two findings they bear on.
v1::AnalyzeResponse Tuning() {
  v1::AnalyzeResponse response;
  v1::TuningResponse& t = *response.mutable_tuning();
  t.set_metric("step_time");
  t.set_lower_is_better(true);
  t.set_fdr(0.05);
  *t.add_configs() = TunedFc(kSmallFc, 0.015, 0.010, "faster");
  *t.add_configs() = TunedFc(kLargeFc, 0.100, 0.100, "no difference detected");
  v1::TuningFinding& narrow = *t.add_findings();
  narrow.set_key("narrow_one_pool");
  narrow.set_finding("narrow models train fastest with one pool and every core");
  narrow.set_family("fc");
  narrow.set_applies(2);
  narrow.set_disagree(1);
  narrow.set_no_difference(1);
  narrow.set_statement(
      "this host agrees in 0 of 2 fc configurations; disagrees in 1; no difference detected in 1");
  for (const char* label : {kSmallFc, kLargeFc}) {
    v1::TuningCheck& check = *narrow.add_checks();
    check.set_config(label);
    check.set_platform("AMD EPYC");
    check.set_outcome(std::string(label) == kSmallFc ? "disagrees" : "no difference detected");
    check.set_detail("best intra=1,inter=2 against one pool and every core");
  }
  v1::TuningFinding& batch = *t.add_findings();
  batch.set_key("small_batch_pools");
  batch.set_finding("small batches gain more from pools than large ones");
  batch.set_family("fc");
  batch.set_applies(1);
  batch.set_agree(1);
  batch.set_statement("this host agrees in 1 of 1 fc batch groups");
  v1::TuningCheck& group = *batch.add_checks();
  group.set_config("fc layer=4 precision=float32 optimizer=rmsprop, batch 16 vs 512");
  group.set_platform("AMD EPYC");
  group.set_outcome("agrees");
  group.set_detail("pool gain 1.50x at batch 16, 1.00x at batch 512");
  return response;
}

TEST(TuningViewsTest, TableStatesEachFindingPerFamilyThenTheConfigurations) {
  const std::string table = FormatAnalysis(Tuning(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("step_time (s), the median over each setting's repeat rounds"));
  EXPECT_THAT(table, HasSubstr("false discovery rate 5.00%"));
  EXPECT_THAT(table, HasSubstr("finding"));
  EXPECT_THAT(table, HasSubstr("not measured"));
  EXPECT_THAT(table,
              HasSubstr("narrow models train fastest with one pool and every core (fc): this "
                        "host agrees in 0 of 2 fc configurations; disagrees in 1"));
  EXPECT_THAT(table, HasSubstr("  disagrees: fc batch=16 layer=4"));
  EXPECT_THAT(table, HasSubstr("  agrees: fc layer=4 precision=float32 optimizer=rmsprop, batch "
                               "16 vs 512\n    pool gain 1.50x"));
  // The configurations: step times in ms, the gain and the verdict.
  const size_t configurations = table.find("\nconfigurations (");
  ASSERT_NE(configurations, std::string::npos);
  const std::string rows = table.substr(configurations);
  EXPECT_THAT(rows, HasSubstr("10.0 ms"));
  EXPECT_THAT(rows, HasSubstr("15.0 ms"));
  EXPECT_THAT(rows, HasSubstr("1.50×"));
  EXPECT_THAT(rows, HasSubstr("faster"));
  EXPECT_THAT(rows, HasSubstr("1.00"));  // the width
}

TEST(TuningViewsTest, TableSaysWhenNoFindingApplies) {
  v1::AnalyzeResponse response;
  v1::TuningResponse& t = *response.mutable_tuning();
  t.set_metric("step_time");
  v1::TuningConfig& c = *t.add_configs();
  c.set_config("torchscript model=abc");
  c.set_best_setting("libtorch");
  c.set_best_value(0.01);
  const std::string table = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("no finding applies"));
  EXPECT_THAT(table, HasSubstr("torchscript model=abc"));
}

TEST(TuningViewsTest, CsvHasARowPerCheckWithItsConfigurationsMeasurements) {
  const std::string csv = FormatAnalysis(Tuning(), OutputFormat::kCsv);
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 2 + 1);
  EXPECT_THAT(lines[0], HasSubstr("finding_key,finding,family,statement,config,platform,outcome,"
                                  "detail,width,best_setting,best_value"));
  EXPECT_THAT(lines[1], HasSubstr("narrow_one_pool,"));
  EXPECT_THAT(lines[1], HasSubstr(",disagrees,"));
  // Settings hold commas: quoted (RFC 4180).
  EXPECT_THAT(lines[1], HasSubstr(R"(,1,"intra=1,inter=2",0.01,"intra=2,inter=1",0.015,)"
                                  R"("intra=1,inter=2",0.01,1.5,faster)"));
  // A batch group is no one configuration: its measurements are its detail.
  EXPECT_THAT(lines[3], HasSubstr("small_batch_pools,"));
  EXPECT_THAT(lines[3], ::testing::EndsWith("at batch 512\",,,,,,,,,"));
}

TEST(TuningViewsTest, FractionMetricsShowInPercentAndGainsStay) {
  v1::AnalyzeResponse response = Tuning();
  response.mutable_tuning()->set_metric("mfu");
  ToDisplayUnits(&response);
  const v1::TuningConfig& c = response.tuning().configs(0);
  EXPECT_DOUBLE_EQ(c.pools_value(), 1.0);
  EXPECT_DOUBLE_EQ(c.one_pool_value(), 1.5);
  EXPECT_DOUBLE_EQ(c.pool_gain(), 1.5);
}

TEST(TuningViewsTest, NoFigureButTheTable) {
  EXPECT_THAT(GnuplotScript(Tuning(), "figure.svg"), HasSubstr("tuning has no figure yet"));
}

TEST(TuningViewsTest, AnalyzeTuningAsksForItWithItsOptions) {
  AnalyzeFlags flags;
  flags.sweep_ids = {7};
  flags.fdr = 0.1;
  absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest("tuning", flags);
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_TRUE(request->has_tuning());
  EXPECT_EQ(request->tuning().metric(), "");  // the coordinator's default, step_time
  EXPECT_DOUBLE_EQ(request->tuning().fdr(), 0.1);
  EXPECT_EQ(request->selection().sweep_ids(0), 7);
}

}  // namespace
}  // namespace paradnn::client
