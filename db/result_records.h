// The results an analysis reads, selected with SQL: the sweeps of a
// v1::ResultSelection, its `where` filters, the requested hyper-parameters
// and the built-in fields (family, precision, threads, platform, ...) of each
// result, and its measured columns. The statement is written for what the
// request reads (its text depends on the request's shape only; every value
// is bound) and prepared uncached, so requests never grow the connection's
// statement cache. Hyper-parameters come per configuration (configs,
// config_params), read once for all the results that share it. What the
// records mean (metrics, labels) is server/analysis/result_selection.h.
#ifndef PARADNN_DB_RESULT_RECORDS_H_
#define PARADNN_DB_RESULT_RECORDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/analysis.pb.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {

// The measured columns a record carries (NaN where NULL).
enum class ResultColumn {
  kExamplesPerSec,
  kModelFlopsPerSec,
  kExecutedFlopsPerSec,
  kMfu,
  kHfu,
  kStepMedianSeconds,
  kStepCv,
  kModelFlops,
  kExecutedFlops,
  kBytesPerStep,
  kPeakRssBytes,
  kSiliconMfu,
  kSiliconHfu,
  kCount,
};

// The most measured columns one plan carries per record.
inline constexpr size_t kMaxCarriedColumns = 4;

// One selected result. Field values live in ResultRecords (dictionary ids),
// so a million records stay near 100 MB.
struct ResultRecord {
  int64_t job_id = 0;
  int64_t platform_id = 0;
  int64_t params = 0;
  v1::Outcome outcome = v1::OUTCOME_UNSPECIFIED;
  uint32_t first_value = 0;  // index of this record's first field id in ResultRecords::values
  uint32_t config = 0;       // dictionary id of the configuration ("" when not asked for)
  std::array<double, kMaxCarriedColumns> columns;  // ResultRecords::columns, NaN where NULL
  // A budgeted sweep's prediction (ResultSelection.include_predicted), not
  // a measurement: its step time's 90 % interval as ratios to the step
  // time (low <= 1 <= high).
  bool predicted = false;
  float step_low_ratio = 1;
  float step_high_ratio = 1;
};

struct ResultRecords {
  std::vector<std::string> fields;      // carried per record, in order
  std::vector<std::string> all_keys;    // every hyper-parameter of the selected sweeps
  std::vector<ResultColumn> columns;    // carried per record, in order
  std::vector<std::string> dictionary;  // field values and configurations by id
  std::vector<uint32_t> values;         // fields.size() ids per record
  std::vector<ResultRecord> records;    // by sweep then job id, or by result id
};

// What a request reads.
struct ResultRecordPlan {
  std::vector<std::string> fields;    // checked: built-in or a hyper-parameter of the sweeps
  bool all_hyper = false;             // also every hyper-parameter of the sweeps
  std::vector<ResultColumn> columns;  // measured columns to carry
  // Set: each record's configuration ("key=value ..." sorted by key) without
  // these hyper-parameters, plus family, precision and optimizer for
  // ConfigLabel.
  std::optional<std::vector<std::string>> config_without;
};

// Reads the results `selection` names on one snapshot, and with
// include_predicted the predicted jobs after them: OK records whose step
// time, examples/s and model FLOP/s are the prediction's, MFU through the
// roof of the sweep's latest OK measurement of the same precision (whose
// platform, threads and stack they carry: the group the model was fitted
// on), model FLOPs and parameters from the job; no worker, and no value of
// what the model does not predict. InvalidArgument for
// no sweep, a non-positive id, or an unknown field (in `where` or the plan);
// NotFound for an unknown sweep.
absl::StatusOr<ResultRecords> LoadResultRecords(const Database& database,
                                                const v1::ResultSelection& selection,
                                                const ResultRecordPlan& plan);

// The fields that are not hyper-parameters (family, precision, worker, ...).
const std::vector<std::string>& BuiltinResultFields();

// InvalidArgument naming `role` unless `field` is built-in or one of
// `hyper_keys`.
absl::Status CheckField(const std::string& role, const std::string& field,
                        const std::vector<std::string>& hyper_keys);

// "hyper-parameters of the selected sweeps: ...; other fields: ..."
std::string FieldNames(const std::vector<std::string>& hyper_keys);

}  // namespace paradnn::db

#endif  // PARADNN_DB_RESULT_RECORDS_H_
