#include "db/result_records.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::db {
namespace {

// Each built-in field, the SQL expression of its value and the table it
// needs joined beyond jobs and results.
struct BuiltinField {
  enum Join { kNone, kSweeps, kPlatforms };
  const char* name;
  const char* sql;
  Join join;
};
const BuiltinField kBuiltinFields[] = {
    {"family", "s.family", BuiltinField::kSweeps},
    {"precision", "j.precision", BuiltinField::kNone},
    {"optimizer", "j.optimizer", BuiltinField::kNone},
    {"repeat", "CAST(j.repeat AS TEXT)", BuiltinField::kNone},
    {"sweep", "CAST(j.sweep_id AS TEXT)", BuiltinField::kNone},
    {"intra_op_threads", "CAST(r.intra_op_threads AS TEXT)", BuiltinField::kNone},
    {"inter_op_threads", "CAST(r.inter_op_threads AS TEXT)", BuiltinField::kNone},
    {"worker", "r.worker_id", BuiltinField::kNone},
    {"device_kind", "p.device_kind", BuiltinField::kPlatforms},
    {"device_name", "p.device_name", BuiltinField::kPlatforms},
    {"hostname", "p.hostname", BuiltinField::kPlatforms},
    {"libtorch_version", "p.libtorch_version", BuiltinField::kPlatforms},
    {"blas_backend", "p.blas_backend", BuiltinField::kPlatforms},
    // What the result's process ran with (a sweep's stack axis varies it on
    // one platform), else what its platform reported.
    {"blas_core", "COALESCE(NULLIF(r.blas_core, ''), p.blas_core)", BuiltinField::kPlatforms},
    {"aten_capability", "COALESCE(NULLIF(r.aten_capability, ''), p.aten_capability)",
     BuiltinField::kPlatforms},
    // A result whose process ran another stack than its platform's (a
    // sweep's stack axis) is not "same stack" as the platform's others.
    {"fingerprint",
     "p.fingerprint || CASE WHEN (r.blas_core != '' AND r.blas_core != p.blas_core) OR "
     "(r.aten_capability != '' AND p.aten_capability != '' AND "
     "r.aten_capability != p.aten_capability) THEN '+' || r.blas_core || '/' || "
     "r.aten_capability ELSE '' END",
     BuiltinField::kPlatforms},
};
constexpr int kBuiltinCount = static_cast<int>(std::size(kBuiltinFields));

// The measured columns, in Column order.
const char* const kColumnSql[] = {"r.examples_per_sec",
                                  "r.model_flops_per_sec",
                                  "r.executed_flops_per_sec",
                                  "r.mfu",
                                  "r.hfu",
                                  "r.step_median_s",
                                  "r.step_cv",
                                  "r.model_flops",
                                  "r.executed_flops",
                                  "r.bytes_per_step",
                                  "r.peak_rss_bytes",
                                  "r.silicon_mfu",
                                  "r.silicon_hfu"};
static_assert(std::size(kColumnSql) == static_cast<size_t>(ResultColumn::kCount));

// A predicted record's measured columns: what the prediction holds is read
// from it (NULL here), MFU through the measured result's roof (the ratio
// here, times the predicted FLOP/s in ReadRecords), the model FLOPs from the
// job, nothing else.
const char* const kPredictedColumnSql[] = {
    "NULL", "NULL", "NULL", "r.mfu / NULLIF(r.model_flops_per_sec, 0)",
    "NULL", "NULL", "NULL", "j.model_flops",
    "NULL", "NULL", "NULL", "r.silicon_mfu / NULLIF(r.model_flops_per_sec, 0)",
    "NULL"};
static_assert(std::size(kPredictedColumnSql) == static_cast<size_t>(ResultColumn::kCount));

// The SQL of built-in field `field` for a result, or a predicted job: no
// worker measured that.
const char* BuiltinSql(const BuiltinField& field, bool predicted) {
  if (predicted && std::string_view(field.name) == "worker") return "''";
  return field.sql;
}

// Index into kBuiltinFields, -1 for a hyper-parameter.
int BuiltinIndex(const std::string& field) {
  for (int i = 0; i < kBuiltinCount; ++i) {
    if (field == kBuiltinFields[i].name) return i;
  }
  return -1;
}

bool IsBuiltin(const std::string& field) { return BuiltinIndex(field) >= 0; }

// Up to this many hyper-parameters are carried per result (a family has at
// most a dozen).
constexpr int kMaxHyperFields = 16;

// What one request's statement reads; SelectSql writes exactly that, so a
// request pays only for the columns and joins it uses. Hyper-parameters
// are not read per result: each result brings its configuration's id, and
// each configuration's hyper-parameters are read once (ConfigCache).
struct SelectShape {
  // Walk the results table and look each job up by id (the cheapest path
  // when the sweeps hold most of the results), or walk the sweeps' jobs
  // through jobs_sweep_state and look each result up. Rows come by result
  // id, or by sweep then job id.
  bool scan_results = false;
  std::vector<int> builtins;          // indexes into kBuiltinFields
  std::vector<ResultColumn> columns;  // measured columns
  bool where = false;                 // the where filters (?2)
  // Read the predicted jobs instead of the results (PredictedSql): r is then
  // the sweep's latest OK result of the job's precision, and the last
  // column is the prediction.
  bool predicted = false;

  // Result columns: job id, outcome, platform id, params, config id, then
  // these.
  int BuiltinColumn(size_t i) const { return 5 + static_cast<int>(i); }
  int MeasuredColumn(size_t i) const { return 5 + static_cast<int>(builtins.size() + i); }
};

constexpr int kSweepsParam = 1;  // the sweep ids (JSON array)
constexpr int kWhereParam = 2;   // JSON object

// The statement for `shape`. Its text depends only on the shape, never on
// request values (those are bound), and it is prepared uncached: shapes are
// many, requests few.
std::string SelectSql(const SelectShape& shape) {
  std::string sql;
  if (shape.predicted) {
    // The group a prediction stands for: its sweep's latest OK measurement
    // of the job's precision.
    absl::StrAppend(&sql,
                    "WITH template AS (SELECT j2.sweep_id AS sweep_id, j2.precision AS "
                    "precision, MAX(r2.id) AS result_id FROM jobs j2 JOIN results r2 ON "
                    "r2.job_id = j2.id WHERE j2.sweep_id IN (SELECT value FROM "
                    "json_each(?1)) AND r2.outcome = ",
                    static_cast<int>(v1::OK), " GROUP BY j2.sweep_id, j2.precision)\n");
    absl::StrAppend(&sql, "SELECT j.id, ", static_cast<int>(v1::OK),
                    ", COALESCE(r.platform_id, 0), COALESCE(j.params, 0), "
                    "COALESCE(j.config_id, 0)");
  } else {
    absl::StrAppend(&sql,
                    "SELECT r.job_id, r.outcome, COALESCE(r.platform_id, 0), "
                    "COALESCE(r.params, j.params, 0), COALESCE(j.config_id, 0)");
  }
  bool sweeps = shape.where;
  bool platforms = shape.where;
  for (int index : shape.builtins) {
    absl::StrAppend(&sql, ", ", BuiltinSql(kBuiltinFields[index], shape.predicted));
    sweeps = sweeps || kBuiltinFields[index].join == BuiltinField::kSweeps;
    platforms = platforms || kBuiltinFields[index].join == BuiltinField::kPlatforms;
  }
  for (ResultColumn column : shape.columns) {
    absl::StrAppend(&sql, ", ",
                    (shape.predicted ? kPredictedColumnSql : kColumnSql)[static_cast<int>(column)]);
  }
  if (shape.predicted) {
    absl::StrAppend(&sql,
                    ", pr.details\n  FROM jobs j JOIN predictions pr ON pr.job_id = j.id"
                    "\n  LEFT JOIN template t ON t.sweep_id = j.sweep_id AND t.precision = "
                    "j.precision\n  LEFT JOIN results r ON r.id = t.result_id");
  } else {
    absl::StrAppend(&sql, shape.scan_results
                              ? "\n  FROM results r CROSS JOIN jobs j ON j.id = r.job_id"
                              : "\n  FROM jobs j JOIN results r ON r.job_id = j.id");
  }
  if (sweeps) absl::StrAppend(&sql, "\n  JOIN sweeps s ON s.id = j.sweep_id");
  if (platforms) absl::StrAppend(&sql, "\n  LEFT JOIN platforms p ON p.id = r.platform_id");
  absl::StrAppend(&sql, "\n WHERE j.sweep_id IN (SELECT value FROM json_each(?1))");
  if (shape.where) {
    absl::StrAppend(&sql, R"sql(
   AND NOT EXISTS (
     SELECT 1 FROM json_each(?2) w
      WHERE w.value IS NOT (CASE w.key)sql");
    for (const BuiltinField& field : kBuiltinFields) {
      absl::StrAppend(&sql, "\n        WHEN '", field.name, "' THEN ",
                      BuiltinSql(field, shape.predicted));
    }
    absl::StrAppend(&sql, R"sql(
        ELSE (SELECT COALESCE(CAST(cp.int_value AS TEXT), cp.text_value) FROM config_params cp
               WHERE cp.config_id = j.config_id AND cp.key = w.key) END)))sql");
  }
  return sql;
}

// Field values and configurations interned: a million records share a few
// hundred distinct strings.
class Dictionary {
 public:
  explicit Dictionary(std::vector<std::string>* strings) : strings_(strings) {
    Intern("");  // id 0: absent
  }
  uint32_t Intern(std::string_view text) {
    // This Abseil's string_view is its own type, not std::string_view.
    const absl::string_view value(text.data(), text.size());
    auto it = ids_.find(value);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(strings_->size());
    strings_->emplace_back(text);
    ids_.emplace(strings_->back(), id);
    return id;
  }

 private:
  std::vector<std::string>* strings_;
  absl::flat_hash_map<std::string, uint32_t> ids_;
};

// Each configuration's carried hyper-parameters (dictionary ids) and its
// label, read from config_params the first time one of its results comes
// by: a million results share a few thousand configurations.
class ConfigCache {
 public:
  struct Entry {
    std::vector<uint32_t> field_ids;  // one per hyper field, "" (0) where absent
    uint32_t label = 0;               // see LoadPlan::config_without; 0 when not asked
  };

  // `label_without` null: no labels.
  ConfigCache(sqlite3* db, Dictionary* dictionary, std::vector<std::string> hyper_fields,
              const std::vector<std::string>* label_without)
      : params_(db,
                "SELECT key, COALESCE(CAST(int_value AS TEXT), text_value) FROM config_params "
                "WHERE config_id = ? ORDER BY key"),
        dictionary_(dictionary),
        hyper_fields_(std::move(hyper_fields)),
        label_without_(label_without) {}

  // The entry stays valid until the next call.
  absl::StatusOr<const Entry*> Get(int64_t config_id) {
    if (auto it = index_.find(config_id); it != index_.end()) return &entries_[it->second];
    Entry entry;
    entry.field_ids.assign(hyper_fields_.size(), 0);
    std::vector<std::string> pairs;
    params_.Reset();
    params_.Bind(1, config_id);
    absl::Status walked = params_.ForEachRow([&] {
      const std::string key = params_.ColumnText(0);
      const std::string_view value = params_.ColumnTextView(1);
      for (size_t i = 0; i < hyper_fields_.size(); ++i) {
        if (hyper_fields_[i] == key) entry.field_ids[i] = dictionary_->Intern(value);
      }
      if (label_without_ != nullptr && !value.empty() &&
          std::find(label_without_->begin(), label_without_->end(), key) == label_without_->end()) {
        pairs.push_back(absl::StrCat(key, "=", std::string(value)));
      }
    });
    if (!walked.ok()) return walked;
    if (label_without_ != nullptr) entry.label = dictionary_->Intern(absl::StrJoin(pairs, " "));
    index_.emplace(config_id, static_cast<uint32_t>(entries_.size()));
    entries_.push_back(std::move(entry));
    return &entries_.back();
  }

 private:
  Statement params_;
  Dictionary* dictionary_;
  std::vector<std::string> hyper_fields_;
  const std::vector<std::string>* label_without_;
  absl::flat_hash_map<int64_t, uint32_t> index_;
  std::vector<Entry> entries_;
};

template <typename T>
void AppendUnique(std::vector<T>* values, const T& value) {
  if (std::find(values->begin(), values->end(), value) == values->end()) values->push_back(value);
}

std::string JsonArray(const std::vector<int64_t>& values) { return nlohmann::json(values).dump(); }

absl::Status ReadSweepsAndKeys(sqlite3* db, const std::vector<int64_t>& sweep_ids,
                               const std::string& sweeps_json, ResultRecords* selected) {
  std::set<int64_t> found;
  Statement sweeps(db, "SELECT id FROM sweeps WHERE id IN (SELECT value FROM json_each(?))");
  sweeps.Bind(1, sweeps_json);
  absl::Status walked = sweeps.ForEachRow([&] { found.insert(sweeps.ColumnInt(0)); });
  if (!walked.ok()) return walked;
  for (int64_t id : sweep_ids) {
    if (found.count(id) == 0) return absl::NotFoundError(absl::StrCat("sweep ", id, " not found"));
  }
  // Every job of a sweep has the same keys (one spec, one family's
  // defaults), so each sweep's first job names them: reading every job's
  // keys took a second over a million results.
  Statement keys(db,
                 "SELECT DISTINCT cp.key FROM json_each(?) sw JOIN config_params cp "
                 "ON cp.config_id = (SELECT config_id FROM jobs WHERE sweep_id = sw.value "
                 "ORDER BY id LIMIT 1) ORDER BY cp.key");
  keys.Bind(1, sweeps_json);
  return keys.ForEachRow([&] {
    // Threads are read as the runner used them (results), not as swept.
    std::string key = keys.ColumnText(0);
    if (!IsBuiltin(key)) selected->all_keys.push_back(std::move(key));
  });
}

}  // namespace

std::string FieldNames(const std::vector<std::string>& hyper_keys) {
  return absl::StrCat("hyper-parameters of the selected sweeps: ",
                      hyper_keys.empty() ? "(none)" : absl::StrJoin(hyper_keys, ", "),
                      "; other fields: ", absl::StrJoin(BuiltinResultFields(), ", "));
}

absl::Status CheckField(const std::string& role, const std::string& field,
                        const std::vector<std::string>& hyper_keys) {
  if (field.empty()) return absl::InvalidArgumentError(absl::StrCat(role, " is required"));
  if (IsBuiltin(field) ||
      std::find(hyper_keys.begin(), hyper_keys.end(), field) != hyper_keys.end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(role, " '", field, "' is not a field of the ",
                                                 "selected results; ", FieldNames(hyper_keys)));
}

namespace {

// The sweep ids `selection` names, sorted and without repeats.
// InvalidArgument for none or a non-positive one.
absl::StatusOr<std::vector<int64_t>> SelectedSweepIds(const v1::ResultSelection& selection) {
  if (selection.sweep_ids().empty()) {
    return absl::InvalidArgumentError("selection.sweep_ids: give at least one sweep id");
  }
  std::vector<int64_t> sweep_ids(selection.sweep_ids().begin(), selection.sweep_ids().end());
  for (int64_t id : sweep_ids) {
    if (id <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("selection.sweep_ids: ", id, " is not a sweep id (a positive integer)"));
    }
  }
  std::sort(sweep_ids.begin(), sweep_ids.end());
  sweep_ids.erase(std::unique(sweep_ids.begin(), sweep_ids.end()), sweep_ids.end());
  return sweep_ids;
}

// The where filters of `selection` as the JSON object bound to kWhereParam;
// InvalidArgument for a field the selected sweeps do not have.
absl::StatusOr<nlohmann::json> WhereFilters(const v1::ResultSelection& selection,
                                            const std::vector<std::string>& all_keys) {
  nlohmann::json where = nlohmann::json::object();
  for (const auto& [field, value] : selection.where()) {
    if (absl::Status s = CheckField("selection.where", field, all_keys); !s.ok()) return s;
    where[field] = value;
  }
  return where;
}

// Fills selected->fields and ->columns with what `plan` carries per record.
absl::Status ChooseCarried(const ResultRecordPlan& plan, ResultRecords* selected) {
  for (const std::string& field : plan.fields) {
    if (absl::Status s = CheckField("field", field, selected->all_keys); !s.ok()) return s;
    AppendUnique(&selected->fields, field);
  }
  if (plan.all_hyper) {
    for (const std::string& key : selected->all_keys) AppendUnique(&selected->fields, key);
  }
  if (plan.config_without) {
    for (const char* field : {"family", "precision", "optimizer"}) {
      AppendUnique(&selected->fields, std::string(field));
    }
  }
  for (ResultColumn column : plan.columns) AppendUnique(&selected->columns, column);
  if (selected->columns.size() > kMaxCarriedColumns) {
    return absl::InternalError("result record plan carries too many columns");
  }
  return absl::OkStatus();
}

// Where each carried field comes from: a built-in column of the statement
// (>= 0) or the configuration's hyper-parameters (-1 - index into
// hyper_fields).
struct RecordSources {
  SelectShape shape;  // all but scan_results (ReserveForFinishedJobs)
  std::vector<int> sources;
  std::vector<std::string> hyper_fields;
};

// The sources of selected.fields, and the shape that reads them, its
// columns and (when `where`) the where filters. InvalidArgument past
// kMaxHyperFields.
absl::StatusOr<RecordSources> RecordSourcesOf(const ResultRecords& selected, bool where) {
  RecordSources out;
  for (const std::string& field : selected.fields) {
    if (int index = BuiltinIndex(field); index >= 0) {
      out.sources.push_back(out.shape.BuiltinColumn(out.shape.builtins.size()));
      out.shape.builtins.push_back(index);
      continue;
    }
    if (out.hyper_fields.size() == kMaxHyperFields) {
      return absl::InvalidArgumentError(absl::StrCat("an analysis reads at most ", kMaxHyperFields,
                                                     " hyper-parameters; name fewer features"));
    }
    out.sources.push_back(-1 - static_cast<int>(out.hyper_fields.size()));
    out.hyper_fields.push_back(field);
  }
  out.shape.columns = selected.columns;
  out.shape.where = where;
  return out;
}

// Finished jobs are the ones with results: reserves for all of them, and
// scans every result when the sweeps hold most of them. A failed count
// only costs the reservation.
void ReserveForFinishedJobs(sqlite3* db, const std::string& sweeps_json, ResultRecords* selected,
                            SelectShape* shape) {
  Statement count(db,
                  "SELECT (SELECT COUNT(*) FROM jobs WHERE sweep_id IN (SELECT value FROM "
                  "json_each(?)) AND state = ?), (SELECT COALESCE(MAX(id), 0) FROM results)");
  count.Bind(1, sweeps_json).Bind(2, static_cast<int>(v1::JOB_DONE));
  if (absl::StatusOr<bool> row = count.Step(); row.ok() && *row) {
    selected->records.reserve(static_cast<size_t>(count.ColumnInt(0)));
    selected->values.reserve(selected->records.capacity() * selected->fields.size());
    shape->scan_results = 4 * count.ColumnInt(0) > count.ColumnInt(1);
  }
}

// A predicted record's carried columns from its prediction (the SQL left
// NULL what the prediction holds, and gave MFU as a ratio to FLOP/s).
void FillPredictedColumns(const v1::PredictedStep& prediction,
                          const std::vector<ResultColumn>& columns, ResultRecord* record) {
  for (size_t i = 0; i < columns.size(); ++i) {
    double& value = record->columns[i];
    switch (columns[i]) {
      case ResultColumn::kExamplesPerSec:
        value = prediction.examples_per_sec();
        break;
      case ResultColumn::kModelFlopsPerSec:
        value = prediction.model_flops_per_sec();
        break;
      case ResultColumn::kStepMedianSeconds:
        value = prediction.step_seconds();
        break;
      case ResultColumn::kMfu:
      case ResultColumn::kSiliconMfu:
        value *= prediction.model_flops_per_sec();  // NaN stays NaN
        break;
      default:
        break;
    }
  }
  record->predicted = true;
  if (prediction.step_seconds() > 0) {
    record->step_low_ratio =
        static_cast<float>(prediction.step_seconds_low() / prediction.step_seconds());
    record->step_high_ratio =
        static_cast<float>(prediction.step_seconds_high() / prediction.step_seconds());
  }
}

// Runs the statement for `shape` and appends a record per row; the
// dictionary and configurations are shared by the results' and the
// predictions' reads, so equal values keep one id.
absl::Status ReadRecords(sqlite3* db, const std::string& sweeps_json, const nlohmann::json& where,
                         const RecordSources& sources, const SelectShape& shape,
                         Dictionary& dictionary, ConfigCache& configs, ResultRecords* selected) {
  const std::string sql = SelectSql(shape);
  Statement query(db, sql.c_str(), Statement::kUncached);
  query.Bind(kSweepsParam, sweeps_json);
  if (shape.where) query.Bind(kWhereParam, where.dump());
  return query.ForEachRow([&]() -> absl::Status {
    ResultRecord record;
    record.job_id = query.ColumnInt(0);
    record.outcome = static_cast<v1::Outcome>(query.ColumnInt(1));
    record.platform_id = query.ColumnInt(2);
    record.params = query.ColumnInt(3);
    absl::StatusOr<const ConfigCache::Entry*> config = configs.Get(query.ColumnInt(4));
    if (!config.ok()) return config.status();
    record.config = (*config)->label;
    record.first_value = static_cast<uint32_t>(selected->values.size());
    for (int source : sources.sources) {
      selected->values.push_back(source >= 0 ? dictionary.Intern(query.ColumnTextView(source))
                                             : (*config)->field_ids[-1 - source]);
    }
    for (size_t i = 0; i < selected->columns.size(); ++i) {
      const int col = shape.MeasuredColumn(i);
      record.columns[i] = query.ColumnIsNull(col) ? std::numeric_limits<double>::quiet_NaN()
                                                  : query.ColumnDouble(col);
    }
    if (shape.predicted) {
      v1::PredictedStep prediction;
      if (!prediction.ParseFromString(
              query.ColumnBlob(shape.MeasuredColumn(shape.columns.size())))) {
        return absl::DataLossError(
            absl::StrCat("predictions: the prediction of job ", record.job_id, " is unreadable"));
      }
      FillPredictedColumns(prediction, shape.columns, &record);
    }
    selected->records.push_back(record);
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<ResultRecords> LoadResultRecords(const Database& database,
                                                const v1::ResultSelection& selection,
                                                const ResultRecordPlan& plan) {
  absl::StatusOr<std::vector<int64_t>> sweep_ids = SelectedSweepIds(selection);
  if (!sweep_ids.ok()) return sweep_ids.status();
  const std::string sweeps_json = JsonArray(*sweep_ids);

  ResultRecords selected;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    if (absl::Status s = ReadSweepsAndKeys(db, *sweep_ids, sweeps_json, &selected); !s.ok()) {
      return s;
    }
    absl::StatusOr<nlohmann::json> where = WhereFilters(selection, selected.all_keys);
    if (!where.ok()) return where.status();
    if (absl::Status s = ChooseCarried(plan, &selected); !s.ok()) return s;
    absl::StatusOr<RecordSources> sources = RecordSourcesOf(selected, !selection.where().empty());
    if (!sources.ok()) return sources.status();
    ReserveForFinishedJobs(db, sweeps_json, &selected, &sources->shape);
    Dictionary dictionary(&selected.dictionary);
    ConfigCache configs(db, &dictionary, sources->hyper_fields,
                        plan.config_without ? &*plan.config_without : nullptr);
    if (absl::Status s = ReadRecords(db, sweeps_json, *where, *sources, sources->shape, dictionary,
                                     configs, &selected);
        !s.ok()) {
      return s;
    }
    if (!selection.include_predicted()) return absl::OkStatus();
    SelectShape predicted = sources->shape;
    predicted.predicted = true;
    return ReadRecords(db, sweeps_json, *where, *sources, predicted, dictionary, configs,
                       &selected);
  });
  if (!status.ok()) return status;
  return selected;
}

const std::vector<std::string>& BuiltinResultFields() {
  static const std::vector<std::string>* const kFields = new std::vector<std::string>([] {
    std::vector<std::string> names;
    for (const BuiltinField& field : kBuiltinFields) names.emplace_back(field.name);
    return names;
  }());
  return *kFields;
}

}  // namespace paradnn::db
