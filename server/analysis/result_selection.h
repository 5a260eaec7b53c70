// The results an analysis reads and what they mean: the metrics (their
// columns, values and units), fields and configuration labels of the records
// db/result_records.h selects with SQL.
#ifndef PARADNN_SERVER_ANALYSIS_RESULT_SELECTION_H_
#define PARADNN_SERVER_ANALYSIS_RESULT_SELECTION_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/analysis_metrics.h"
#include "db/database.h"
#include "db/result_records.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::server::analysis {

// One metric an analysis can read from a result (the table is
// common/analysis_metrics.cc, which the CLI's help and units read too).
using MetricInfo = common::AnalysisMetric;

// Every metric, in the order help texts list them.
inline const std::vector<MetricInfo>& Metrics() { return common::AnalysisMetrics(); }

// The fields that are not hyper-parameters (family, precision, worker, ...).
inline const std::vector<std::string>& BuiltinFields() { return db::BuiltinResultFields(); }

// The metric called `name` (or `default_name` when `name` is empty);
// InvalidArgument listing the metrics otherwise.
absl::StatusOr<const MetricInfo*> FindMetric(const std::string& name,
                                             const char* default_name = nullptr);

// The records an analysis reads (db/result_records.h holds the query).
using Column = db::ResultColumn;
using Record = db::ResultRecord;
using Selected = db::ResultRecords;
using db::CheckField;
using db::FieldNames;
using db::kMaxCarriedColumns;

// What a request reads: db::ResultRecordPlan with metrics named instead of
// their columns.
struct LoadPlan {
  std::vector<std::string> fields;   // checked: built-in or a hyper-parameter of the sweeps
  bool all_hyper = false;            // also every hyper-parameter of the sweeps
  std::vector<std::string> metrics;  // carry the columns these metrics need
  std::vector<Column> columns;       // and these
  // Set: each record's configuration ("key=value ..." sorted by key) without
  // these hyper-parameters, plus family, precision and optimizer for
  // ConfigLabel.
  std::optional<std::vector<std::string>> config_without;
};

// Reads the results `selection` names on one snapshot. InvalidArgument for
// no sweep, a non-positive id, or an unknown field (in `where` or the plan);
// NotFound for an unknown sweep.
absl::StatusOr<Selected> Load(const db::Database* database, const v1::ResultSelection& selection,
                              const LoadPlan& plan);

// The position of a carried field in Selected::fields. Aborts for a field
// the plan did not carry (a bug, not input).
int FieldIndex(const Selected& selected, const std::string& field);

// The dictionary id of carried field `index` for `record`: equal ids are
// equal values, so grouping works on ids.
inline uint32_t ValueId(const Selected& selected, const Record& record, int index) {
  return selected.values[record.first_value + static_cast<uint32_t>(index)];
}

// The value of a carried `field` for `record`. Aborts for a field the
// plan did not carry.
const std::string& FieldValue(const Selected& selected, const Record& record,
                              const std::string& field);

// A carried measured column; nullopt where NULL or not finite. Aborts for a
// column the plan did not carry.
std::optional<double> ColumnValue(const Selected& selected, const Record& record, Column column);
// `metric` of an OK record; nullopt for other outcomes or a missing value.
std::optional<double> MetricValue(const Selected& selected, const Record& record,
                                  const std::string& metric);

// The 90 % interval of `value`, `metric` of a predicted `record`, from its
// step time's: scaled for step_time, inverted for the rates (examples/s,
// FLOP/s, MFU); nullopt for a measured record or a metric the step time
// does not set (params and model FLOPs are exact, not predicted).
std::optional<std::pair<double, double>> PredictedInterval(const Record& record,
                                                           const std::string& metric, double value);

// How many of `selected`'s records are predictions.
int64_t PredictedCount(const Selected& selected);

// "fc layer=4 node=1024 precision=float32 optimizer=rmsprop": the family,
// the record's configuration, and precision and optimizer unless `field`
// is one of them. Needs a plan with config_without.
std::string ConfigLabel(const Selected& selected, const Record& record, const std::string& field);

// The OK records with a value of `metric`; InvalidArgument when none has.
absl::StatusOr<std::vector<std::pair<const Record*, double>>> MeasuredRecords(
    const Selected& selected, const MetricInfo& metric);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_RESULT_SELECTION_H_
