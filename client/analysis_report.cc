#include "client/analysis_report.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/analysis_plots.h"
#include "client/analysis_views.h"
#include "common/state_names.h"

namespace paradnn::client {
namespace {

constexpr char kStyle[] = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
p.meta { color: #666; margin-top: 0; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f8f8f8; border: 1px solid #e3e3e3; padding: 0.8em; overflow-x: auto;
      font-size: 0.85em; }
code { font-size: 0.95em; }
)css";

std::string Escape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string Row(const std::vector<std::string>& cells, const std::vector<bool>& numeric = {}) {
  std::string out = "<tr>";
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool num = i < numeric.size() && numeric[i];
    absl::StrAppend(&out, num ? "<td class=\"num\">" : "<td>", Escape(cells[i]), "</td>");
  }
  return out + "</tr>\n";
}

std::string Header(const std::vector<std::string>& names) {
  std::string out = "<tr>";
  for (const auto& name : names) absl::StrAppend(&out, "<th>", Escape(name), "</th>");
  return out + "</tr>\n";
}

std::string SweepsTable(const std::vector<v1::SweepStatus>& sweeps) {
  if (sweeps.empty()) return "<p>No sweeps.</p>\n";
  std::string out = "<table>\n";
  out += Header({"id", "name", "family", "device", "state", "done/total", "ok"});
  for (const auto& sweep : sweeps) {
    out += Row({absl::StrCat(sweep.sweep_id()), sweep.name(), sweep.family(), sweep.device(),
                common::SweepStateName(sweep.state()),
                absl::StrCat(sweep.done_jobs(), "/", sweep.total_jobs()),
                absl::StrCat(sweep.ok_results())},
               {true, false, false, false, false, true, true});
  }
  return out + "</table>\n";
}

std::string PlatformsTable(const std::vector<v1::WorkerInfo>& workers) {
  // Workers on one platform (same fingerprint and host) share a row.
  struct Entry {
    std::vector<std::string> workers;
    const v1::WorkerInfo* info = nullptr;
  };
  std::vector<std::pair<std::string, Entry>> entries;
  for (const auto& worker : workers) {
    const v1::Platform& platform = worker.platform();
    const std::string key =
        platform.fingerprint().empty()
            ? absl::StrCat("worker:", worker.worker_id())
            : absl::StrCat(platform.fingerprint(), "@",
                           platform.hostname().empty() ? worker.hostname() : platform.hostname());
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it == entries.end()) {
      entries.push_back({key, Entry{{}, &worker}});
      it = entries.end() - 1;
    }
    it->second.workers.push_back(worker.worker_id());
  }
  if (entries.empty()) return "<p>No workers registered.</p>\n";
  std::string out = "<table>\n";
  out += Header({"workers", "device", "kind", "host", "cores / threads", "BLAS", "LibTorch",
                 "oneDNN", "ISA paths", "matmul roofs", "fingerprint"});
  for (const auto& [key, entry] : entries) {
    const v1::WorkerInfo& worker = *entry.info;
    const v1::Platform& platform = worker.platform();
    std::string cores;
    if (platform.cores() > 0 || platform.logical_cpus() > 0) {
      cores =
          absl::StrCat(platform.cores() > 0 ? absl::StrCat(platform.cores()) : "?", " / ",
                       platform.logical_cpus() > 0 ? absl::StrCat(platform.logical_cpus()) : "?");
      if (platform.sockets() > 1) absl::StrAppend(&cores, " (", platform.sockets(), " sockets)");
    }
    std::vector<std::string> roofs;
    for (const auto& roof : platform.matmul_roofs()) {
      std::string text =
          absl::StrFormat("%s %s %.0f GFLOP/s", roof.kernel().empty() ? "matmul" : roof.kernel(),
                          roof.dtype(), roof.flops_per_sec() / 1e9);
      if (roof.theoretical_flops_per_sec() > 0) {
        absl::StrAppend(&text,
                        absl::StrFormat(" (peak %.0f)", roof.theoretical_flops_per_sec() / 1e9));
      }
      roofs.push_back(std::move(text));
    }
    out += Row({absl::StrJoin(entry.workers, ", "), platform.device_name(),
                platform.device_kind().empty() ? worker.device_kind() : platform.device_kind(),
                platform.hostname().empty() ? worker.hostname() : platform.hostname(), cores,
                platform.blas_backend(), platform.libtorch_version(), platform.onednn_version(),
                platform.isa_paths(), roofs.empty() ? "not calibrated" : absl::StrJoin(roofs, "; "),
                platform.fingerprint().substr(0, 12)});
  }
  return out + "</table>\n";
}

// gnuplot's SVG made fit to sit inside HTML: no XML prologue or DOCTYPE,
// the document title replaced by the section's, and every id (and each
// reference to one) prefixed so that figures on one page do not share ids.
std::string InlineSvg(std::string svg, const std::string& id_prefix, const std::string& title) {
  const size_t start = svg.find("<svg");
  if (start != std::string::npos) svg.erase(0, start);
  const std::string gnuplot_title = "<title>Gnuplot</title>";
  if (size_t at = svg.find(gnuplot_title); at != std::string::npos) {
    svg.replace(at, gnuplot_title.size(), absl::StrCat("<title>", Escape(title), "</title>"));
  }
  // Rewrite only inside tags: text content never gains a prefix.
  static constexpr const char* kPatterns[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
  std::string out;
  out.reserve(svg.size() + svg.size() / 16);
  bool in_tag = false;
  for (size_t i = 0; i < svg.size();) {
    const char c = svg[i];
    if (c == '<') in_tag = true;
    if (c == '>') in_tag = false;
    if (in_tag) {
      bool matched = false;
      for (const char* pattern : kPatterns) {
        const size_t length = std::strlen(pattern);
        if (svg.compare(i, length, pattern) == 0 &&
            (pattern[0] != 'i' || i == 0 || svg[i - 1] == ' ' || svg[i - 1] == '\t' ||
             svg[i - 1] == '\n')) {
          absl::StrAppend(&out, pattern, id_prefix);
          i += length;
          matched = true;
          break;
        }
      }
      if (matched) continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace

absl::Status WriteReport(const ReportInput& input, const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create report directory ", out_dir, ": ", error.message()));
  }
  std::string html;
  absl::StrAppend(&html,
                  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>paradnn report</title>\n<style>",
                  kStyle, "</style>\n</head>\n<body>\n<h1>paradnn report</h1>\n",
                  "<p class=\"meta\">Generated ", Escape(UtcNow()), "</p>\n");
  if (!input.sections.empty()) {
    html += "<nav><ol>\n";
    for (size_t i = 0; i < input.sections.size(); ++i) {
      absl::StrAppend(&html, "<li><a href=\"#section-", i + 1, "\">",
                      Escape(input.sections[i].title), "</a></li>\n");
    }
    html += "</ol></nav>\n";
  }
  absl::StrAppend(&html, "<h2>Sweeps</h2>\n", SweepsTable(input.sweeps));
  absl::StrAppend(&html, "<h2>Platforms</h2>\n", PlatformsTable(input.workers));

  for (size_t i = 0; i < input.sections.size(); ++i) {
    const ReportSection& section = input.sections[i];
    absl::StatusOr<std::string> svg = RenderSvg(section.response);
    if (!svg.ok()) return svg.status();
    absl::StrAppend(&html, "<section id=\"section-", i + 1, "\">\n<h2>", Escape(section.title),
                    "</h2>\n");
    if (!section.caption.empty()) absl::StrAppend(&html, "<p>", Escape(section.caption), "</p>\n");
    absl::StrAppend(&html, "<figure>\n",
                    InlineSvg(*std::move(svg), absl::StrCat("f", i + 1, "-"), section.title),
                    "\n</figure>\n<pre>",
                    Escape(FormatAnalysis(section.response, OutputFormat::kTable)),
                    "</pre>\n</section>\n");
  }
  if (!input.notes.empty()) {
    html += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& note : input.notes) absl::StrAppend(&html, "<li>", Escape(note), "</li>\n");
    html += "</ul>\n";
  }
  html += "</body>\n</html>\n";

  // Written beside the final name, then renamed: a reader never sees half a page.
  const std::filesystem::path final_path = std::filesystem::path(out_dir) / "index.html";
  const std::filesystem::path partial_path = std::filesystem::path(out_dir) / ".index.html.partial";
  {
    std::ofstream out(partial_path, std::ios::binary | std::ios::trunc);
    out << html;
    out.close();
    if (!out) {
      std::filesystem::remove(partial_path, error);
      return absl::FailedPreconditionError(absl::StrCat("cannot write ", final_path.string()));
    }
  }
  std::filesystem::rename(partial_path, final_path, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", final_path.string(), ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace paradnn::client
