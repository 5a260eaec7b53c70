#include "server/analysis/analyzer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::analysis {
namespace {

// ---- What one selected result carries -------------------------------------

struct Record {
  int64_t job_id = 0;
  int64_t platform_id = 0;
  int64_t params = 0;
  v1::Outcome outcome = v1::OUTCOME_UNSPECIFIED;
  // Built-in fields in kBuiltinFieldNames order.
  std::array<std::string, 14> builtin;
  std::vector<std::string> hyper;   // values of Selected::hyper_keys, "" where absent
  std::string config;               // "key=value ..." when asked for
  std::map<std::string, double> raw;  // measured columns that are not NULL
};

struct Selected {
  std::vector<std::string> hyper_keys;  // fields fetched per record, in order
  std::vector<std::string> all_keys;    // every hyper-parameter of the selected sweeps
  std::vector<Record> records;
};

const char* const kBuiltinFieldNames[] = {
    "family",     "precision",   "optimizer", "repeat",           "sweep",
    "intra_op_threads", "inter_op_threads", "worker", "device_kind", "device_name",
    "hostname",   "libtorch_version", "blas_backend", "fingerprint"};

// Index into kBuiltinFieldNames, -1 for a hyper-parameter.
int BuiltinIndex(const std::string& field) {
  for (int i = 0; i < static_cast<int>(std::size(kBuiltinFieldNames)); ++i) {
    if (field == kBuiltinFieldNames[i]) return i;
  }
  return -1;
}

bool IsBuiltin(const std::string& field) { return BuiltinIndex(field) >= 0; }



// The value of a built-in field for `w.key` (the where filter) in SQL: the
// same CASE serves every request, so the statement text never varies.
constexpr const char kSelectSql[] = R"sql(
SELECT r.job_id, r.outcome, COALESCE(r.platform_id, 0), COALESCE(r.params, j.params, 0),
       s.family, j.precision, j.optimizer, j.repeat, j.sweep_id,
       r.intra_op_threads, r.inter_op_threads, r.worker_id,
       p.device_kind, p.device_name, p.hostname, p.libtorch_version, p.blas_backend,
       p.fingerprint,
       r.examples_per_sec, r.model_flops_per_sec, r.executed_flops_per_sec, r.mfu, r.hfu,
       r.step_median_s, r.step_cv, r.model_flops, r.executed_flops, r.bytes_per_step,
       r.peak_rss_bytes,
       (SELECT group_concat(COALESCE(CAST(jp.int_value AS TEXT), jp.text_value, ''), char(31))
          FROM json_each(?2) f
          LEFT JOIN job_params jp ON jp.job_id = j.id AND jp.key = f.value),
       CASE WHEN ?3 THEN
         (SELECT group_concat(kv, ' ') FROM
            (SELECT jp.key || '=' || COALESCE(CAST(jp.int_value AS TEXT), jp.text_value) AS kv
               FROM job_params jp
              WHERE jp.job_id = j.id AND jp.key NOT IN (SELECT value FROM json_each(?4))
              ORDER BY jp.key))
       END
  FROM jobs j
  JOIN results r ON r.job_id = j.id
  JOIN sweeps s ON s.id = j.sweep_id
  LEFT JOIN platforms p ON p.id = r.platform_id
 WHERE j.sweep_id IN (SELECT value FROM json_each(?1))
   AND NOT EXISTS (
     SELECT 1 FROM json_each(?5) w
      WHERE w.value IS NOT (CASE w.key
        WHEN 'family' THEN s.family
        WHEN 'precision' THEN j.precision
        WHEN 'optimizer' THEN j.optimizer
        WHEN 'repeat' THEN CAST(j.repeat AS TEXT)
        WHEN 'sweep' THEN CAST(j.sweep_id AS TEXT)
        WHEN 'intra_op_threads' THEN CAST(r.intra_op_threads AS TEXT)
        WHEN 'inter_op_threads' THEN CAST(r.inter_op_threads AS TEXT)
        WHEN 'worker' THEN r.worker_id
        WHEN 'device_kind' THEN p.device_kind
        WHEN 'device_name' THEN p.device_name
        WHEN 'hostname' THEN p.hostname
        WHEN 'libtorch_version' THEN p.libtorch_version
        WHEN 'blas_backend' THEN p.blas_backend
        WHEN 'fingerprint' THEN p.fingerprint
        ELSE (SELECT COALESCE(CAST(jp.int_value AS TEXT), jp.text_value)
                FROM job_params jp WHERE jp.job_id = j.id AND jp.key = w.key)
      END))
 ORDER BY j.id
)sql";

// Column order of kSelectSql after the fixed leading columns.
const char* const kRawColumns[] = {"examples_per_sec", "model_flops_per_sec",
                                   "executed_flops_per_sec", "mfu", "hfu", "step_median_s",
                                   "step_cv", "model_flops", "executed_flops", "bytes_per_step",
                                   "peak_rss_bytes"};
constexpr int kFirstRawColumn = 18;

std::string ColumnTextOrEmpty(const db::Statement& stmt, int col) {
  return stmt.ColumnIsNull(col) ? "" : stmt.ColumnText(col);
}

// ---- Metrics ----------------------------------------------------------------

std::optional<double> RawValue(const Record& record, const char* column) {
  auto it = record.raw.find(column);
  if (it == record.raw.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

std::optional<double> MetricValue(const Record& record, const std::string& metric) {
  if (record.outcome != v1::OK) return std::nullopt;
  if (metric == "examples_per_sec") return RawValue(record, "examples_per_sec");
  if (metric == "gflops" || metric == "executed_gflops") {
    std::optional<double> flops = RawValue(
        record, metric == "gflops" ? "model_flops_per_sec" : "executed_flops_per_sec");
    if (!flops) return std::nullopt;
    return *flops / 1e9;
  }
  if (metric == "mfu" || metric == "hfu" || metric == "step_cv" || metric == "model_flops" ||
      metric == "peak_rss") {
    return RawValue(record, metric == "peak_rss" ? "peak_rss_bytes" : metric.c_str());
  }
  if (metric == "step_time") return RawValue(record, "step_median_s");
  if (metric == "params") {
    if (record.params <= 0) return std::nullopt;
    return static_cast<double>(record.params);
  }
  if (metric == "intensity") {
    std::optional<double> flops = RawValue(record, "executed_flops");
    std::optional<double> bytes = RawValue(record, "bytes_per_step");
    if (!flops || !bytes || *bytes <= 0) return std::nullopt;
    return *flops / *bytes;
  }
  return std::nullopt;
}

std::string MetricNames() {
  std::vector<std::string> names;
  for (const MetricInfo& metric : Metrics()) names.emplace_back(metric.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const MetricInfo*> FindMetric(const std::string& name,
                                            const char* default_name = nullptr) {
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

// ---- Selection --------------------------------------------------------------

std::string FieldNames(const std::vector<std::string>& hyper_keys) {
  return absl::StrCat("hyper-parameters of the selected sweeps: ",
                      hyper_keys.empty() ? "(none)" : absl::StrJoin(hyper_keys, ", "),
                      "; other fields: ", absl::StrJoin(BuiltinFields(), ", "));
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

std::string JsonArray(const std::vector<int64_t>& values) {
  return nlohmann::json(values).dump();
}
std::string JsonArray(const std::vector<std::string>& values) {
  return nlohmann::json(values).dump();
}

// What a request reads: the fields to fetch per record (built-in ones come
// anyway) and, when `config_without` is set, each record's configuration
// without those hyper-parameters.
struct LoadPlan {
  std::vector<std::string> fields;
  bool all_hyper = false;   // fetch every hyper-parameter of the sweeps
  std::optional<std::vector<std::string>> config_without;
};

absl::StatusOr<Selected> Load(const db::Database* database, const v1::ResultSelection& selection,
                              const LoadPlan& plan) {
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
  const std::string sweeps_json = JsonArray(sweep_ids);

  Selected selected;
  absl::Status status = database->Read([&](sqlite3* db) -> absl::Status {
    std::set<int64_t> found;
    db::Statement sweeps(db, "SELECT id FROM sweeps WHERE id IN (SELECT value FROM json_each(?))");
    sweeps.Bind(1, sweeps_json);
    for (;;) {
      absl::StatusOr<bool> row = sweeps.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      found.insert(sweeps.ColumnInt(0));
    }
    for (int64_t id : sweep_ids) {
      if (found.count(id) == 0) return absl::NotFoundError(absl::StrCat("sweep ", id, " not found"));
    }

    db::Statement keys(db,
                       "SELECT DISTINCT jp.key FROM jobs j JOIN job_params jp ON jp.job_id = j.id "
                       "WHERE j.sweep_id IN (SELECT value FROM json_each(?)) ORDER BY jp.key");
    keys.Bind(1, sweeps_json);
    for (;;) {
      absl::StatusOr<bool> row = keys.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      selected.all_keys.push_back(keys.ColumnText(0));
    }
    // Threads are read as the runner used them (results), not as swept.
    selected.all_keys.erase(std::remove_if(selected.all_keys.begin(), selected.all_keys.end(),
                                           [](const std::string& key) { return IsBuiltin(key); }),
                            selected.all_keys.end());

    nlohmann::json where = nlohmann::json::object();
    for (const auto& [field, value] : selection.where()) {
      if (absl::Status s = CheckField("selection.where", field, selected.all_keys); !s.ok()) {
        return s;
      }
      where[field] = value;
    }
    for (const std::string& field : plan.fields) {
      if (absl::Status s = CheckField("field", field, selected.all_keys); !s.ok()) return s;
      if (!IsBuiltin(field) && std::find(selected.hyper_keys.begin(), selected.hyper_keys.end(),
                                         field) == selected.hyper_keys.end()) {
        selected.hyper_keys.push_back(field);
      }
    }
    if (plan.all_hyper) selected.hyper_keys = selected.all_keys;

    db::Statement query(db, kSelectSql);
    query.Bind(1, sweeps_json)
        .Bind(2, JsonArray(selected.hyper_keys))
        .Bind(3, static_cast<int64_t>(plan.config_without.has_value()))
        .Bind(4, JsonArray(plan.config_without.value_or(std::vector<std::string>{})))
        .Bind(5, where.dump());
    for (;;) {
      absl::StatusOr<bool> row = query.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      Record record;
      record.job_id = query.ColumnInt(0);
      record.outcome = static_cast<v1::Outcome>(query.ColumnInt(1));
      record.platform_id = query.ColumnInt(2);
      record.params = query.ColumnInt(3);
      for (int i = 0; i < 14; ++i) {
        record.builtin[i] = ColumnTextOrEmpty(query, 4 + i);
      }
      for (int i = 0; i < static_cast<int>(std::size(kRawColumns)); ++i) {
        if (!query.ColumnIsNull(kFirstRawColumn + i)) {
          record.raw[kRawColumns[i]] = query.ColumnDouble(kFirstRawColumn + i);
        }
      }
      const int hyper_col = kFirstRawColumn + static_cast<int>(std::size(kRawColumns));
      if (!selected.hyper_keys.empty()) {
        record.hyper = absl::StrSplit(ColumnTextOrEmpty(query, hyper_col), '\x1f');
        record.hyper.resize(selected.hyper_keys.size());
      }
      record.config = ColumnTextOrEmpty(query, hyper_col + 1);
      selected.records.push_back(std::move(record));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return selected;
}

const std::string& Builtin(const Record& record, const char* field) {
  return record.builtin[BuiltinIndex(field)];
}

// The built-in columns were read in kBuiltinFieldNames order (the SQL lists
// them in that order too).
std::string FieldValue(const Selected& selected, const Record& record, const std::string& field) {
  if (int index = BuiltinIndex(field); index >= 0) return record.builtin[index];
  for (size_t i = 0; i < selected.hyper_keys.size(); ++i) {
    if (selected.hyper_keys[i] == field) return record.hyper[i];
  }
  return "";
}

// "fc layer=4 node=1024 precision=float32 optimizer=rmsprop", without
// `field` where it is precision or optimizer (hyper-parameters were left
// out by the query already).
std::string ConfigLabel(const Record& record, const std::string& field) {
  std::string label = Builtin(record, "family");
  if (!record.config.empty()) absl::StrAppend(&label, " ", record.config);
  if (field != "precision") absl::StrAppend(&label, " precision=", Builtin(record, "precision"));
  if (field != "optimizer") absl::StrAppend(&label, " optimizer=", Builtin(record, "optimizer"));
  return label;
}

// The OK records with a value of `metric`; InvalidArgument when none has.
absl::StatusOr<std::vector<std::pair<const Record*, double>>> MeasuredRecords(
    const Selected& selected, const MetricInfo& metric) {
  std::vector<std::pair<const Record*, double>> measured;
  int64_t ok = 0;
  for (const Record& record : selected.records) {
    if (record.outcome == v1::OK) ++ok;
    if (std::optional<double> value = MetricValue(record, metric.name)) {
      measured.emplace_back(&record, *value);
    }
  }
  if (measured.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no selected result has a value of metric '", metric.name, "' (", selected.records.size(),
        " results selected, ", ok, " OK", ok > 0 ? "; the workers may lack a calibrated roof" : "",
        ")"));
  }
  return measured;
}

// ---- The analyses -----------------------------------------------------------

absl::StatusOr<v1::HeatmapResponse> Heatmap(const db::Database* database,
                                           const v1::HeatmapRequest& request, int64_t* results) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  if (request.x().empty() || request.y().empty()) {
    return absl::InvalidArgumentError("heat map needs both axes: x and y (fields)");
  }
  if (request.x() == request.y() || request.x() == request.panel() ||
      request.y() == request.panel()) {
    return absl::InvalidArgumentError("heat map x, y and panel must be different fields");
  }
  LoadPlan plan;
  plan.fields = {request.x(), request.y()};
  if (!request.panel().empty()) plan.fields.push_back(request.panel());
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  *results = static_cast<int64_t>(selected->records.size());

  std::vector<HeatmapRow> rows;
  for (const Record& record : selected->records) {
    HeatmapRow row;
    row.x = FieldValue(*selected, record, request.x());
    row.y = FieldValue(*selected, record, request.y());
    if (!request.panel().empty()) row.panel = FieldValue(*selected, record, request.panel());
    row.outcome = record.outcome;
    if (record.outcome == v1::OK) {
      std::optional<double> value = MetricValue(record, (*metric)->name);
      if (!value) continue;  // e.g. no roof for MFU: no value, not a failure
      row.metric = *value;
    }
    rows.push_back(std::move(row));
  }
  absl::StatusOr<v1::HeatmapResponse> response = PivotHeatmap(rows, request.x(), request.y());
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  response->set_unit((*metric)->unit);
  response->set_x(request.x());
  response->set_y(request.y());
  response->set_panel(request.panel());
  return response;
}

// The numeric fields that vary over `measured` among `candidates`.
std::vector<std::string> VaryingNumericFields(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& candidates) {
  std::vector<std::string> varying;
  for (const std::string& field : candidates) {
    std::vector<std::string> values;
    for (const auto& [record, value] : measured) {
      values.push_back(FieldValue(selected, *record, field));
    }
    std::vector<std::string> distinct = SortedDistinct(values);
    if (distinct.size() > 1 && AllNumeric(distinct)) varying.push_back(field);
  }
  return varying;
}

absl::StatusOr<SensitivityInput> SensitivityPoints(
    const Selected& selected, const std::vector<std::pair<const Record*, double>>& measured,
    const std::vector<std::string>& features) {
  SensitivityInput input;
  input.feature_names = features;
  for (const auto& [record, value] : measured) {
    std::vector<double> row;
    for (const std::string& feature : features) {
      const std::string text = FieldValue(selected, *record, feature);
      double number = 0;
      if (!absl::SimpleAtod(text, &number)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "feature '", feature, "' is not numeric (job ", record->job_id, " has '", text,
            "'); sensitivity needs numeric features: fix categorical ones with "
            "selection.where (e.g. --where ",
            feature, "=", text, ")"));
      }
      row.push_back(number);
    }
    input.features.push_back(std::move(row));
    input.target.push_back(value);
  }
  return input;
}

absl::StatusOr<v1::SensitivityResponse> Sensitivity(const db::Database* database,
                                                   const v1::SensitivityRequest& request,
                                                   int64_t* results) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  LoadPlan plan;
  plan.fields.assign(request.features().begin(), request.features().end());
  plan.all_hyper = request.features().empty();
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  *results = static_cast<int64_t>(selected->records.size());
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();

  std::vector<std::string> features(request.features().begin(), request.features().end());
  if (features.empty()) {
    features = VaryingNumericFields(*selected, *measured, selected->hyper_keys);
    if (features.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no numeric hyper-parameter varies over the ", measured->size(),
          " measured results; name features explicitly (", FieldNames(selected->all_keys), ")"));
    }
  }
  absl::StatusOr<SensitivityInput> input = SensitivityPoints(*selected, *measured, features);
  if (!input.ok()) return input.status();
  input->log2_features = request.log2_features();
  input->log2_target = request.log2_target();
  input->interactions = request.interactions();
  absl::StatusOr<v1::SensitivityResponse> response = FitSensitivity(*input);
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  return response;
}

int ElementBytes(const std::string& precision) { return precision == "float32" ? 4 : 2; }

absl::StatusOr<v1::RooflineResponse> Roofline(const db::Database* database,
                                             const v1::RooflineRequest& request,
                                             int64_t* results) {
  LoadPlan plan;
  plan.config_without = std::vector<std::string>{};
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  *results = static_cast<int64_t>(selected->records.size());

  v1::RooflineResponse response;
  std::set<int64_t> platform_ids;
  std::vector<const Record*> measured;
  for (const Record& record : selected->records) {
    std::optional<double> intensity = MetricValue(record, "intensity");
    std::optional<double> flops = RawValue(record, "executed_flops_per_sec");
    if (record.outcome != v1::OK || !intensity || !flops) continue;
    v1::RooflinePoint* point = response.add_points();
    point->set_job_id(record.job_id);
    point->set_label(ConfigLabel(record, ""));
    point->set_precision(Builtin(record, "precision"));
    point->set_platform_id(record.platform_id);
    point->set_intensity(*intensity);
    point->set_flops_per_sec(*flops);
    if (record.platform_id > 0) platform_ids.insert(record.platform_id);
    measured.push_back(&record);
  }
  if (measured.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no selected result has executed FLOPs and bytes per step (", selected->records.size(),
        " results selected)"));
  }

  absl::Status status = database->Read([&](sqlite3* db) -> absl::Status {
    for (int64_t platform_id : platform_ids) {
      db::Statement find(db, "SELECT details FROM platforms WHERE id = ?");
      find.Bind(1, platform_id);
      absl::StatusOr<bool> row = find.Step();
      if (!row.ok()) return row.status();
      if (!*row) continue;
      v1::Platform platform;
      if (!platform.ParseFromString(find.ColumnBlob(0))) {
        return absl::DataLossError(absl::StrCat("platforms row ", platform_id, " does not parse"));
      }
      v1::PlatformRoofs* roofs = response.add_roofs();
      roofs->set_platform_id(platform_id);
      roofs->set_device_name(platform.device_name());
      roofs->set_fingerprint(platform.fingerprint());
      for (const v1::MatmulRoof& roof : platform.matmul_roofs()) {
        v1::MatmulRoofValue* value = roofs->add_compute();
        value->set_dtype(roof.dtype());
        value->set_flops_per_sec(roof.flops_per_sec());
        value->set_datasheet_flops_per_sec(roof.datasheet_flops_per_sec());
      }
      for (v1::BandwidthRoof& level : BandwidthRoofs(platform)) {
        *roofs->add_bandwidth() = std::move(level);
      }
    }
    if (!request.include_ops()) return absl::OkStatus();
    for (const Record* record : measured) {
      db::Statement find(db, "SELECT measurement FROM results WHERE job_id = ?");
      find.Bind(1, record->job_id);
      absl::StatusOr<bool> row = find.Step();
      if (!row.ok()) return row.status();
      if (!*row) continue;
      v1::Measurement measurement;
      if (!measurement.ParseFromString(find.ColumnBlob(0))) {
        return absl::DataLossError(
            absl::StrCat("the measurement of job ", record->job_id, " does not parse"));
      }
      for (const v1::OpProfile& op : measurement.op_profile()) {
        const double bytes =
            InputBytesFromShapes(op.input_shapes(), ElementBytes(Builtin(*record, "precision")));
        if (op.flops() <= 0 || op.self_seconds() <= 0 || bytes <= 0) continue;
        v1::RooflinePoint* point = response.add_points();
        point->set_job_id(record->job_id);
        point->set_label(absl::StrCat(op.name(), " ", op.input_shapes()));
        point->set_op(true);
        point->set_precision(Builtin(*record, "precision"));
        point->set_platform_id(record->platform_id);
        point->set_intensity(op.flops() / bytes);
        point->set_flops_per_sec(op.flops() / op.self_seconds());
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::BoxplotResponse> Boxplot(const db::Database* database,
                                           const v1::BoxplotRequest& request, int64_t* results) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric());
  if (!metric.ok()) return metric.status();
  std::vector<std::string> group_by(request.group_by().begin(), request.group_by().end());
  if (group_by.empty()) group_by = {"family", "device_name"};
  LoadPlan plan;
  plan.fields = group_by;
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  *results = static_cast<int64_t>(selected->records.size());
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();

  std::map<std::string, std::vector<double>> groups;
  for (const auto& [record, value] : *measured) {
    std::vector<std::string> names;
    for (const std::string& field : group_by) {
      names.push_back(FieldValue(*selected, *record, field));
    }
    groups[absl::StrJoin(names, " / ")].push_back(value);
  }
  v1::BoxplotResponse response;
  response.set_metric((*metric)->name);
  response.set_unit((*metric)->unit);
  for (const std::string& field : group_by) response.add_group_by(field);
  for (auto& [name, values] : groups) {
    *response.add_groups() = SummarizeBox(name, std::move(values));
  }
  return response;
}

absl::StatusOr<v1::SpeedupResponse> Speedup(const db::Database* database,
                                           const v1::SpeedupRequest& request, int64_t* results) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "examples_per_sec");
  if (!metric.ok()) return metric.status();
  if (request.field().empty()) {
    return absl::InvalidArgumentError(
        "speedup needs the field that differs between the two sides (e.g. device_kind, worker, "
        "precision, libtorch_version, blas_backend)");
  }
  LoadPlan plan;
  plan.fields = {request.field()};
  if (!request.color_by().empty()) plan.fields.push_back(request.color_by());
  plan.all_hyper = true;
  plan.config_without = std::vector<std::string>{request.field()};
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  if (!request.color_by().empty()) {
    if (absl::Status s = CheckField("color_by", request.color_by(), selected->all_keys); !s.ok()) {
      return s;
    }
  }
  *results = static_cast<int64_t>(selected->records.size());
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();

  std::string baseline = request.baseline();
  std::string candidate = request.candidate();
  if (baseline.empty() || candidate.empty()) {
    std::vector<std::string> sides;
    for (const auto& [record, value] : *measured) {
      sides.push_back(FieldValue(*selected, *record, request.field()));
    }
    std::vector<std::string> distinct = SortedDistinct(sides);
    if (distinct.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "speedup needs baseline and candidate values of '", request.field(),
          "' (the selected results have ", distinct.size(), ": ", absl::StrJoin(distinct, ", "),
          ")"));
    }
    // float32 is the natural baseline of a precision comparison.
    const bool swap = request.field() == "precision" && distinct[1] == "float32";
    baseline = swap ? distinct[1] : distinct[0];
    candidate = swap ? distinct[0] : distinct[1];
  }

  std::vector<SpeedupRow> rows;
  std::map<std::string, const Record*> config_record;
  for (const auto& [record, value] : *measured) {
    SpeedupRow row;
    row.side = FieldValue(*selected, *record, request.field());
    row.config = ConfigLabel(*record, request.field());
    row.params = record->params;
    if (!request.color_by().empty()) {
      row.color_value = FieldValue(*selected, *record, request.color_by());
    }
    row.metric = value;
    config_record.emplace(row.config, record);
    rows.push_back(std::move(row));
  }
  absl::StatusOr<v1::SpeedupResponse> response =
      JoinSpeedup(rows, request.field(), baseline, candidate, (*metric)->lower_is_better);
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  response->set_color_by(request.color_by());

  // How the speedup depends on the hyper-parameters (log2 both sides, as
  // the paper's Fig. 8-10 (a)). Too few points or no varying feature leaves
  // it empty rather than failing the join.
  std::vector<std::pair<const Record*, double>> points;
  for (const v1::SpeedupPoint& point : response->points()) {
    points.emplace_back(config_record.at(point.config()), point.speedup());
  }
  std::vector<std::string> features = VaryingNumericFields(*selected, points, selected->all_keys);
  features.erase(std::remove(features.begin(), features.end(), request.field()), features.end());
  if (!features.empty()) {
    absl::StatusOr<SensitivityInput> input = SensitivityPoints(*selected, points, features);
    if (input.ok()) {
      input->log2_features = true;
      input->log2_target = true;
      absl::StatusOr<v1::SensitivityResponse> sensitivity = FitSensitivity(*input);
      if (sensitivity.ok()) {
        sensitivity->set_metric("speedup");
        *response->mutable_sensitivity() = *std::move(sensitivity);
      }
    }
  }
  return response;
}

absl::StatusOr<v1::ScalingResponse> Scaling(const db::Database* database,
                                           const v1::ScalingRequest& request, int64_t* results) {
  absl::StatusOr<const MetricInfo*> metric = FindMetric(request.metric(), "examples_per_sec");
  if (!metric.ok()) return metric.status();
  const std::string field = request.field().empty() ? "intra_op_threads" : request.field();
  LoadPlan plan;
  plan.fields = {field};
  plan.config_without = std::vector<std::string>{field};
  absl::StatusOr<Selected> selected = Load(database, request.selection(), plan);
  if (!selected.ok()) return selected.status();
  *results = static_cast<int64_t>(selected->records.size());
  absl::StatusOr<std::vector<std::pair<const Record*, double>>> measured =
      MeasuredRecords(*selected, **metric);
  if (!measured.ok()) return measured.status();
  std::vector<ScalingRow> rows;
  for (const auto& [record, value] : *measured) {
    rows.push_back({FieldValue(*selected, *record, field), ConfigLabel(*record, field), value});
  }
  absl::StatusOr<v1::ScalingResponse> response =
      SummarizeScaling(rows, field, (*metric)->lower_is_better);
  if (!response.ok()) return response.status();
  response->set_metric((*metric)->name);
  return response;
}

}  // namespace

const std::vector<MetricInfo>& Metrics() {
  static const std::vector<MetricInfo>* const kMetrics = new std::vector<MetricInfo>{
      {"examples_per_sec", "examples/s", false, "training examples per second (batch / median step)"},
      {"gflops", "GFLOP/s", false, "model FLOPs (6 × forward MACs × batch) per second"},
      {"executed_gflops", "GFLOP/s", false, "FLOPs the step executes per second"},
      {"mfu", "%", false, "model FLOP/s / the calibrated matmul roof of the dtype"},
      {"hfu", "%", false, "executed FLOP/s / the calibrated matmul roof of the dtype"},
      {"step_time", "s", true, "median seconds per training step"},
      {"step_cv", "%", true, "coefficient of variation of the step times"},
      {"params", "", false, "trainable parameters"},
      {"model_flops", "FLOP", false, "model FLOPs per training step"},
      {"intensity", "FLOP/B", false, "executed FLOPs / bytes moved per step"},
      {"peak_rss", "B", true, "peak resident memory of the runner"},
  };
  return *kMetrics;
}

const std::vector<std::string>& BuiltinFields() {
  static const std::vector<std::string>* const kFields =
      new std::vector<std::string>(std::begin(kBuiltinFieldNames), std::end(kBuiltinFieldNames));
  return *kFields;
}

absl::StatusOr<v1::AnalyzeResponse> Analyzer::Analyze(const v1::AnalyzeRequest& request) const {
  v1::AnalyzeResponse response;
  int64_t results = 0;
  absl::Status status;
  switch (request.analysis_case()) {
    case v1::AnalyzeRequest::kHeatmap: {
      absl::StatusOr<v1::HeatmapResponse> out = Heatmap(database_, request.heatmap(), &results);
      if (out.ok()) *response.mutable_heatmap() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::kSensitivity: {
      absl::StatusOr<v1::SensitivityResponse> out =
          Sensitivity(database_, request.sensitivity(), &results);
      if (out.ok()) *response.mutable_sensitivity() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::kRoofline: {
      absl::StatusOr<v1::RooflineResponse> out = Roofline(database_, request.roofline(), &results);
      if (out.ok()) *response.mutable_roofline() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::kBoxplot: {
      absl::StatusOr<v1::BoxplotResponse> out = Boxplot(database_, request.boxplot(), &results);
      if (out.ok()) *response.mutable_boxplot() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::kSpeedup: {
      absl::StatusOr<v1::SpeedupResponse> out = Speedup(database_, request.speedup(), &results);
      if (out.ok()) *response.mutable_speedup() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::kScaling: {
      absl::StatusOr<v1::ScalingResponse> out = Scaling(database_, request.scaling(), &results);
      if (out.ok()) *response.mutable_scaling() = *std::move(out);
      status = out.status();
      break;
    }
    case v1::AnalyzeRequest::ANALYSIS_NOT_SET:
      return absl::InvalidArgumentError(
          "analysis: set one of heatmap, sensitivity, roofline, boxplot, speedup, scaling");
  }
  if (!status.ok()) return status;
  response.set_results(results);
  return response;
}

}  // namespace paradnn::server::analysis
