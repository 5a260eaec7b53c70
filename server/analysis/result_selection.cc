#include "server/analysis/result_selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::server::analysis {
namespace {

// The columns `metric` is computed from.
std::vector<Column> ColumnsOf(const std::string& metric) {
  if (metric == "examples_per_sec") return {Column::kExamplesPerSec};
  if (metric == "gflops") return {Column::kModelFlopsPerSec};
  if (metric == "executed_gflops") return {Column::kExecutedFlopsPerSec};
  if (metric == "mfu") return {Column::kMfu};
  if (metric == "hfu") return {Column::kHfu};
  if (metric == "silicon_mfu") return {Column::kSiliconMfu};
  if (metric == "silicon_hfu") return {Column::kSiliconHfu};
  if (metric == "step_time") return {Column::kStepMedianSeconds};
  if (metric == "step_cv") return {Column::kStepCv};
  if (metric == "model_flops") return {Column::kModelFlops};
  if (metric == "intensity") return {Column::kExecutedFlops, Column::kBytesPerStep};
  if (metric == "peak_rss") return {Column::kPeakRssBytes};
  return {};  // params: from the record itself
}

std::string MetricNames() {
  std::vector<std::string> names;
  for (const MetricInfo& metric : Metrics()) names.emplace_back(metric.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

// ---- Metrics ----------------------------------------------------------------

std::optional<double> ColumnValue(const Selected& selected, const Record& record, Column column) {
  for (size_t i = 0; i < selected.columns.size(); ++i) {
    if (selected.columns[i] != column) continue;
    const double value = record.columns[i];
    if (!std::isfinite(value)) return std::nullopt;
    return value;
  }
  std::fprintf(stderr, "analysis bug: column %d was not loaded\n", static_cast<int>(column));
  std::abort();
}

std::optional<double> MetricValue(const Selected& selected, const Record& record,
                                  const std::string& metric) {
  if (record.outcome != v1::OK) return std::nullopt;
  if (metric == "params") {
    if (record.params <= 0) return std::nullopt;
    return static_cast<double>(record.params);
  }
  if (metric == "intensity") {
    std::optional<double> flops = ColumnValue(selected, record, Column::kExecutedFlops);
    std::optional<double> bytes = ColumnValue(selected, record, Column::kBytesPerStep);
    if (!flops || !bytes || *bytes <= 0) return std::nullopt;
    return *flops / *bytes;
  }
  const std::vector<Column> columns = ColumnsOf(metric);
  if (columns.size() != 1) return std::nullopt;
  std::optional<double> value = ColumnValue(selected, record, columns[0]);
  if (value && (metric == "gflops" || metric == "executed_gflops")) return *value / 1e9;
  return value;
}

std::optional<std::pair<double, double>> PredictedInterval(const Record& record,
                                                           const std::string& metric,
                                                           double value) {
  if (!record.predicted) return std::nullopt;
  const double low = record.step_low_ratio;
  const double high = record.step_high_ratio;
  if (metric == "step_time") return std::make_pair(value * low, value * high);
  if (metric == "examples_per_sec" || metric == "gflops" || metric == "mfu" ||
      metric == "silicon_mfu") {
    if (!(low > 0) || !(high > 0)) return std::nullopt;
    return std::make_pair(value / high, value / low);
  }
  return std::nullopt;
}

int64_t PredictedCount(const Selected& selected) {
  return std::count_if(selected.records.begin(), selected.records.end(),
                       [](const Record& record) { return record.predicted; });
}

absl::StatusOr<const MetricInfo*> FindMetric(const std::string& name, const char* default_name) {
  const std::string wanted = name.empty() && default_name != nullptr ? default_name : name;
  if (wanted.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("metric is required; one of ", MetricNames()));
  }
  for (const MetricInfo& metric : Metrics()) {
    if (wanted == metric.name) return &metric;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("metric '", wanted, "' is unknown; allowed: ", MetricNames()));
}

absl::StatusOr<Selected> Load(const db::Database* database, const v1::ResultSelection& selection,
                              const LoadPlan& plan) {
  db::ResultRecordPlan records;
  records.fields = plan.fields;
  records.all_hyper = plan.all_hyper;
  for (const std::string& metric : plan.metrics) {
    for (Column column : ColumnsOf(metric)) {
      if (std::find(records.columns.begin(), records.columns.end(), column) ==
          records.columns.end()) {
        records.columns.push_back(column);
      }
    }
  }
  for (Column column : plan.columns) {
    if (std::find(records.columns.begin(), records.columns.end(), column) ==
        records.columns.end()) {
      records.columns.push_back(column);
    }
  }
  records.config_without = plan.config_without;
  return db::LoadResultRecords(*database, selection, records);
}

int FieldIndex(const Selected& selected, const std::string& field) {
  for (size_t i = 0; i < selected.fields.size(); ++i) {
    if (selected.fields[i] == field) return static_cast<int>(i);
  }
  std::fprintf(stderr, "analysis bug: field '%s' was not loaded\n", field.c_str());
  std::abort();
}

const std::string& FieldValue(const Selected& selected, const Record& record,
                              const std::string& field) {
  return selected.dictionary[ValueId(selected, record, FieldIndex(selected, field))];
}

std::string ConfigLabel(const Selected& selected, const Record& record, const std::string& field) {
  std::string label = FieldValue(selected, record, "family");
  const std::string& config = selected.dictionary[record.config];
  if (!config.empty()) absl::StrAppend(&label, " ", config);
  if (field != "precision") {
    absl::StrAppend(&label, " precision=", FieldValue(selected, record, "precision"));
  }
  if (field != "optimizer") {
    absl::StrAppend(&label, " optimizer=", FieldValue(selected, record, "optimizer"));
  }
  return label;
}

absl::StatusOr<std::vector<std::pair<const Record*, double>>> MeasuredRecords(
    const Selected& selected, const MetricInfo& metric) {
  std::vector<std::pair<const Record*, double>> measured;
  measured.reserve(selected.records.size());
  int64_t ok = 0;
  for (const Record& record : selected.records) {
    if (record.outcome == v1::OK) ++ok;
    if (std::optional<double> value = MetricValue(selected, record, metric.name)) {
      measured.emplace_back(&record, *value);
    }
  }
  if (measured.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no selected result has a value of metric '", metric.name, "' (",
                     selected.records.size(), " results selected, ", ok, " OK",
                     ok > 0 ? "; the workers may lack a calibrated roof" : "", ")"));
  }
  return measured;
}

}  // namespace paradnn::server::analysis
