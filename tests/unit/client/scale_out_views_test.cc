// The scale-out analysis in the CLI: its table, CSV and figure (a
// log-log throughput panel with ideal lines beside the stacked step),
// `analyze scaling --field hosts|devices` asking for it, and the report's
// sections only where hosts or devices vary.
#include "client/scale_out_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "client/analysis_plots.h"
#include "client/analysis_report.h"
#include "client/analysis_views.h"
#include "client/analyze_flags.h"
#include "tests/unit/client/analysis_plots_test_support.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::HaveGnuplot;
using testing_support::ReadFile;
using testing_support::TempDirTest;

v1::ScaleOutPoint Point(int32_t n, int64_t batch, double step_s, double exposed_s,
                        double efficiency) {
  v1::ScaleOutPoint p;
  p.set_n(n);
  p.set_ranks(n);
  p.set_batch(batch);
  p.set_global_batch(batch * n);
  p.set_runs(1);
  p.set_step_s(step_s);
  p.set_examples_per_sec(batch * n / step_s);
  p.set_ideal_examples_per_sec(n * batch / 0.1);
  p.set_speedup(efficiency * n);
  p.set_efficiency(efficiency);
  p.set_exposed_communication_s(exposed_s);
  p.set_optimizer_s(0.01);
  p.set_compute_s(step_s - exposed_s - 0.01);
  p.set_communication_share(exposed_s / step_s);
  p.set_bus_bytes_per_sec(2.5e9);
  p.set_backend("gloo");
  p.set_data_parallel(true);
  return p;
}

// A weak series over hosts 1, 2, 4 whose communication passes half of the
// step between 2 and 4, and a series that is neither weak nor strong.
v1::AnalyzeResponse ScaleOut() {
  v1::AnalyzeResponse response;
  v1::ScaleOutResponse& s = *response.mutable_scale_out();
  s.set_field("hosts");
  s.set_weak_series(1);
  s.set_neither_series(1);
  v1::ScaleOutSeries& weak = *s.add_series();
  weak.set_config("fc layer=2 node=1024 precision=float32 optimizer=sgd");
  weak.set_mode("weak");
  weak.set_batch(64);
  weak.set_baseline_n(1);
  weak.set_baseline_kind("data-parallel 1 rank");
  weak.set_baseline("hosts=1: a 1-replica run on the same communication path (gloo)");
  weak.set_crossover_n(2.83);
  weak.set_crossover("at hosts ~ 2.83 (between 2 and 4)");
  *weak.add_points() = Point(1, 64, 0.1, 0, 1);
  *weak.add_points() = Point(2, 64, 0.2, 0.06, 0.5);
  *weak.add_points() = Point(4, 64, 0.5, 0.35, 0.2);
  v1::ScaleOutSeries& neither = *s.add_series();
  neither.set_config("fc layer=4 node=1024 precision=float32 optimizer=sgd");
  neither.set_mode("neither");
  neither.set_note("batch is neither constant nor inversely proportional to hosts");
  v1::ScaleOutPoint odd = Point(1, 64, 0.1, 0, 1);
  odd.clear_efficiency();
  odd.clear_speedup();
  *neither.add_points() = odd;
  odd = Point(2, 100, 0.2, 0.02, 1);
  odd.clear_efficiency();
  odd.clear_speedup();
  *neither.add_points() = odd;
  return response;
}

TEST(ScaleOutViewsTest, TableShowsEachSeriesBaselineCrossingAndBreakdown) {
  const std::string table = FormatAnalysis(ScaleOut(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("scale-out over hosts: 2 series (1 weak, 0 strong, 1 neither)"));
  EXPECT_THAT(table, HasSubstr("weak scaling, batch 64 per replica: fc layer=2"));
  EXPECT_THAT(table, HasSubstr("baseline hosts=1: a 1-replica run on the same communication"));
  EXPECT_THAT(table, HasSubstr("crosses 50 %: at hosts ~ 2.83 (between 2 and 4)"));
  EXPECT_THAT(table, HasSubstr("exposed comm"));
  EXPECT_THAT(table, HasSubstr("20.0%"));  // hosts=4's efficiency
  EXPECT_THAT(table, HasSubstr("70.0%"));  // and its communication share
  EXPECT_THAT(table, HasSubstr("note: batch is neither constant"));
}

TEST(ScaleOutViewsTest, CsvHasARowPerPointWithItsSeries) {
  const std::string csv = FormatAnalysis(ScaleOut(), OutputFormat::kCsv);
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 3 + 2);
  EXPECT_THAT(lines[0], HasSubstr("config,mode,series_batch"));
  EXPECT_THAT(lines[0], HasSubstr(",hosts,ranks,batch,"));
  EXPECT_THAT(lines[3], HasSubstr(",weak,64,0,1,data-parallel 1 rank,2.83,4,4,64,256,"));
  // A series that is neither has no speedup or efficiency: empty fields.
  EXPECT_THAT(lines[5], HasSubstr(",neither,"));
  EXPECT_THAT(lines[5], HasSubstr(",,,"));
}

TEST(ScaleOutViewsTest, ScriptDrawsThroughputLogLogWithIdealLinesBesideTheStackedStep) {
  const std::string script = GnuplotScript(ScaleOut(), "figure.svg");
  EXPECT_THAT(script, HasSubstr("set multiplot layout 1,2"));
  EXPECT_THAT(script, HasSubstr("set logscale xy 2"));
  EXPECT_THAT(script, HasSubstr("using 1:3 with lines dt 2"));  // the weak series' ideal line
  EXPECT_THAT(script, HasSubstr("set style histogram rowstacked"));
  EXPECT_THAT(script, HasSubstr("'exposed communication'"));
  EXPECT_THAT(script, HasSubstr("communication >= 50% of the step from hosts ~ 2.83"));
  // The series that is neither has no ideal line: one dashed line in all.
  EXPECT_EQ(testing_support::Count(script, "dt 2"), 1u);
}

TEST_F(TempDirTest, ScaleOutRendersAsPngAndSvg) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  for (const char* name : {"scale_out.png", "scale_out.svg"}) {
    const absl::Status drawn = PlotAnalysis(ScaleOut(), Path(name));
    ASSERT_TRUE(drawn.ok()) << drawn << "\n" << GnuplotScript(ScaleOut(), Path(name));
    EXPECT_FALSE(ReadFile(Path(name)).empty()) << name;
  }
  v1::AnalyzeResponse empty;
  empty.mutable_scale_out()->set_field("devices");
  EXPECT_TRUE(PlotAnalysis(empty, Path("empty.png")).ok());
}

TEST(ScaleOutViewsTest, AnalyzeScalingAlongHostsOrDevicesAsksForTheScaleOut) {
  AnalyzeFlags flags;
  flags.sweep_ids = {3};
  for (const char* field : {"hosts", "devices"}) {
    flags.field = field;
    absl::StatusOr<v1::AnalyzeRequest> request = BuildAnalyzeRequest("scaling", flags);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_TRUE(request->has_scale_out()) << field;
    EXPECT_EQ(request->scale_out().field(), field);
  }
  flags.field = "intra_op_threads";
  absl::StatusOr<v1::AnalyzeRequest> threads = BuildAnalyzeRequest("scaling", flags);
  ASSERT_TRUE(threads.ok());
  EXPECT_TRUE(threads->has_scaling());
  flags.field = "";
  absl::StatusOr<v1::AnalyzeRequest> own = BuildAnalyzeRequest("scale_out", flags);
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own->has_scale_out());
  EXPECT_EQ(own->scale_out().field(), "");  // the coordinator's default: hosts
}

v1::SweepStatus SweepOver(int64_t id, const std::string& param,
                          const std::vector<int64_t>& values) {
  v1::SweepStatus sweep;
  sweep.set_sweep_id(id);
  sweep.set_family("fc");
  sweep.mutable_spec()->set_family("fc");
  v1::ParamSpec& spec = (*sweep.mutable_spec()->mutable_params())[param];
  if (values.size() == 1) {
    spec.set_value(values[0]);
  } else {
    for (int64_t value : values) spec.mutable_values()->add_values(value);
  }
  (*sweep.mutable_spec()->mutable_params())["batch"].set_value(64);
  return sweep;
}

TEST(ScaleOutReportTest, ASectionOnlyWhereHostsOrDevicesVary) {
  EXPECT_TRUE(PlanScaleOutSections({SweepOver(1, "hosts", {2})}).empty());
  EXPECT_TRUE(PlanScaleOutSections({SweepOver(1, "layer", {1, 2, 4})}).empty());
  const std::vector<PlannedAnalysis> hosts =
      PlanScaleOutSections({SweepOver(1, "hosts", {1, 2, 4})});
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].title, "fc: data-parallel scaling over hosts");
  EXPECT_EQ(hosts[0].request.scale_out().field(), "hosts");
  EXPECT_EQ(hosts[0].request.selection().where().at("family"), "fc");
  // One value per sweep, two sweeps: the family varies all the same.
  const std::vector<PlannedAnalysis> devices =
      PlanScaleOutSections({SweepOver(1, "devices", {1}), SweepOver(2, "devices", {2})});
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].request.scale_out().field(), "devices");
  EXPECT_EQ(devices[0].request.selection().sweep_ids_size(), 2);
  EXPECT_THAT(devices[0].caption, Not(HasSubstr("hosts")));
}

}  // namespace
}  // namespace paradnn::client
