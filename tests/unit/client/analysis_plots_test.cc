#include "client/analysis_plots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/analysis_report.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool HaveGnuplot() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && access((dir + "/gnuplot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// ---- Hand-made responses ----------------------------------------------------

v1::HeatmapCell Cell(const std::string& x, const std::string& y) {
  v1::HeatmapCell cell;
  cell.set_x(x);
  cell.set_y(y);
  return cell;
}

// examples/s of fc by batch × layer, one panel per precision; in float32 the
// largest cell ran out of memory, in bfloat16 it was predicted to.
v1::AnalyzeResponse Heatmap() {
  v1::AnalyzeResponse response;
  v1::HeatmapResponse& h = *response.mutable_heatmap();
  h.set_metric("examples_per_sec");
  h.set_unit("examples/s");
  h.set_x("batch");
  h.set_y("layer");
  h.set_panel("precision");
  h.set_x_numeric(true);
  h.set_y_numeric(true);
  const std::vector<std::string> xs = {"64", "512", "4096"};
  const std::vector<std::string> ys = {"4", "16", "64"};
  for (const auto& x : xs) h.add_x_values(x);
  for (const auto& y : ys) h.add_y_values(y);
  for (const char* precision : {"float32", "bfloat16"}) {
    v1::HeatmapPanel& panel = *h.add_panels();
    panel.set_panel_value(precision);
    double base = std::string(precision) == "float32" ? 9.1e3 : 2.3e4;
    for (size_t yi = 0; yi < ys.size(); ++yi) {
      for (size_t xi = 0; xi < xs.size(); ++xi) {
        v1::HeatmapCell cell = Cell(xs[xi], ys[yi]);
        if (xi == 2 && yi == 2) {
          if (std::string(precision) == "float32") {
            cell.set_oom_results(2);
          } else {
            cell.set_predicted_oom_results(1);
          }
        } else {
          cell.set_value(base * (1 << (2 * xi)) / (1 << yi));
          cell.set_ok_results(3);
        }
        *panel.add_cells() = cell;
      }
    }
  }
  response.set_results(18);
  return response;
}

v1::AnalyzeResponse Sensitivity() {
  v1::AnalyzeResponse response;
  v1::SensitivityResponse& s = *response.mutable_sensitivity();
  s.set_metric("examples_per_sec");
  s.set_log2_features(true);
  s.set_log2_target(true);
  const std::pair<const char*, double> weights[] = {
      {"layer", -0.42}, {"node", -0.61}, {"batch", 0.83}};
  for (const auto& [term, weight] : weights) {
    v1::SensitivityWeight& w = *s.add_weights();
    w.set_term(term);
    w.set_weight(weight);
  }
  s.set_r_squared(0.934);
  s.set_points(120);
  return response;
}

v1::AnalyzeResponse Roofline() {
  v1::AnalyzeResponse response;
  v1::RooflineResponse& r = *response.mutable_roofline();
  {
    v1::PlatformRoofs& p = *r.add_roofs();
    p.set_platform_id(1);
    p.set_device_name("Intel(R) Xeon(R) Gold 6338");
    p.set_fingerprint("3f9a0c1d2e4b5a69");
    v1::MatmulRoofValue& f32 = *p.add_compute();
    f32.set_dtype("float32");
    f32.set_flops_per_sec(2.1e12);
    v1::MatmulRoofValue& bf16 = *p.add_compute();
    bf16.set_dtype("bfloat16");
    bf16.set_flops_per_sec(6.5e12);
    const std::pair<const char*, double> levels[] = {{"L1d (48 KiB)", 1.9e12},
                                                     {"L2 (1.25 MiB)", 8.0e11},
                                                     {"L3 (48 MiB)", 3.1e11},
                                                     {"DRAM", 1.1e11}};
    for (const auto& [level, bw] : levels) {
      v1::BandwidthRoof& b = *p.add_bandwidth();
      b.set_level(level);
      b.set_bytes_per_sec(bw);
    }
  }
  {
    v1::PlatformRoofs& p = *r.add_roofs();
    p.set_platform_id(2);
    p.set_device_name("AMD EPYC 7763 & <friends>");
    p.set_fingerprint("77aa00bb11cc22dd");
    v1::MatmulRoofValue& f32 = *p.add_compute();
    f32.set_dtype("float32");
    f32.set_flops_per_sec(3.4e12);
    v1::BandwidthRoof& l3 = *p.add_bandwidth();
    l3.set_level("L3 (256 MiB)");
    l3.set_bytes_per_sec(4.0e11);
    v1::BandwidthRoof& dram = *p.add_bandwidth();
    dram.set_level("DRAM");
    dram.set_bytes_per_sec(1.6e11);
  }
  const struct {
    int64_t job;
    const char* label;
    bool op;
    const char* precision;
    int64_t platform;
    double intensity;
    double flops;
  } points[] = {
      {11, "fc layer=4 node=1024 batch=256", false, "float32", 1, 85.0, 1.2e12},
      {12, "fc layer=4 node=4096 batch=256", false, "bfloat16", 1, 120.0, 3.9e12},
      {13, "fc layer=4 node=1024 batch=256", false, "float32", 2, 85.0, 1.9e12},
      {11, "aten::addmm", true, "float32", 1, 170.0, 1.6e12},
      {11, "aten::relu", true, "float32", 1, 0.25, 2.0e10},
      {12, "aten::mm \"quoted\" \\ back", true, "bfloat16", 1, 240.0, 5.1e12},
  };
  for (const auto& point : points) {
    v1::RooflinePoint& p = *r.add_points();
    p.set_job_id(point.job);
    p.set_label(point.label);
    p.set_op(point.op);
    p.set_precision(point.precision);
    p.set_platform_id(point.platform);
    p.set_intensity(point.intensity);
    p.set_flops_per_sec(point.flops);
  }
  return response;
}

v1::BoxplotGroup Box(const std::string& name, int64_t count, std::vector<double> q,
                     std::vector<double> outliers) {
  v1::BoxplotGroup g;
  g.set_name(name);
  g.set_count(count);
  g.set_p2(q[0]);
  g.set_p9(q[1]);
  g.set_p50(q[2]);
  g.set_p91(q[3]);
  g.set_p98(q[4]);
  g.set_mean(q[2] * 1.1);
  for (double o : outliers) g.add_outliers(o);
  return g;
}

// FLOP/s utilization of three families: spans less than 100× (linear y).
v1::AnalyzeResponse Boxplot() {
  v1::AnalyzeResponse response;
  v1::BoxplotResponse& b = *response.mutable_boxplot();
  b.set_metric("mfu");
  b.set_unit("%");
  b.add_group_by("family");
  *b.add_groups() = Box("fc", 120, {4.1, 8.0, 21.5, 38.2, 44.0}, {2.2, 51.3});
  *b.add_groups() = Box("cnn_residual", 80, {9.5, 14.2, 30.1, 47.8, 55.0}, {60.4});
  *b.add_groups() = Box("rnn \"lstm\"", 64, {1.2, 2.5, 6.8, 12.0, 15.5}, {0.9, 18.0, 19.5});
  return response;
}

v1::AnalyzeResponse Speedup() {
  v1::AnalyzeResponse response;
  v1::SpeedupResponse& s = *response.mutable_speedup();
  s.set_metric("examples_per_sec");
  s.set_field("precision");
  s.set_baseline("float32");
  s.set_candidate("bfloat16");
  s.set_color_by("batch");
  const struct {
    const char* config;
    int64_t params;
    double speedup;
    const char* color;
  } points[] = {
      {"layer=4 node=256 batch=64", 200000, 0.92, "64"},
      {"layer=4 node=1024 batch=64", 3200000, 1.35, "64"},
      {"layer=8 node=4096 batch=64", 117000000, 2.1, "64"},
      {"layer=4 node=256 batch=1024", 200000, 1.05, "1024"},
      {"layer=4 node=1024 batch=1024", 3200000, 1.9, "1024"},
      {"layer=8 node=4096 batch=1024", 117000000, 2.8, "1024"},
  };
  double log_sum = 0;
  for (const auto& point : points) {
    v1::SpeedupPoint& p = *s.add_points();
    p.set_config(point.config);
    p.set_params(point.params);
    p.set_baseline_value(1000);
    p.set_candidate_value(1000 * point.speedup);
    p.set_speedup(point.speedup);
    p.set_color_value(point.color);
    log_sum += std::log(point.speedup);
  }
  s.set_geomean_speedup(std::exp(log_sum / 6));
  s.set_min_speedup(0.92);
  s.set_max_speedup(2.8);
  return response;
}

v1::AnalyzeResponse Scaling() {
  v1::AnalyzeResponse response;
  v1::ScalingResponse& s = *response.mutable_scaling();
  s.set_metric("examples_per_sec");
  s.set_field("intra_op_threads");
  const struct {
    const char* value;
    double median, lo, hi;
  } levels[] = {{"1", 1, 1, 1}, {"4", 3.4, 2.1, 3.9}, {"16", 9.8, 4.0, 13.5}};
  for (const auto& level : levels) {
    s.add_levels(level.value);
    v1::ScalingLevel& l = *s.add_summary();
    l.set_value(level.value);
    l.set_configs(5);
    l.set_median_speedup(level.median);
    l.set_min_speedup(level.lo);
    l.set_max_speedup(level.hi);
    l.set_median_efficiency(level.median / std::stod(level.value));
  }
  v1::ScalingConfig& c = *s.add_configs();
  c.set_config("layer=4 node=1024 batch=256");
  for (double v : {100.0, 340.0, 980.0}) c.add_values(v);
  return response;
}

struct Case {
  const char* name;
  v1::AnalyzeResponse (*make)();
};

v1::AnalyzeResponse EmptyHeatmap() {
  v1::AnalyzeResponse r;
  r.mutable_heatmap()->set_metric("gflops");
  return r;
}
v1::AnalyzeResponse EmptySensitivity() {
  v1::AnalyzeResponse r;
  r.mutable_sensitivity()->set_metric("gflops");
  return r;
}
v1::AnalyzeResponse EmptyRoofline() {
  v1::AnalyzeResponse r;
  r.mutable_roofline();
  return r;
}
v1::AnalyzeResponse EmptyBoxplot() {
  v1::AnalyzeResponse r;
  r.mutable_boxplot()->set_metric("gflops");
  return r;
}
v1::AnalyzeResponse EmptySpeedup() {
  v1::AnalyzeResponse r;
  r.mutable_speedup()->set_metric("examples_per_sec");
  return r;
}
v1::AnalyzeResponse EmptyScaling() {
  v1::AnalyzeResponse r;
  r.mutable_scaling()->set_metric("examples_per_sec");
  return r;
}
v1::AnalyzeResponse NoAnalysis() { return v1::AnalyzeResponse(); }

// Sets an environment variable for a scope and restores it after.
class EnvOverride {
 public:
  EnvOverride(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~EnvOverride() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool IsEmptyDir(const std::string& path) {
  return std::filesystem::is_directory(path) && std::filesystem::is_empty(path);
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "plots-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

// ---- Rendering every analysis -----------------------------------------------

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
  // 8 coloured cells per panel: the OOM cell has no row in the data.
  EXPECT_EQ(Count(script, "\n2 2 "), 0u);
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
  // Compute roofs per dtype with the DRAM roof, and the last cache level.
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 float32 2.1 TFLOP/s, DRAM 110 GB/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 bfloat16 6.5 TFLOP/s"));
  EXPECT_THAT(script, HasSubstr("Intel(R) Xeon(R) Gold 6338 L3 (48 MiB) 310 GB/s"));
  EXPECT_THAT(script, HasSubstr("AMD EPYC 7763 & <friends> float32 3.4 TFLOP/s"));
  EXPECT_THAT(script, HasSubstr("AMD EPYC 7763 & <friends> L3 (256 MiB) 400 GB/s"));
  // The float32 ridge of the first platform, 2.1e12 / 1.1e11 FLOP/byte.
  EXPECT_THAT(script, HasSubstr(absl::StrFormat("%.10g %.10g\n", 2.1e12 / 1.1e11, 2.1e12)));
  // Jobs and operators are separate series with their own point types.
  EXPECT_THAT(script, HasSubstr("float32 jobs'"));
  EXPECT_THAT(script, HasSubstr("float32 ops'"));
  EXPECT_THAT(script, HasSubstr("pt 7"));
  EXPECT_THAT(script, HasSubstr("pt 4"));
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

// ---- Report -----------------------------------------------------------------

TEST_F(TempDirTest, ReportInlinesEverySectionsFigureAndTable) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  ReportInput input;
  v1::SweepStatus sweep;
  sweep.set_sweep_id(7);
  sweep.set_name("paper-fc <quick>");
  sweep.set_family("fc");
  sweep.set_device("cpu");
  sweep.set_state(v1::SWEEP_DONE);
  sweep.set_total_jobs(24);
  sweep.set_done_jobs(24);
  sweep.set_ok_results(21);
  input.sweeps.push_back(sweep);
  v1::WorkerInfo worker;
  worker.set_worker_id("host-a/cpu");
  worker.set_device_kind("cpu");
  worker.set_hostname("host-a");
  v1::Platform& platform = *worker.mutable_platform();
  platform.set_fingerprint("0123456789abcdef0123");
  platform.set_device_kind("cpu");
  platform.set_device_name("Intel(R) Xeon(R) Gold 6338");
  platform.set_hostname("host-a");
  platform.set_cores(32);
  platform.set_logical_cpus(64);
  platform.set_blas_backend("OpenBLAS 0.3.21 (pthread)");
  platform.set_libtorch_version("2.3.1");
  platform.set_onednn_version("3.3.6");
  platform.set_isa_paths("AVX512_CORE_BF16; AMX: no");
  v1::MatmulRoof& roof = *platform.add_matmul_roofs();
  roof.set_dtype("float32");
  roof.set_flops_per_sec(2.1e12);
  input.workers.push_back(worker);
  input.sections.push_back({"Throughput heat map", "examples/s by batch & layer.", Heatmap()});
  input.sections.push_back({"Sensitivity", "Which hyper-parameters matter.", Sensitivity()});
  input.sections.push_back({"Roofline", "Achieved FLOP/s against intensity.", Roofline()});
  input.sections.push_back({"Utilization by family", "Box plots of MFU.", Boxplot()});
  input.sections.push_back({"bfloat16 speedup", "Against float32.", Speedup()});
  input.sections.push_back({"Thread scaling", "Speedup with threads.", Scaling()});
  input.notes.push_back("no profiled sweep: operator points <left out>");

  const std::string out_dir = Path("report/nested");
  std::filesystem::create_directory(Path("tmp"));
  EnvOverride tmpdir("TMPDIR", Path("tmp"));
  const absl::Status status = WriteReport(input, out_dir);
  ASSERT_TRUE(status.ok()) << status;
  const std::string html = ReadFile(out_dir + "/index.html");
  ASSERT_FALSE(html.empty());
  EXPECT_THAT(html, HasSubstr("<title>paradnn report</title>"));
  EXPECT_EQ(Count(html, "<svg"), 6u);
  EXPECT_THAT(html, Not(HasSubstr("<?xml")));
  EXPECT_THAT(html, Not(HasSubstr("<!DOCTYPE svg")));
  for (const auto& section : input.sections) {
    EXPECT_THAT(html, HasSubstr(absl::StrCat("<h2>", section.title, "</h2>")));
  }
  EXPECT_THAT(html, HasSubstr("examples/s by batch &amp; layer."));
  EXPECT_THAT(html, HasSubstr("paper-fc &lt;quick&gt;"));
  EXPECT_THAT(html, HasSubstr("24/24"));
  EXPECT_THAT(html, HasSubstr("OpenBLAS 0.3.21 (pthread)"));
  EXPECT_THAT(html, HasSubstr("float32 2100 GFLOP/s"));
  EXPECT_THAT(html, HasSubstr("0123456789ab<"));  // the fingerprint, shortened
  EXPECT_THAT(html, HasSubstr("32 / 64"));
  EXPECT_THAT(html, HasSubstr("<li>no profiled sweep: operator points &lt;left out&gt;</li>"));
  EXPECT_THAT(html, HasSubstr("<pre>"));
  // Figures do not share ids on one page.
  EXPECT_THAT(html, HasSubstr("id='f1-gpPt0'"));
  EXPECT_THAT(html, HasSubstr("id='f2-gpPt0'"));
  EXPECT_THAT(html, Not(HasSubstr("id='gpPt0'")));
  EXPECT_THAT(html, Not(HasSubstr("href='#gpPt")));
  // Sections in order.
  EXPECT_LT(html.find("Throughput heat map</h2>"), html.find("Thread scaling</h2>"));
  EXPECT_LT(html.find("<h2>Sweeps</h2>"), html.find("Throughput heat map</h2>"));
  EXPECT_LT(html.find("Thread scaling</h2>"), html.find("<h2>Notes</h2>"));
  // Nothing external.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"http")));
  // Nothing left behind besides the page.
  EXPECT_FALSE(std::filesystem::exists(out_dir + "/.index.html.partial"));
  EXPECT_TRUE(IsEmptyDir(Path("tmp")));
}

TEST_F(TempDirTest, ReportPassesOnPlotErrors) {
  std::filesystem::create_directory(Path("empty-bin"));
  EnvOverride path("PATH", Path("empty-bin"));
  ReportInput input;
  input.sections.push_back({"Heat map", "", Heatmap()});
  EXPECT_EQ(WriteReport(input, Path("report")).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace paradnn::client
