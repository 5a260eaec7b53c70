#include "client/analysis_plots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/analysis_views.h"
#include "tests/unit/client/analysis_plots_test_support.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::Boxplot;
using testing_support::Count;
using testing_support::EmptyBoxplot;
using testing_support::EmptyHeatmap;
using testing_support::EmptyRoofline;
using testing_support::EmptyScaling;
using testing_support::EmptySensitivity;
using testing_support::EmptySpeedup;
using testing_support::EnvOverride;
using testing_support::HaveGnuplot;
using testing_support::Heatmap;
using testing_support::IsEmptyDir;
using testing_support::NoAnalysis;
using testing_support::ReadFile;
using testing_support::Roofline;
using testing_support::Scaling;
using testing_support::Sensitivity;
using testing_support::Speedup;
using testing_support::TempDirTest;

// ---- Rendering every analysis -----------------------------------------------

struct Case {
  const char* name;
  v1::AnalyzeResponse (*make)();
};

class RenderTest : public TempDirTest,
                   public ::testing::WithParamInterface<std::tuple<Case, const char*>> {};

TEST_P(RenderTest, WritesAValidFigure) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  const auto& [c, extension] = GetParam();
  const std::string path = Path(absl::StrCat(c.name, extension));
  const v1::AnalyzeResponse response = c.make();
  std::filesystem::create_directory(Path("tmp"));
  EnvOverride tmpdir("TMPDIR", Path("tmp"));
  ASSERT_TRUE(PlotAnalysis(response, path).ok()) << PlotAnalysis(response, path) << "\n"
                                                 << GnuplotScript(response, path);
  const std::string image = ReadFile(path);
  ASSERT_FALSE(image.empty());
  if (std::string(extension) == ".png") {
    EXPECT_EQ(image.substr(0, 4), "\x89PNG");
  } else {
    EXPECT_THAT(image, HasSubstr("<svg"));
    EXPECT_THAT(image, HasSubstr("</svg>"));
  }
  // The private folder with the script is gone.
  EXPECT_TRUE(IsEmptyDir(Path("tmp")));
}

const Case kCases[] = {
    {"heatmap", Heatmap},
    {"sensitivity", Sensitivity},
    {"roofline", Roofline},
    {"boxplot", Boxplot},
    {"speedup", Speedup},
    {"scaling", Scaling},
    {"empty_heatmap", EmptyHeatmap},
    {"empty_sensitivity", EmptySensitivity},
    {"empty_roofline", EmptyRoofline},
    {"empty_boxplot", EmptyBoxplot},
    {"empty_speedup", EmptySpeedup},
    {"empty_scaling", EmptyScaling},
    {"no_analysis", NoAnalysis},
};

INSTANTIATE_TEST_SUITE_P(Analyses, RenderTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(".png", ".svg")),
                         [](const ::testing::TestParamInfo<RenderTest::ParamType>& info) {
                           return absl::StrCat(std::get<0>(info.param).name, "_",
                                               std::string(std::get<1>(info.param)).substr(1));
                         });

// ---- Arguments and failures -------------------------------------------------

TEST_F(TempDirTest, RefusesOtherExtensions) {
  for (const char* name : {"figure.pdf", "figure", "figure.png.txt"}) {
    const absl::Status status = PlotAnalysis(Heatmap(), Path(name));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(status.message(), HasSubstr("--plot")) << name;
    EXPECT_THAT(status.message(), HasSubstr(".svg")) << name;
    EXPECT_FALSE(std::filesystem::exists(Path(name)));
  }
}

TEST_F(TempDirTest, ExtensionIsCaseInsensitive) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  ASSERT_TRUE(PlotAnalysis(Scaling(), Path("scaling.PNG")).ok());
  EXPECT_EQ(ReadFile(Path("scaling.PNG")).substr(0, 4), "\x89PNG");
}

TEST_F(TempDirTest, UnavailableWithoutGnuplot) {
  std::filesystem::create_directory(Path("empty-bin"));
  EnvOverride path("PATH", Path("empty-bin"));
  const absl::Status status = PlotAnalysis(Heatmap(), Path("heatmap.png"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("gnuplot-nox"));
}

TEST_F(TempDirTest, GnuplotFailureIsInternalWithItsStderr) {
  std::filesystem::create_directory(Path("bin"));
  const std::string fake = Path("bin/gnuplot");
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\necho \"line 3: undefined variable: boom\" >&2\nexit 1\n";
  }
  ASSERT_EQ(chmod(fake.c_str(), 0755), 0);
  EnvOverride path("PATH", Path("bin"));
  const absl::Status status = PlotAnalysis(Heatmap(), Path("heatmap.svg"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("undefined variable: boom"));
}

TEST_F(TempDirTest, NoFigureWrittenIsInternal) {
  std::filesystem::create_directory(Path("bin"));
  const std::string fake = Path("bin/gnuplot");
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\nexit 0\n";
  }
  ASSERT_EQ(chmod(fake.c_str(), 0755), 0);
  EnvOverride path("PATH", Path("bin"));
  EXPECT_EQ(PlotAnalysis(Heatmap(), Path("heatmap.svg")).code(), absl::StatusCode::kInternal);
}

TEST_F(TempDirTest, MissingOutputFolderIsInternal) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  const absl::Status status = PlotAnalysis(Heatmap(), Path("no/such/folder/heatmap.png"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("gnuplot"));
}

// ---- Scripts ----------------------------------------------------------------

TEST(GnuplotScriptTest, TerminalFollowsTheExtension) {
  EXPECT_THAT(GnuplotScript(Heatmap(), "/tmp/a.png"), HasSubstr("set terminal pngcairo"));
  EXPECT_THAT(GnuplotScript(Heatmap(), "/tmp/a.svg"), HasSubstr("set terminal svg"));
  EXPECT_THAT(GnuplotScript(Heatmap(), "/tmp/a.svg"), HasSubstr("noenhanced"));
  EXPECT_THAT(GnuplotScript(Heatmap(), "/tmp/a.svg"), HasSubstr("set output '/tmp/a.svg'"));
}

TEST(GnuplotScriptTest, HeatmapMarksOomCellsWithTextNotColour) {
  const std::string script = GnuplotScript(Heatmap(), "/tmp/h.png");
  // float32's (4096, 64) cell ran out of memory, bfloat16's was predicted to.
  EXPECT_THAT(script, HasSubstr("'OOM' at 2, 2"));
  EXPECT_THAT(script, HasSubstr("'pOOM' at 2, 2"));
  // 8 coloured cells per panel: the OOM cell has no row in the data, only
  // its tooltip.
  EXPECT_EQ(Count(script, "\n2 2 "), Count(script, "\n2 2 \""));
  EXPECT_THAT(script, HasSubstr("\n2 2 \"batch=4096, layer=64; 2 OOM\""));
  EXPECT_THAT(script, HasSubstr("set multiplot layout 1,2"));
  EXPECT_THAT(script, HasSubstr("set title 'precision=float32'"));
  EXPECT_THAT(script, HasSubstr("set title 'precision=bfloat16'"));
  EXPECT_THAT(script, HasSubstr("set cblabel 'examples_per_sec (examples/s)'"));
  EXPECT_THAT(script, HasSubstr("set xtics ('64' 0, '512' 1, '4096' 2)"));
  // The values span 9e3 / 64 .. 2.3e4 × 16: a log colour scale.
  EXPECT_THAT(script, HasSubstr("set logscale cb"));
}

TEST_F(TempDirTest, QuotesBackslashesAndApostrophesInLabelsStillRender) {
  v1::AnalyzeResponse response = Heatmap();
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_x("block_fn \"bottleneck\" \\ it's <b>&amp;");
  h.set_panel("cell's \"kind\"");
  const std::string script = GnuplotScript(response, Path("quoted.svg"));
  EXPECT_THAT(script, HasSubstr("set xlabel 'block_fn \"bottleneck\" \\ it''s <b>&amp;'"));
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  for (const char* name : {"quoted.svg", "quoted.png"}) {
    const absl::Status status = PlotAnalysis(response, Path(name));
    ASSERT_TRUE(status.ok()) << status;
  }
  const std::string svg = ReadFile(Path("quoted.svg"));
  // gnuplot's SVG escapes markup itself: the label arrives as text.
  EXPECT_THAT(svg, HasSubstr("it's &lt;b>&amp;amp;"));
  EXPECT_THAT(svg, Not(HasSubstr("<b>")));
}

TEST(GnuplotScriptTest, HeatmapHatchesCellsWithPredictionsAndGivesEveryCellATooltip) {
  v1::AnalyzeResponse response = Heatmap();
  v1::HeatmapCell* cell = response.mutable_heatmap()->mutable_panels(0)->mutable_cells(1);
  cell->set_predicted_results(2);
  cell->set_predicted_low(30e3);
  cell->set_predicted_high(41e3);
  const std::string script = GnuplotScript(response, "/tmp/h.svg");
  EXPECT_THAT(script, HasSubstr("(hatched: includes predicted results)"));
  EXPECT_THAT(script, HasSubstr("$predicted0 << EOD\n1 0\nEOD"));
  EXPECT_THAT(script, HasSubstr("fs transparent pattern 4"));
  EXPECT_EQ(Count(script, "$predicted1"), 0u) << "no prediction in the second panel";
  EXPECT_THAT(script, HasSubstr("\n1 0 \"batch=512, layer=4: 3.64e+04 examples/s (median of 3 OK, "
                                "2 predicted, their 90% interval 3e+04 to 4.1e+04)\""));
  EXPECT_THAT(script, HasSubstr("with labels hypertext"));
}

TEST(NativeSvgTooltipsTest, GnuplotsScriptedHypertextBecomesATitle) {
  const std::string svg =
      "<g id='a'><g onmousemove=\"gnuplot_svg.showHypertext(evt,'x=1, y=2: 3')\" "
      "onmouseout=\"gnuplot_svg.hideHypertext()\"><title> </title>\n<path d='M0'/></g></g>";
  EXPECT_EQ(NativeSvgTooltips(svg),
            "<g id='a'><g><title>x=1, y=2: 3</title>\n<path d='M0'/></g></g>");
  EXPECT_EQ(NativeSvgTooltips("<svg>no tooltips</svg>"), "<svg>no tooltips</svg>");
}

TEST_F(TempDirTest, AHeatmapsSvgCarriesEachCellsTooltipWithoutAScript) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  absl::StatusOr<std::string> svg = RenderSvg(Heatmap());
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("<title>batch=4096, layer=64; 2 OOM</title>"));
  EXPECT_THAT(*svg, Not(HasSubstr("gnuplot_svg.showHypertext")));
}

TEST(GnuplotScriptTest, SensitivityTitleHasRSquaredAndPoints) {
  const std::string script = GnuplotScript(Sensitivity(), "/tmp/s.svg");
  EXPECT_THAT(script, HasSubstr("R² = 0.934, 120 points"));
  EXPECT_THAT(script, HasSubstr("log2(examples_per_sec)"));
  EXPECT_THAT(script, HasSubstr("set ytics ('layer' 0, 'node' 1, 'batch' 2)"));
  EXPECT_THAT(script, HasSubstr("with boxxyerror"));
}

TEST(GnuplotScriptTest, RooflineIsLogLogWithEveryPlatformsRoofs) {
  const std::string script = GnuplotScript(Roofline(), "/tmp/r.svg");
  EXPECT_THAT(script, HasSubstr("set logscale xy"));
  EXPECT_THAT(script, HasSubstr("set xlabel 'arithmetic intensity (FLOP/byte)'"));
  EXPECT_THAT(script, HasSubstr("set ylabel 'FLOP/s'"));
  EXPECT_THAT(script, HasSubstr("set key at screen"));  // outside the plot, under it
  // Compute roofs per dtype bounded by the measured DRAM plateau (not a
  // cache level), the silicon's theoretical peak beside the calibrated one,
  // and every cache level as its own slope, named with its size.
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 float32 2.1 TFLOP/s, DRAM (≥ 256 MiB) "
                                "110 GB/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 float32 theoretical peak 2.6 TFLOP/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 bfloat16 6.5 TFLOP/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 L1d (48 KiB) 1.9 TB/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 L2 (1.25 MiB) 800 GB/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 L3 (48 MiB) 310 GB/s"));
  EXPECT_THAT(script, HasSubstr("AMD EPYC 7763 & <friends> float32 3.4 TFLOP/s"));
  EXPECT_THAT(script, HasSubstr("AMD EPYC 7763 & <friends> L3 (256 MiB) 400 GB/s"));
  // The float32 ridge of the first platform against DRAM, 2.1e12 / 1.1e11
  // FLOP/byte, and the L1 slope's ridge under the best (bfloat16) peak.
  EXPECT_THAT(script, HasSubstr(absl::StrFormat("%.10g %.10g\n", 2.1e12 / 1.1e11, 2.1e12)));
  EXPECT_THAT(script, HasSubstr(absl::StrFormat("%.10g %.10g\n", 6.5e12 / 1.9e12, 6.5e12)));
  EXPECT_THAT(script, Not(HasSubstr(absl::StrFormat("%.10g %.10g\n", 2.1e12 / 1.9e12, 2.1e12))));
  // Jobs and operators are separate series with their own point types.
  EXPECT_THAT(script, HasSubstr("float32 jobs'"));
  EXPECT_THAT(script, HasSubstr("float32 ops'"));
  EXPECT_THAT(script, HasSubstr("pt 7"));
  EXPECT_THAT(script, HasSubstr("pt 4"));
}

TEST(GnuplotScriptTest, RooflineDrawsDataParallelJobsCommunicationCeilings) {
  v1::AnalyzeResponse response = Roofline();
  EXPECT_THAT(GnuplotScript(response, "/tmp/r.svg"), Not(HasSubstr("communication ceilings")));
  v1::RooflinePoint& job = *response.mutable_roofline()->mutable_points(0);
  job.set_communication_roof_s(0.004);
  job.set_communication_ceiling_flops_per_sec(9.0e13);  // above every roof: the y range grows
  const std::string script = GnuplotScript(response, "/tmp/r.svg");
  EXPECT_THAT(script, HasSubstr("with vectors nohead"));
  EXPECT_THAT(script, HasSubstr("communication ceilings (each data-parallel job"));
  // A bar over the job's intensity (85 FLOP/byte) at its ceiling.
  EXPECT_THAT(script, HasSubstr(absl::StrFormat("%.10g %.10g %.10g 0\n", 85.0 / 1.4, 9.0e13,
                                                85.0 * 1.4 - 85.0 / 1.4)));
  EXPECT_THAT(script,
              HasSubstr(absl::StrFormat("set yrange [%.10g:%.10g]", 2.1e12 / 1000 / 3, 9.0e13 * 3)))
      << script;
}

// Panels of two families, each with its own batch values.
v1::AnalyzeResponse FamilyPanels() {
  v1::AnalyzeResponse response;
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_metric("gflops");
  h.set_unit("GFLOP/s");
  h.set_x("batch");
  h.set_y("precision");
  h.set_panel("family");
  for (const char* x : {"4", "16", "64", "512"}) h.add_x_values(x);
  for (const char* y : {"bfloat16", "float32"}) h.add_y_values(y);
  const std::pair<const char*, std::vector<const char*>> families[] = {{"cnn", {"4", "16"}},
                                                                       {"fc", {"64", "512"}}};
  for (const auto& [family, xs] : families) {
    v1::HeatmapPanel& panel = *h.add_panels();
    panel.set_panel_value(family);
    for (const char* x : xs) panel.add_x_values(x);
    for (const char* y : {"bfloat16", "float32"}) panel.add_y_values(y);
    for (const char* y : {"bfloat16", "float32"}) {
      for (const char* x : xs) {
        v1::HeatmapCell& cell = *panel.add_cells();
        cell.set_x(x);
        cell.set_y(y);
        cell.set_value(10);
        cell.set_ok_results(1);
      }
    }
  }
  v1::AnalysisScope& scope = *response.mutable_scope();
  scope.add_sweep_ids(1);
  scope.add_sweep_ids(2);
  (*scope.mutable_where())["optimizer"] = "rmsprop";
  scope.add_platforms("AMD EPYC");
  scope.set_aggregation("median of each cell");
  v1::FieldValues& layer = *scope.add_aggregated();
  layer.set_field("layer");
  for (const char* v : {"2", "4"}) layer.add_values(v);
  v1::FieldValues& node = *scope.add_aggregated();
  node.set_field("node");
  for (const char* v : {"128", "256", "512", "1024"}) node.add_values(v);
  return response;
}

TEST(GnuplotScriptTest, FamilyPanelsDrawOnlyTheirOwnColumns) {
  const std::string script = GnuplotScript(FamilyPanels(), "/tmp/h.svg");
  EXPECT_THAT(script, HasSubstr("set xtics ('4' 0, '16' 1)"));
  EXPECT_THAT(script, HasSubstr("set xtics ('64' 0, '512' 1)"));
  EXPECT_THAT(script, Not(HasSubstr("'512' 3")));
  const std::string table = FormatAnalysis(FamilyPanels(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("precision \\ batch   4  16\n"));
  EXPECT_THAT(table, HasSubstr("precision \\ batch  64  512\n"));
  EXPECT_THAT(table, Not(HasSubstr("—"))) << table;  // no blank columns
}

TEST(GnuplotScriptTest, TitleAndTableSayWhatTheFigureCoversAndCombined) {
  const v1::AnalyzeResponse response = FamilyPanels();
  EXPECT_EQ(ScopeSummary(response.scope()),
            "sweeps 1, 2 where optimizer=rmsprop; AMD EPYC; median of each cell across layer "
            "(2, 4), node (128, 256, 512, 1024)");
  const std::string compact = ScopeSummary(response.scope(), /*compact=*/true);
  EXPECT_THAT(compact, HasSubstr("node (4 values)"));
  // The figure's title gets it under it, wrapped at 90 characters.
  EXPECT_THAT(GnuplotScript(response, "/tmp/h.svg"),
              HasSubstr("title 'gflops by batch and precision' . \"\\n\" . 'sweeps 1, 2 where "
                        "optimizer=rmsprop; AMD EPYC; median of each cell across layer (2, 4),' . "
                        "\"\\n\" . 'node (4 values)'\n"));
  EXPECT_THAT(FormatAnalysis(response, OutputFormat::kTable),
              HasSubstr("over: " + ScopeSummary(response.scope()) + "\n"));
  // CSV stays one row per cell.
  EXPECT_THAT(FormatAnalysis(response, OutputFormat::kCsv), Not(HasSubstr("over:")));
}

TEST(GnuplotScriptTest, ATheoreticalPeakBelowTheCalibratedRoofIsLabelledSo) {
  v1::AnalyzeResponse response = Roofline();
  response.mutable_roofline()->mutable_roofs(0)->mutable_compute(0)->set_theoretical_flops_per_sec(
      1.6e12);  // under the calibrated 2.1 TFLOP/s
  EXPECT_THAT(GnuplotScript(response, "/tmp/r.svg"),
              HasSubstr("float32 theoretical peak 1.6 TFLOP/s (below the calibrated roof: its "
                        "basis is wrong; --datasheet-peak)"));
}

TEST(GnuplotScriptTest, RooflineLeavesOutPointsWithoutIntensity) {
  v1::AnalyzeResponse response = Roofline();
  response.mutable_roofline()->mutable_points(0)->set_intensity(0);
  EXPECT_THAT(GnuplotScript(response, "/tmp/r.svg"),
              HasSubstr("1 points without intensity left out"));
}

TEST(GnuplotScriptTest, BoxplotUsesLogYOnlyForWideSpans) {
  const std::string narrow = GnuplotScript(Boxplot(), "/tmp/b.svg");
  EXPECT_THAT(narrow, Not(HasSubstr("set logscale y")));
  EXPECT_THAT(narrow, HasSubstr("whiskerbars"));
  EXPECT_THAT(narrow, HasSubstr("set ylabel 'mfu (%)'"));
  EXPECT_THAT(narrow, HasSubstr("'rnn \"lstm\"' 2"));
  EXPECT_THAT(narrow, HasSubstr("$outliers"));

  v1::AnalyzeResponse wide = Boxplot();
  wide.mutable_boxplot()->mutable_groups(0)->add_outliers(4000);
  EXPECT_THAT(GnuplotScript(wide, "/tmp/b.svg"), HasSubstr("set logscale y"));
}

TEST(GnuplotScriptTest, SpeedupHasOneSeriesPerColourAndTheLineAtOne) {
  const std::string script = GnuplotScript(Speedup(), "/tmp/s.svg");
  EXPECT_THAT(script, HasSubstr("title 'batch=64'"));
  EXPECT_THAT(script, HasSubstr("title 'batch=1024'"));
  // Numeric colour values in numeric order: 64 before 1024.
  EXPECT_LT(script.find("'batch=64'"), script.find("'batch=1024'"));
  EXPECT_THAT(script, HasSubstr("first 1 to graph 1, first 1 nohead"));
  EXPECT_THAT(script, HasSubstr("geomean 1.56×"));
  EXPECT_THAT(script, HasSubstr("set logscale x"));
  EXPECT_THAT(script, HasSubstr("set logscale y"));
}

TEST(GnuplotScriptTest, SpeedupWithManyNumericColoursUsesAPalette) {
  v1::AnalyzeResponse response = Speedup();
  for (int i = 0; i < 12; ++i) {
    v1::SpeedupPoint& p = *response.mutable_speedup()->add_points();
    p.set_params(1000 * (i + 1));
    p.set_speedup(1 + i / 10.0);
    p.set_color_value(absl::StrCat(1 << i));
  }
  const std::string script = GnuplotScript(response, "/tmp/s.svg");
  EXPECT_THAT(script, HasSubstr("lc palette"));
  EXPECT_THAT(script, HasSubstr("set cblabel 'batch'"));
}

TEST(GnuplotScriptTest, ScalingHasTheIdealLineOnLog2Axes) {
  const std::string script = GnuplotScript(Scaling(), "/tmp/s.png");
  EXPECT_THAT(script, HasSubstr("set logscale x 2"));
  EXPECT_THAT(script, HasSubstr("ideal"));
  EXPECT_THAT(script, HasSubstr("\n16 16\n"));  // the ideal speedup at 16 threads
  EXPECT_THAT(script, HasSubstr("set xtics ('1' 1, '4' 4, '16' 16)"));
  EXPECT_THAT(script, HasSubstr("yerrorlines"));
  EXPECT_THAT(script, HasSubstr("'61%'"));  // 9.8 / 16
}

TEST(GnuplotScriptTest, EmptyResponsesDrawAMessage) {
  for (auto make : {EmptyHeatmap, EmptySensitivity, EmptyRoofline, EmptyBoxplot, EmptySpeedup,
                    EmptyScaling, NoAnalysis}) {
    const std::string script = GnuplotScript(make(), "/tmp/e.png");
    EXPECT_THAT(script, HasSubstr("at graph 0.5, graph 0.5 center"));
    EXPECT_THAT(script, HasSubstr("plot NaN notitle"));
  }
}

}  // namespace
}  // namespace paradnn::client
