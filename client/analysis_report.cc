#include "client/analysis_report.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <kainjow/mustache.hpp>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/analysis_plots.h"
#include "client/analysis_views.h"
#include "common/state_names.h"
#include "model/sweep.h"
#include "platform/silicon_peak.h"

namespace paradnn::client {
namespace internal {
// The page's template (client/report_template.mustache), embedded at build
// time by client/CMakeLists.txt (report_template.cc in the build tree).
extern const std::string_view kReportTemplate;
}  // namespace internal

namespace {

namespace mustache = kainjow::mustache;

std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// One row of the sweeps table per sweep.
mustache::data SweepRows(const std::vector<v1::SweepStatus>& sweeps) {
  mustache::data rows(mustache::data::type::list);
  for (const auto& sweep : sweeps) {
    rows.push_back(mustache::object{{"id", absl::StrCat(sweep.sweep_id())},
                                    {"name", sweep.name()},
                                    {"family", sweep.family()},
                                    {"device", sweep.device()},
                                    {"state", std::string(common::SweepStateName(sweep.state()))},
                                    {"done", absl::StrCat(sweep.done_jobs())},
                                    {"total", absl::StrCat(sweep.total_jobs())},
                                    {"ok", absl::StrCat(sweep.ok_results())}});
  }
  return rows;
}

// One row of the platforms table per platform: workers on one platform (same
// fingerprint and host) share a row.
mustache::data PlatformRows(const std::vector<v1::WorkerInfo>& workers) {
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
  mustache::data rows(mustache::data::type::list);
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
      std::string text = absl::StrFormat("%s %s %.0f GFLOP/s", platform::RoofKernel(roof),
                                         roof.dtype(), roof.flops_per_sec() / 1e9);
      if (roof.theoretical_flops_per_sec() > 0) {
        absl::StrAppend(&text,
                        absl::StrFormat(" (peak %.0f)", roof.theoretical_flops_per_sec() / 1e9));
      }
      roofs.push_back(std::move(text));
    }
    rows.push_back(mustache::object{
        {"workers", absl::StrJoin(entry.workers, ", ")},
        {"device", platform.device_name()},
        {"kind", platform.device_kind().empty() ? worker.device_kind() : platform.device_kind()},
        {"host", platform.hostname().empty() ? worker.hostname() : platform.hostname()},
        {"cores", cores},
        {"blas", platform.blas_backend()},
        {"libtorch", platform.libtorch_version()},
        {"onednn", platform.onednn_version()},
        {"isa_paths", platform.isa_paths()},
        {"clock", platform::PlatformClockText(platform)},
        {"roofs", roofs.empty() ? "not calibrated" : absl::StrJoin(roofs, "; ")},
        {"fingerprint", platform.fingerprint().substr(0, 12)}});
  }
  return rows;
}

// gnuplot's SVG made fit to sit inside HTML: no XML prologue or DOCTYPE,
// the document title replaced by the section's, and every id (and each
// reference to one) prefixed so that figures on one page do not share ids.
std::string InlineSvg(std::string svg, const std::string& id_prefix, const std::string& title) {
  const size_t start = svg.find("<svg");
  if (start != std::string::npos) svg.erase(0, start);
  const std::string gnuplot_title = "<title>Gnuplot</title>";
  if (size_t at = svg.find(gnuplot_title); at != std::string::npos) {
    svg.replace(at, gnuplot_title.size(),
                absl::StrCat("<title>", mustache::html_escape(title), "</title>"));
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

// The values params.`name` takes in `sweep`, as its expansion gives them;
// none when the sweep does not set it or the family does not know it.
std::set<int64_t> SweptValues(const v1::SweepStatus& sweep, const std::string& name) {
  const auto param = sweep.spec().params().find(name);
  const model::FamilyDef* family = model::FindFamily(sweep.family());
  const model::ParamRule* rule = family == nullptr ? nullptr : model::FindParam(*family, name);
  if (param == sweep.spec().params().end() || rule == nullptr) return {};
  absl::StatusOr<std::vector<int64_t>> values =
      model::ParamValues(param->second, *rule, absl::StrCat("params.", name));
  if (!values.ok()) return {};
  return std::set<int64_t>(values->begin(), values->end());
}

PlannedAnalysis ScaleOutSection(const std::string& family, const std::vector<int64_t>& sweep_ids,
                                const std::string& field, const std::set<int64_t>& values) {
  PlannedAnalysis analysis;
  analysis.title = absl::StrCat(family, ": data-parallel scaling over ", field);
  analysis.caption = absl::StrCat(
      "Examples/s of the whole job against ", field, " (", absl::StrJoin(values, ", "),
      ") on log axes, dashed the ideal line (the smallest N's throughput times N over it); "
      "weak scaling keeps the per-replica batch, strong scaling the global batch; each "
      "series' baseline says whether it was a 1-replica run on the same communication path "
      "or a plain run. Right: the step of the first series stacked into compute, exposed "
      "communication, optimizer and the rest; the table says where communication passes half "
      "of the step.");
  for (int64_t id : sweep_ids) analysis.request.mutable_selection()->add_sweep_ids(id);
  (*analysis.request.mutable_selection()->mutable_where())["family"] = family;
  analysis.request.mutable_scale_out()->set_field(field);
  return analysis;
}

}  // namespace

std::vector<PlannedAnalysis> PlanScaleOutSections(const std::vector<v1::SweepStatus>& sweeps) {
  struct FamilyCounts {
    std::vector<int64_t> sweep_ids;
    std::map<std::string, std::set<int64_t>> values;  // hosts, devices
  };
  std::map<std::string, FamilyCounts> families;
  for (const v1::SweepStatus& sweep : sweeps) {
    if (sweep.family() == kAllreduceFamily) continue;  // its hosts are ranks, not a scale-out
    FamilyCounts& family = families[sweep.family()];
    family.sweep_ids.push_back(sweep.sweep_id());
    for (const char* field : {"hosts", "devices"}) {
      const std::set<int64_t> values = SweptValues(sweep, field);
      family.values[field].insert(values.begin(), values.end());
    }
  }
  std::vector<PlannedAnalysis> planned;
  for (const auto& [name, family] : families) {
    for (const char* field : {"hosts", "devices"}) {
      const std::set<int64_t>& values = family.values.at(field);
      if (values.size() > 1)
        planned.push_back(ScaleOutSection(name, family.sweep_ids, field, values));
    }
  }
  return planned;
}

std::vector<PlannedAnalysis> PlanAllreduceSections(const std::vector<v1::SweepStatus>& sweeps) {
  PlannedAnalysis analysis;
  for (const v1::SweepStatus& sweep : sweeps) {
    if (sweep.family() == kAllreduceFamily) {
      analysis.request.mutable_selection()->add_sweep_ids(sweep.sweep_id());
    }
  }
  if (analysis.request.selection().sweep_ids().empty()) return {};
  analysis.title = "allreduce: the communication roof";
  analysis.caption =
      "Bus bandwidth of one all-reduce against the message size (log x), per platform, backend "
      "and ranks; the line is the alpha-beta roof t(M) = alpha + M x 2(n-1)/n / beta fitted in "
      "relative least squares (alpha the latency, beta the asymptotic bus bandwidth; 95 % "
      "intervals in the table). scale_out and the roofline compare data-parallel jobs of the "
      "same platform, backend and ranks with the latest such roof.";
  (*analysis.request.mutable_selection()->mutable_where())["family"] = kAllreduceFamily;
  analysis.request.mutable_allreduce();
  return {std::move(analysis)};
}

absl::Status WriteReport(const ReportInput& input, const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create report directory ", out_dir, ": ", error.message()));
  }
  mustache::data page;
  page.set("generated", UtcNow());
  page.set("has_sweeps", !input.sweeps.empty());
  page.set("sweeps", SweepRows(input.sweeps));
  mustache::data platforms = PlatformRows(input.workers);
  page.set("has_platforms", !platforms.list_value().empty());
  page.set("platforms", platforms);
  mustache::data sections(mustache::data::type::list);
  for (size_t i = 0; i < input.sections.size(); ++i) {
    const ReportSection& section = input.sections[i];
    absl::StatusOr<std::string> svg = RenderSvg(section.response);
    if (!svg.ok()) return svg.status();
    sections.push_back(mustache::object{
        {"number", absl::StrCat(i + 1)},
        {"title", section.title},
        {"has_caption", !section.caption.empty()},
        {"caption", section.caption},
        {"figure", InlineSvg(*std::move(svg), absl::StrCat("f", i + 1, "-"), section.title)},
        {"table", FormatAnalysis(section.response, OutputFormat::kTable)}});
  }
  page.set("has_sections", !input.sections.empty());
  page.set("sections", sections);
  mustache::data notes(mustache::data::type::list);
  for (const auto& note : input.notes) notes.push_back(mustache::object{{"note", note}});
  page.set("has_notes", !input.notes.empty());
  page.set("notes", notes);

  // The template is part of the binary: one that does not parse or render
  // is a build defect, reported rather than written as a broken page.
  mustache::mustache page_template{std::string(internal::kReportTemplate)};
  if (!page_template.is_valid()) {
    return absl::InternalError(
        absl::StrCat("report template does not parse: ", page_template.error_message()));
  }
  const std::string html = page_template.render(page);
  if (!page_template.is_valid()) {
    return absl::InternalError(
        absl::StrCat("report template does not render: ", page_template.error_message()));
  }

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
