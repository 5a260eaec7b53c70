#include "client/analysis_plots.h"

#include <filesystem>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/gnuplot.h"
#include "client/metric_plot_scripts.h"
#include "client/roofline_plot_script.h"
#include "client/speedup_plot_scripts.h"

namespace paradnn::client {
namespace {

using gnuplot::Canvas;
using gnuplot::Finish;
using gnuplot::MessageFigure;
using gnuplot::Prologue;
using gnuplot::Terminal;

std::string Lower(absl::string_view text) { return absl::AsciiStrToLower(text); }

std::string Extension(const std::string& path) {
  return Lower(std::filesystem::path(path).extension().string());
}

std::string ScriptFor(const v1::AnalyzeResponse& response, Terminal terminal,
                      const std::string& out_path) {
  switch (response.analysis_case()) {
    case v1::AnalyzeResponse::kHeatmap:
      return internal::HeatmapScript(response.heatmap(), terminal, out_path);
    case v1::AnalyzeResponse::kSensitivity:
      return internal::SensitivityScript(response.sensitivity(), terminal, out_path);
    case v1::AnalyzeResponse::kRoofline:
      return internal::RooflineScript(response.roofline(), terminal, out_path);
    case v1::AnalyzeResponse::kBoxplot:
      return internal::BoxplotScript(response.boxplot(), terminal, out_path);
    case v1::AnalyzeResponse::kSpeedup:
      return internal::SpeedupScript(response.speedup(), terminal, out_path);
    case v1::AnalyzeResponse::kScaling:
      return internal::ScalingScript(response.scaling(), terminal, out_path);
    case v1::AnalyzeResponse::ANALYSIS_NOT_SET:
      break;
  }
  std::ostringstream out;
  Prologue(out, terminal, Canvas{640, 360}, out_path);
  MessageFigure(out, "", "no analysis in the response");
  return Finish(out);
}

}  // namespace

std::string GnuplotScript(const v1::AnalyzeResponse& response, const std::string& out_path) {
  // PlotAnalysis refuses other extensions; anything not .svg draws a PNG.
  const Terminal terminal = Extension(out_path) == ".svg" ? Terminal::kSvg : Terminal::kPng;
  return ScriptFor(response, terminal, out_path);
}

absl::Status PlotAnalysis(const v1::AnalyzeResponse& response, const std::string& out_path) {
  const std::string extension = Extension(out_path);
  if (extension != ".png" && extension != ".svg") {
    return absl::InvalidArgumentError(absl::StrCat("--plot: cannot draw '", out_path,
                                                   "': the file name must end in .png or .svg"));
  }
  return gnuplot::Run(GnuplotScript(response, out_path), out_path);
}

absl::StatusOr<std::string> RenderSvg(const v1::AnalyzeResponse& response) {
  return gnuplot::Render(
      [&response](const std::string& path) { return GnuplotScript(response, path); }, "figure.svg");
}

}  // namespace paradnn::client
