// The allreduce analysis (a platform's communication roof) in the CLI: its
// table, CSV and figure (bus bandwidth against message size, log x, points
// and the fitted roof per series), `analyze allreduce` building its
// request, the report's section only for allreduce sweeps, and the roof
// columns of scale_out.
#include "client/allreduce_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "client/analysis_plots.h"
#include "client/analysis_report.h"
#include "client/analysis_views.h"
#include "client/analyze_command.h"
#include "client/analyze_flags.h"
#include "tests/unit/client/analysis_plots_test_support.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::HaveGnuplot;
using testing_support::ReadFile;
using testing_support::TempDirTest;

// Two series on one platform: 4 ranks fitted (alpha 40 us, beta 2 GB/s),
// 2 ranks measured at one size only (no fit).
v1::AnalyzeResponse Allreduce() {
  v1::AnalyzeResponse response;
  v1::AllreduceResponse& a = *response.mutable_allreduce();
  v1::AllreduceSeries& four = *a.add_series();
  four.set_platform("AMD EPYC 7B13");
  four.set_fingerprint("cpu-a");
  four.set_backend("gloo");
  four.set_ranks(4);
  for (int64_t bytes : {1024, 65536, 4194304}) {
    v1::AllreducePoint& p = *four.add_points();
    p.set_bytes(bytes);
    p.set_runs(3);
    const double bus = bytes * 1.5;
    p.set_time_s(40e-6 + bus / 2e9);
    p.set_algorithm_bytes_per_sec(bytes / p.time_s());
    p.set_bus_bytes_per_sec(bus / p.time_s());
    p.set_roof_time_s(p.time_s() * 0.9);
    p.set_roof_fraction(0.9);
  }
  v1::AllreduceRoof& roof = *four.mutable_roof();
  roof.set_fitted(true);
  roof.set_alpha_s(40e-6);
  roof.set_alpha_low_s(35e-6);
  roof.set_alpha_high_s(45e-6);
  roof.set_beta_bytes_per_sec(2e9);
  roof.set_beta_low_bytes_per_sec(1.9e9);
  roof.set_relative_residual(0.012);
  roof.set_sizes(3);
  roof.set_runs(9);
  roof.add_sweep_ids(12);
  v1::AllreduceSeries& two = *a.add_series();
  two.set_platform("AMD EPYC 7B13");
  two.set_backend("gloo");
  two.set_ranks(2);
  v1::AllreducePoint& only = *two.add_points();
  only.set_bytes(1024);
  only.set_runs(1);
  only.set_time_s(3e-5);
  only.set_bus_bytes_per_sec(1024 / 3e-5);
  two.mutable_roof()->set_note("no fit: it needs runs at two or more message sizes");
  two.mutable_roof()->set_sizes(1);
  two.mutable_roof()->set_runs(1);
  two.mutable_roof()->add_sweep_ids(12);
  return response;
}

TEST(AllreduceViewsTest, TableShowsEachSeriesRoofWithIntervalsAndItsPoints) {
  const std::string table = FormatAnalysis(Allreduce(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("all-reduce roofs: 2 series"));
  EXPECT_THAT(table, HasSubstr("AMD EPYC 7B13, gloo, 4 ranks"));
  EXPECT_THAT(table, HasSubstr("beta 2.00 GB/s [1.90 GB/s, unbounded]"));
  EXPECT_THAT(table, HasSubstr("sweep 12, 9 runs at 3 sizes, residual 1.20%"));
  EXPECT_THAT(table, HasSubstr("90.0%"));  // each point's fraction of the roof
  EXPECT_THAT(table, HasSubstr("no roof: no fit: it needs runs at two or more message sizes"));
}

TEST(AllreduceViewsTest, CsvHasARowPerPointWithItsSeriesAndRoof) {
  const std::string csv = FormatAnalysis(Allreduce(), OutputFormat::kCsv);
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 3 + 1);
  EXPECT_THAT(lines[0], HasSubstr("platform,fingerprint,backend,ranks,fitted,alpha_s"));
  EXPECT_THAT(lines[1], HasSubstr("AMD EPYC 7B13,cpu-a,gloo,4,true,4e-05,3.5e-05,4.5e-05,"
                                  "2e+09,1.9e+09,,"));
  EXPECT_THAT(lines[4], HasSubstr(",2,false,"));
}

TEST(AllreduceViewsTest, ScriptDrawsBusBandwidthOnLogXWithTheFittedCurve) {
  const std::string script = GnuplotScript(Allreduce(), "figure.svg");
  EXPECT_THAT(script, HasSubstr("set logscale x 2"));
  EXPECT_THAT(script, HasSubstr("$points0 using 1:2 with points"));
  EXPECT_THAT(script, HasSubstr("$roof0 using 1:2 with lines"));
  EXPECT_THAT(script, HasSubstr("'AMD EPYC 7B13, gloo, 2 ranks'"));  // its points, no curve
  EXPECT_THAT(script, Not(HasSubstr("$roof1")));
}

TEST_F(TempDirTest, AllreduceRendersAsPngAndSvg) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  for (const char* name : {"allreduce.png", "allreduce.svg"}) {
    const absl::Status drawn = PlotAnalysis(Allreduce(), Path(name));
    ASSERT_TRUE(drawn.ok()) << drawn << "\n" << GnuplotScript(Allreduce(), Path(name));
    EXPECT_FALSE(ReadFile(Path(name)).empty()) << name;
  }
  v1::AnalyzeResponse empty;
  empty.mutable_allreduce();
  EXPECT_TRUE(PlotAnalysis(empty, Path("empty.png")).ok());
}

TEST(AllreduceViewsTest, AnalyzeAllreduceAsksForIt) {
  AnalyzeFlags flags;
  flags.sweep_ids = {3};
  absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest("allreduce", flags);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->has_allreduce());
  EXPECT_EQ(request->selection().sweep_ids(0), 3);
}

v1::SweepStatus SweepOf(int64_t id, const std::string& family) {
  v1::SweepStatus sweep;
  sweep.set_sweep_id(id);
  sweep.set_family(family);
  sweep.mutable_spec()->set_family(family);
  for (const char* param : {"hosts", "bytes"}) {
    for (int64_t value : {2, 4}) {
      (*sweep.mutable_spec()->mutable_params())[param].mutable_values()->add_values(value);
    }
  }
  return sweep;
}

TEST(AllreduceReportTest, OneSectionOverTheAllreduceSweepsAndNoScaleOutOfThem) {
  EXPECT_TRUE(PlanAllreduceSections({SweepOf(1, "fc")}).empty());
  const std::vector<PlannedAnalysis> planned =
      PlanAllreduceSections({SweepOf(1, "allreduce"), SweepOf(2, "fc"), SweepOf(3, "allreduce")});
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_TRUE(planned[0].request.has_allreduce());
  EXPECT_THAT(planned[0].request.selection().sweep_ids(), ::testing::ElementsAre(1, 3));
  EXPECT_EQ(planned[0].request.selection().where().at("family"), "allreduce");
  // Its hosts are the all-reduce's ranks: no scale_out section, no heat map.
  EXPECT_TRUE(PlanScaleOutSections({SweepOf(1, "allreduce")}).empty());
  for (const PlannedAnalysis& analysis : PlanReport({SweepOf(1, "allreduce")})) {
    EXPECT_FALSE(analysis.request.has_heatmap()) << analysis.title;
    EXPECT_FALSE(analysis.request.has_scale_out()) << analysis.title;
  }
}

TEST(AllreduceViewsTest, ScaleOutShowsEachPointsRoofAndTheSeriesRoofs) {
  v1::AnalyzeResponse response;
  v1::ScaleOutResponse& s = *response.mutable_scale_out();
  s.set_field("hosts");
  v1::ScaleOutSeries& series = *s.add_series();
  series.set_mode("weak");
  series.set_config("fc layer=2");
  series.add_roofs("AMD (cpu-a), gloo, 2 ranks: alpha 40 us, beta 2 GB/s (sweep 12)");
  series.set_note(
      "no all-reduce roof for platform AMD (cpu-a), gloo, 4 ranks: run an allreduce sweep");
  v1::ScaleOutPoint& p = *series.add_points();
  p.set_n(2);
  p.set_ranks(2);
  p.set_step_s(0.1);
  p.set_allreduce_s(0.02);
  p.set_roof_allreduce_s(0.015);
  p.set_roof_fraction(0.75);
  p.set_allreduce_bytes(8'000'000);
  p.set_buckets(4);
  const std::string table = FormatAnalysis(response, OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("roof AR"));
  EXPECT_THAT(table, HasSubstr("75.0%"));
  EXPECT_THAT(table, HasSubstr("all-reduce roof AMD (cpu-a), gloo, 2 ranks"));
  EXPECT_THAT(table, HasSubstr("note: no all-reduce roof for platform AMD (cpu-a), gloo, 4"));
  const std::string csv = FormatAnalysis(response, OutputFormat::kCsv);
  EXPECT_THAT(csv, HasSubstr("allreduce_bytes,buckets,roof_allreduce_s,roof_fraction"));
  EXPECT_THAT(csv, HasSubstr(",8000000,4,0.015,0.75,"));
}

}  // namespace
}  // namespace paradnn::client
