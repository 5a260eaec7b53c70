#include "client/analysis_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/unit/client/analysis_plots_test_support.h"

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::Count;
using testing_support::EnvOverride;
using testing_support::FixtureReport;
using testing_support::HaveGnuplot;
using testing_support::Heatmap;
using testing_support::IsEmptyDir;
using testing_support::ReadFile;
using testing_support::Sensitivity;
using testing_support::TempDirTest;

// ---- Report -----------------------------------------------------------------

TEST_F(TempDirTest, ReportInlinesEverySectionsFigureAndTable) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  const ReportInput input = FixtureReport();

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

TEST_F(TempDirTest, ReportOfNothingSaysSo) {
  const absl::Status status = WriteReport(ReportInput(), Path("report"));
  ASSERT_TRUE(status.ok()) << status;
  const std::string html = ReadFile(Path("report/index.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_LT(html.find("<h2>Sweeps</h2>"), html.find("<p>No sweeps.</p>"));
  EXPECT_LT(html.find("<p>No sweeps.</p>"), html.find("<h2>Platforms</h2>"));
  EXPECT_LT(html.find("<h2>Platforms</h2>"), html.find("<p>No workers registered.</p>"));
  EXPECT_NE(html.find("<p>No workers registered.</p>"), std::string::npos);
  EXPECT_THAT(html, Not(HasSubstr("<table>")));
  EXPECT_THAT(html, Not(HasSubstr("<nav>")));
  EXPECT_THAT(html, Not(HasSubstr("<section")));
  EXPECT_THAT(html, Not(HasSubstr("Notes")));
  EXPECT_THAT(html, HasSubstr("</body>\n</html>\n"));
}

// Text from the data is escaped wherever it lands, and never read as
// template markup.
TEST_F(TempDirTest, ReportEscapesTextFromTheData) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  ReportInput input;
  v1::SweepStatus sweep;
  sweep.set_name("{{evil}} \"<b>\" & 'x'");
  input.sweeps.push_back(sweep);
  input.sections.push_back({"<i>Sensitivity</i>", "", Sensitivity()});
  input.notes.push_back("{{{figure}}}");
  std::filesystem::create_directory(Path("tmp"));
  EnvOverride tmpdir("TMPDIR", Path("tmp"));
  const absl::Status status = WriteReport(input, Path("report"));
  ASSERT_TRUE(status.ok()) << status;
  const std::string html = ReadFile(Path("report/index.html"));
  EXPECT_THAT(html, HasSubstr("<td>{{evil}} &quot;&lt;b&gt;&quot; &amp; &apos;x&apos;</td>"));
  EXPECT_THAT(html, HasSubstr("<h2>&lt;i&gt;Sensitivity&lt;/i&gt;</h2>"));
  EXPECT_THAT(html, HasSubstr("<title>&lt;i&gt;Sensitivity&lt;/i&gt;</title>"));
  EXPECT_THAT(html,
              HasSubstr("<li><a href=\"#section-1\">&lt;i&gt;Sensitivity&lt;/i&gt;</a></li>"));
  EXPECT_THAT(html, HasSubstr("<li>{{{figure}}}</li>"));
  EXPECT_THAT(html, Not(HasSubstr("<b>")));
  EXPECT_THAT(html, Not(HasSubstr("<i>")));
  EXPECT_EQ(Count(html, "<svg"), 1u);
  // No caption, no empty paragraph.
  EXPECT_THAT(html, Not(HasSubstr("<p></p>")));
  const size_t heading_end = html.find("</h2>", html.find("<section")) + 5;
  EXPECT_EQ(html.substr(heading_end, html.find("<figure>") - heading_end).find_first_not_of(" \n"),
            std::string::npos);
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
