#include "client/analysis_plots.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "client/analysis_kinds.h"
#include "client/analysis_views.h"
#include "client/gnuplot.h"

namespace paradnn::client {
namespace {

using gnuplot::Canvas;
using gnuplot::Finish;
using gnuplot::MessageFigure;
using gnuplot::Prologue;
using gnuplot::Terminal;

std::string ScriptFor(const v1::AnalyzeResponse& response, Terminal terminal,
                      const std::string& out_path) {
  const AnalysisKind* kind = KindOf(response);
  if (kind != nullptr && kind->plot_script != nullptr) {
    return kind->plot_script(response, terminal, out_path);
  }
  std::ostringstream out;
  Prologue(out, terminal, Canvas{640, 360}, out_path);
  MessageFigure(out, "",
                kind == nullptr ? "no analysis in the response"
                                : absl::StrCat(kind->name, " has no figure yet: see its table"));
  return Finish(out);
}

// `script` with `subtitle` as a second line of its figure's title (the
// first `set title` or multiplot title; each is the last thing on its line).
constexpr size_t kSubtitleWidth = 90;

std::string WithSubtitle(std::string script, const std::string& subtitle) {
  if (subtitle.empty()) return script;
  size_t at = std::string::npos;
  for (const char* opening : {"\nset title ", "\nset multiplot layout "}) {
    at = std::min(at, script.find(opening));
  }
  if (at == std::string::npos) return script;
  size_t end = script.find('\n', at + 1);
  if (end == std::string::npos) return script;
  if (script.compare(at, 20, "\nset multiplot layou") == 0 &&
      script.substr(at, end - at).find(" title ") == std::string::npos) {
    return script;
  }
  // Lines of at most kSubtitleWidth characters, broken after "; " or ", ",
  // so that a long scope wraps instead of running off the canvas.
  std::vector<std::string> lines = {""};
  for (absl::string_view piece : absl::StrSplit(subtitle, absl::ByAnyChar(";,"))) {
    const char separator = piece.data() + piece.size() < subtitle.data() + subtitle.size()
                               ? piece.data()[piece.size()]
                               : '\0';
    std::string part = absl::StrCat(piece, separator == '\0' ? "" : std::string(1, separator));
    if (!lines.back().empty() && lines.back().size() + part.size() > kSubtitleWidth) {
      lines.push_back(std::string(absl::StripLeadingAsciiWhitespace(part)));
    } else {
      lines.back() += part;
    }
  }
  for (const std::string& line : lines) {
    script.insert(end, absl::StrCat(" . \"\\n\" . ", gnuplot::Quote(line)));
    end = script.find('\n', end + 1);  // after what was just inserted
  }
  return script;
}

}  // namespace

std::string NativeSvgTooltips(const std::string& svg) {
  static constexpr absl::string_view kOpen = "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'";
  static constexpr absl::string_view kClose =
      "')\" onmouseout=\"gnuplot_svg.hideHypertext()\"><title> </title>";
  std::string out;
  out.reserve(svg.size());
  size_t from = 0;
  for (;;) {
    const size_t open = svg.find(kOpen.data(), from, kOpen.size());
    if (open == std::string::npos) break;
    const size_t text = open + kOpen.size();
    const size_t close = svg.find(kClose.data(), text, kClose.size());
    if (close == std::string::npos) break;
    absl::StrAppend(&out, absl::string_view(svg).substr(from, open - from), "<g><title>",
                    absl::string_view(svg).substr(text, close - text), "</title>");
    from = close + kClose.size();
  }
  out.append(svg, from, std::string::npos);
  return out;
}

std::string GnuplotScript(const v1::AnalyzeResponse& response, const std::string& out_path) {
  // PlotAnalysis refuses other extensions; anything not .svg draws a PNG.
  const Terminal terminal = gnuplot::PlotTerminal(out_path).value_or(Terminal::kPng);
  return WithSubtitle(ScriptFor(response, terminal, out_path),
                      ScopeSummary(response.scope(), /*compact=*/true));
}

absl::Status PlotAnalysis(const v1::AnalyzeResponse& response, const std::string& out_path) {
  const absl::StatusOr<Terminal> terminal = gnuplot::PlotTerminal(out_path);
  if (!terminal.ok()) return terminal.status();
  if (absl::Status s = gnuplot::Run(GnuplotScript(response, out_path), out_path); !s.ok()) {
    return s;
  }
  if (*terminal != Terminal::kSvg) return absl::OkStatus();
  std::string svg;
  {
    std::ifstream in(out_path, std::ios::binary);
    svg.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) return absl::InternalError(absl::StrCat("cannot read ", out_path));
  }
  std::ofstream rewritten(out_path, std::ios::binary | std::ios::trunc);
  rewritten << NativeSvgTooltips(svg);
  rewritten.close();
  if (!rewritten) return absl::InternalError(absl::StrCat("cannot write ", out_path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> RenderSvg(const v1::AnalyzeResponse& response) {
  absl::StatusOr<std::string> svg = gnuplot::Render(
      [&response](const std::string& path) { return GnuplotScript(response, path); }, "figure.svg");
  if (!svg.ok()) return svg.status();
  return NativeSvgTooltips(*svg);
}

}  // namespace paradnn::client
