#include "client/analysis_views.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/analysis_kind_views.h"
#include "client/analysis_kinds.h"
#include "common/analysis_metrics.h"
#include "common/human_units.h"

namespace paradnn::client {
namespace internal {

// ---- Text the kinds' views share ------------------------------------------------

std::string HumanValue(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  if (unit == "%") return absl::StrCat(Significant3(value), "%");
  if (unit == "fraction") return absl::StrCat(Significant3(value * 100), "%");
  if (unit == "s") return HumanMillis(value * 1e3);
  if (unit == "bytes" || unit == "B") return common::HumanBytes(value);
  return HumanCount(value);
}

std::string WithPrefix(double value, absl::string_view unit) {
  std::string number = HumanCount(value);
  const bool prefixed = !number.empty() && absl::ascii_isalpha(number.back());
  if (prefixed) number.insert(number.size() - 1, " ");
  return absl::StrCat(number, prefixed ? "" : " ", unit);
}

std::string Times(double ratio) {
  return std::isfinite(ratio) ? absl::StrCat(Significant3(ratio), "×") : "-";
}

std::string Percent(double fraction) {
  return std::isfinite(fraction) ? absl::StrCat(Significant3(fraction * 100), "%") : "-";
}

std::string WithUnit(const std::string& metric, const std::string& unit) {
  return unit.empty() ? metric : absl::StrCat(metric, " (", unit, ")");
}

// ---- Display units ----------------------------------------------------------

bool IsFraction(const std::string& unit) { return unit == "fraction"; }

bool IsFractionMetric(const std::string& metric) {
  const common::AnalysisMetric* info = common::FindAnalysisMetric(metric);
  return info != nullptr && IsFraction(info->unit);
}

void ScaleToPercent(google::protobuf::RepeatedField<double>* values) {
  for (double& v : *values) v *= kPercentPerFraction;
}

}  // namespace internal

namespace {

// ---- JSON -----------------------------------------------------------------------

std::string AnalysisJson(const v1::AnalyzeResponse& response) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(response, &text, options);
  // Only a message that could not have come off the wire (invalid UTF-8 in
  // a string) fails; say so in JSON rather than print half of it.
  const nlohmann::ordered_json json =
      status.ok() ? nlohmann::ordered_json::parse(text)
                  : nlohmann::ordered_json{{"error", std::string(status.message())}};
  // Re-printed for the two-space indent of the CLI's other JSON; numbers
  // keep their shortest round-trip form.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string ScopeSummary(const v1::AnalysisScope& scope, bool compact) {
  if (scope.sweep_ids().empty()) return "";
  std::string line = absl::StrCat(scope.sweep_ids_size() == 1 ? "sweep " : "sweeps ",
                                  absl::StrJoin(scope.sweep_ids(), ", "));
  if (!scope.where().empty()) {
    // Sorted, so that the line reads the same every time.
    std::map<std::string, std::string> where(scope.where().begin(), scope.where().end());
    absl::StrAppend(&line, " where ", absl::StrJoin(where, " ", absl::PairFormatter("=")));
  }
  if (!scope.platforms().empty()) {
    absl::StrAppend(&line, "; ", absl::StrJoin(scope.platforms(), ", "));
  }
  if (!scope.aggregation().empty()) {
    absl::StrAppend(&line, "; ", scope.aggregation());
    std::vector<std::string> across;
    for (const v1::FieldValues& field : scope.aggregated()) {
      across.push_back(
          compact && field.values_size() > 3
              ? absl::StrCat(field.field(), " (", field.values_size(), " values)")
              : absl::StrCat(field.field(), " (", absl::StrJoin(field.values(), ", "), ")"));
    }
    absl::StrAppend(&line, across.empty() ? " (nothing else varies)"
                                          : absl::StrCat(" across ", absl::StrJoin(across, ", ")));
  }
  return line;
}

std::string FormatAnalysis(const v1::AnalyzeResponse& response, OutputFormat format) {
  if (format == OutputFormat::kJson) return AnalysisJson(response);
  if (format == OutputFormat::kTable && response.has_scope()) {
    v1::AnalyzeResponse bare = response;
    bare.clear_scope();
    std::string predicted;
    if (response.predicted_results() > 0) {
      predicted = absl::StrCat("includes ", response.predicted_results(), " predicted of ",
                               response.results(), " results (docs/prediction.md)\n");
    }
    return absl::StrCat(FormatAnalysis(bare, format), "over: ", ScopeSummary(response.scope()),
                        "\n", predicted);
  }
  const bool csv = format == OutputFormat::kCsv;
  const AnalysisKind* kind = KindOf(response);
  if (kind == nullptr) return csv ? "" : "no analysis in the response\n";
  return csv ? kind->csv(response) : kind->table(response);
}

std::string DisplayUnitOfMetric(const std::string& metric) {
  const common::AnalysisMetric* info = common::FindAnalysisMetric(metric);
  if (info == nullptr) return "";
  return internal::IsFraction(info->unit) ? "%" : info->unit;
}

void ToDisplayUnits(v1::AnalyzeResponse* response) {
  const AnalysisKind* kind = KindOf(*response);
  if (kind != nullptr && kind->to_display_units != nullptr) kind->to_display_units(response);
}

}  // namespace paradnn::client
