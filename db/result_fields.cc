#include "db/result_fields.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/host_sentinel.h"

namespace paradnn::db {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr unsigned kNarrowAndDashboard = kNarrowTable | kDashboard;

// A stored-only field.
ResultField Stored(const char* path, const char* column, SqlType type, bool null_if_zero = false) {
  return {path, StoredColumn{column, type, null_if_zero}, std::nullopt};
}

}  // namespace

// One entry per fact; see ResultField for what each part means. The order
// of the shown ones is the order of the columns.
// NOLINTNEXTLINE(readability-function-size): a table of every field, one entry each
const std::vector<ResultField>& ResultFields() {
  using SU = ShownUnit;
  using SW = ShownWhen;
  static const std::vector<ResultField>* const kFields = new std::vector<ResultField>{
      // measured | predicted (docs/prediction.md); blank while neither.
      {"", std::nullopt,
       ShownColumn{"source", "source", SU::kText, SW::kSource, kNarrowAndDashboard}},
      {"measurement.examples_per_sec", StoredColumn{"examples_per_sec", SqlType::kReal},
       ShownColumn{"examples_per_sec", "ex/s", SU::kRate, SW::kPredictedOrTimed,
                   kNarrowAndDashboard, 1, 1, "prediction.examples_per_sec"}},
      // Why the number may be off (Measurement.suspect), joined with "; ".
      {"measurement.suspect", StoredColumn{"suspect", SqlType::kText},
       ShownColumn{"suspect", "!", SU::kFlag, SW::kAlways, kNarrowAndDashboard}},
      {"measurement.stats.median_s", StoredColumn{"step_median_s", SqlType::kReal},
       ShownColumn{"step_median_ms", "median", SU::kMillis, SW::kPredictedOrTimed,
                   kNarrowAndDashboard, 1e3, 1, "prediction.step_seconds"}},
      // A prediction's 90 % interval of a re-measurement and the results its
      // model was fitted on.
      {"prediction.step_seconds_low", std::nullopt,
       ShownColumn{"predicted_low_ms", "pred lo", SU::kMillis, SW::kIfPredicted, kNarrowTable,
                   1e3}},
      {"prediction.step_seconds_high", std::nullopt,
       ShownColumn{"predicted_high_ms", "pred hi", SU::kMillis, SW::kIfPredicted, kNarrowTable,
                   1e3}},
      {"prediction.measurements", std::nullopt,
       ShownColumn{"predicted_from", "pred from", SU::kInteger, SW::kIfPredicted, kNarrowTable}},
      {"measurement.stats.ci95_rel", StoredColumn{"ci95_rel", SqlType::kReal},
       ShownColumn{"step_ci95_pct", "±ci95", SU::kPercent, SW::kIfTimed, kNarrowAndDashboard, 100}},
      // Where a re-run is expected on this platform (95 %), and what the
      // coordinator's re-run model rests on (server/analysis/rerun_model.h).
      {"rerun.half_width_rel", std::nullopt,
       ShownColumn{"rerun_pct", "±re-run", SU::kPercent, SW::kIfSet, kNarrowTable, 100}},
      {"rerun.basis", std::nullopt,
       ShownColumn{"rerun_basis", "re-run basis", SU::kText, SW::kIfSet, kWideOnly}},
      // The host-speed sentinel's matmul around the job, against the
      // worker's calibration.
      {"measurement.sentinel", std::nullopt,
       ShownColumn{"host_speed_pct", "host", SU::kPercent, SW::kHostSpeed, kWideOnly, 100}},
      {"measurement.stats.p10_s", StoredColumn{"step_p10_s", SqlType::kReal},
       ShownColumn{"step_p10_ms", "p10", SU::kMillis, SW::kIfTimed, kWideOnly, 1e3}},
      {"measurement.stats.p90_s", StoredColumn{"step_p90_s", SqlType::kReal},
       ShownColumn{"step_p90_ms", "p90", SU::kMillis, SW::kIfTimed, kWideOnly, 1e3}},
      {"measurement.stats.cv", StoredColumn{"step_cv", SqlType::kReal},
       ShownColumn{"step_cv", "cv", SU::kRatio, SW::kIfTimed, kWideOnly}},
      // The timed time spent in samples over 3x the median (docs/measurement.md
      // "Stalls"): what the median leaves out and the mean keeps in.
      {"measurement.stats.stall_share", std::nullopt,
       ShownColumn{"stall_pct", "stalls", SU::kPercent, SW::kIfTimedPositive, kWideOnly, 100}},
      {"measurement.stats.steps", StoredColumn{"steps", SqlType::kInteger},
       ShownColumn{"steps", "steps", SU::kInteger, SW::kIfTimed, kDashboard}},
      {"measurement.stats.stop_reason", StoredColumn{"stop_reason", SqlType::kText},
       ShownColumn{"stop_reason", "stop", SU::kText, SW::kIfTimed, kWideOnly}},
      {"measurement.model_flops_per_sec", StoredColumn{"model_flops_per_sec", SqlType::kReal},
       ShownColumn{"model_gflops_per_sec", "model GF/s", SU::kRate, SW::kPredictedOrTimed,
                   kNarrowAndDashboard, 1, 1e9, "prediction.model_flops_per_sec"}},
      {"measurement.executed_flops_per_sec", StoredColumn{"executed_flops_per_sec", SqlType::kReal},
       ShownColumn{"executed_gflops_per_sec", "exec GF/s", SU::kRate, SW::kIfTimed, kWideOnly, 1,
                   1e9}},
      // Against the worker's calibrated roof of the job's kernel path and
      // compute dtype (the stack's best), then against the silicon's peak.
      {"measurement.mfu", StoredColumn{"mfu", SqlType::kReal, true},
       ShownColumn{"mfu_pct", "MFU", SU::kPercent, SW::kIfTimedPositive, kNarrowAndDashboard, 100}},
      {"measurement.hfu", StoredColumn{"hfu", SqlType::kReal, true},
       ShownColumn{"hfu_pct", "HFU", SU::kPercent, SW::kIfTimedPositive, kWideOnly, 100}},
      {"measurement.silicon_mfu", StoredColumn{"silicon_mfu", SqlType::kReal, true},
       ShownColumn{"silicon_mfu_pct", "MFU(si)", SU::kPercent, SW::kIfTimedPositive,
                   kNarrowAndDashboard, 100}},
      {"measurement.intra_op_threads", StoredColumn{"intra_op_threads", SqlType::kInteger},
       ShownColumn{"intra_op_threads", "threads", SU::kInteger, SW::kIfTimed, kWideOnly}},
      // Concurrent replicas (docs/tuning.md): P processes whose host steps
      // these are; blank for one process.
      {"measurement.concurrent_replicas.replicas", std::nullopt,
       ShownColumn{"replicas", "replicas", SU::kInteger, SW::kIfPositive, kWideOnly}},
      // Where the runner put its threads, CPUs and memory (docs/tuning.md
      // "Placement"), as it did it.
      {"measurement.thread_pinning", std::nullopt,
       ShownColumn{"thread_pinning", "placement", SU::kText, SW::kIfSet, kWideOnly}},
      {"measurement.counts.params", StoredColumn{"params", SqlType::kInteger},
       ShownColumn{"params", "#params", SU::kCount, SW::kIfPositive, kDashboard}},
      // The runner's peak resident memory, and on a CUDA device the caching
      // allocator's peak of the job; blank where not measured.
      {"measurement.peak_rss_bytes", StoredColumn{"peak_rss_bytes", SqlType::kInteger},
       ShownColumn{"peak_rss_mib", "RSS MiB", SU::kRate, SW::kIfPositive, kWideOnly, 1, kMiB}},
      {"measurement.peak_device_memory_bytes", std::nullopt,
       ShownColumn{"peak_device_mib", "device MiB", SU::kRate, SW::kIfPositive, kWideOnly, 1,
                   kMiB}},
      // A data-parallel job's step (DataParallelStep, docs/measurement.md):
      // its ranks, the communication backward did not hide, the all-reduce's
      // own time and its bus bandwidth (nccl-tests); blank elsewhere.
      {"measurement.data_parallel.ranks", std::nullopt,
       ShownColumn{"ranks", "ranks", SU::kInteger, SW::kIfPositive, kWideOnly}},
      {"measurement.data_parallel.exposed_communication_s", std::nullopt,
       ShownColumn{"exposed_comm_ms", "exposed comm", SU::kMillis, SW::kIfTimedPositive, kWideOnly,
                   1e3}},
      {"measurement.data_parallel.allreduce_s", std::nullopt,
       ShownColumn{"allreduce_ms", "all-reduce", SU::kMillis, SW::kIfTimedPositive, kWideOnly,
                   1e3}},
      {"measurement.data_parallel.bus_bytes_per_sec", std::nullopt,
       ShownColumn{"busbw_gb_per_sec", "busbw GB/s", SU::kRate, SW::kIfTimedPositive, kWideOnly, 1,
                   1e9}},
      {"measurement.outcome", StoredColumn{"outcome", SqlType::kInteger},
       ShownColumn{"outcome", "outcome", SU::kText, SW::kOutcome, kNarrowAndDashboard}},
      {"worker_id", std::nullopt,
       ShownColumn{"worker", "worker", SU::kText, SW::kAlways, kDashboard}},
      // Taken from an earlier sweep's job instead of measured again
      // (RunSettings.fresh; docs/prediction.md, "Reusing results").
      {"reused_from_job_id", std::nullopt,
       ShownColumn{"reused_from_job", "reused from", SU::kInteger, SW::kIfPositive, kWideOnly}},
      {"measurement.error", StoredColumn{"error", SqlType::kText},
       ShownColumn{"error", "error", SU::kText, SW::kAlways, kWideOnly}},

      // Stored, not shown: analyses and SQL read them.
      Stored("measurement.stats.mean_s", "step_mean_s", SqlType::kReal),
      Stored("measurement.stats.stddev_s", "step_stddev_s", SqlType::kReal),
      Stored("measurement.stats.warmup_steps", "warmup_steps", SqlType::kInteger),
      Stored("measurement.counts.macs_per_example", "macs_per_example", SqlType::kInteger),
      Stored("measurement.counts.model_flops", "model_flops", SqlType::kReal),
      Stored("measurement.counts.executed_flops", "executed_flops", SqlType::kReal),
      Stored("measurement.counts.bytes_per_step", "bytes_per_step", SqlType::kReal),
      Stored("measurement.inter_op_threads", "inter_op_threads", SqlType::kInteger),
      Stored("measurement.build_seconds", "build_seconds", SqlType::kReal),
      Stored("measurement.timed_seconds", "timed_seconds", SqlType::kReal),
      Stored("measurement.silicon_hfu", "silicon_hfu", SqlType::kReal, true),
      // The stack the result's process ran with (a sweep's stack axis
      // varies it on one platform); "" where not reported.
      Stored("measurement.stack.blas_core", "blas_core", SqlType::kText),
      Stored("measurement.stack.aten_capability", "aten_capability", SqlType::kText),
  };
  return *kFields;
}

const char* SqlTypeName(SqlType type) {
  switch (type) {
    case SqlType::kInteger:
      return "INTEGER";
    case SqlType::kReal:
      return "REAL";
    case SqlType::kText:
      return "TEXT";
  }
  return "?";
}

const char* ShownUnitName(ShownUnit unit) {
  switch (unit) {
    case ShownUnit::kText:
      return "text";
    case ShownUnit::kInteger:
      return "integer";
    case ShownUnit::kCount:
      return "count";
    case ShownUnit::kMillis:
      return "millis";
    case ShownUnit::kPercent:
      return "percent";
    case ShownUnit::kRatio:
      return "ratio";
    case ShownUnit::kRate:
      return "rate";
    case ShownUnit::kFlag:
      return "flag";
  }
  return "?";
}

const char* ShownWhenName(ShownWhen when) {
  switch (when) {
    case ShownWhen::kAlways:
      return "always";
    case ShownWhen::kIfTimed:
      return "if_timed";
    case ShownWhen::kIfTimedPositive:
      return "if_timed_positive";
    case ShownWhen::kIfPositive:
      return "if_positive";
    case ShownWhen::kIfPredicted:
      return "if_predicted";
    case ShownWhen::kPredictedOrTimed:
      return "predicted_or_timed";
    case ShownWhen::kIfSet:
      return "if_set";
    case ShownWhen::kSource:
      return "source";
    case ShownWhen::kOutcome:
      return "outcome";
    case ShownWhen::kHostSpeed:
      return "host_speed";
  }
  return "?";
}

namespace {

[[noreturn]] void BadPath(const std::string& path, const Descriptor* type, const std::string& why) {
  std::fprintf(stderr, "result fields bug: path '%s' of %s: %s\n", path.c_str(),
               type->full_name().c_str(), why.c_str());
  std::abort();
}

// A path resolved against a message type: the fields to walk, and the key
// when the last one is a map<string, string>.
struct CompiledPath {
  std::vector<const FieldDescriptor*> fields;
  std::string map_key;
};

CompiledPath Compile(const Descriptor* root, const std::string& path) {
  CompiledPath out;
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  const Descriptor* type = root;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (type == nullptr) BadPath(path, root, absl::StrCat("'", parts[i - 1], "' is not a message"));
    const FieldDescriptor* field = type->FindFieldByName(parts[i]);
    if (field == nullptr) BadPath(path, root, absl::StrCat("no field '", parts[i], "'"));
    out.fields.push_back(field);
    if (field->is_map()) {
      if (i + 2 != parts.size() ||
          field->message_type()->map_value()->cpp_type() != FieldDescriptor::CPPTYPE_STRING) {
        BadPath(path, root, "a map<string, string> is read by one key, the path's last part");
      }
      out.map_key = parts[i + 1];
      return out;
    }
    if (field->is_repeated() &&
        (i + 1 != parts.size() || field->cpp_type() != FieldDescriptor::CPPTYPE_STRING)) {
      BadPath(path, root, "only a repeated string, at the path's end, reads as one value");
    }
    type = field->message_type();
  }
  return out;
}

// Every path of the table compiled once, against v1::ResultRow and (stored
// ones, without "measurement.") against v1::Measurement.
struct CompiledPaths {
  std::map<std::pair<const Descriptor*, std::string>, CompiledPath> by_type_and_path;
  std::vector<std::pair<const StoredColumn*, const CompiledPath*>> stored;
};

const CompiledPaths& Paths() {
  static const CompiledPaths* const kPaths = [] {
    auto* paths = new CompiledPaths;
    const auto add = [paths](const Descriptor* type, const std::string& path) {
      const auto key = std::make_pair(type, path);
      auto it = paths->by_type_and_path.find(key);
      if (it == paths->by_type_and_path.end()) {
        it = paths->by_type_and_path.emplace(key, Compile(type, path)).first;
      }
      return &it->second;
    };
    for (const ResultField& field : ResultFields()) {
      if (field.shown && field.shown->predicted_path != nullptr) {
        add(v1::ResultRow::descriptor(), field.shown->predicted_path);
      }
      if (*field.path != '\0') add(v1::ResultRow::descriptor(), field.path);
      if (!field.stored) continue;
      absl::string_view relative = field.path;
      if (!absl::ConsumePrefix(&relative, "measurement.")) {
        BadPath(field.path, v1::ResultRow::descriptor(), "a stored field is the measurement's");
      }
      paths->stored.emplace_back(&*field.stored,
                                 add(v1::Measurement::descriptor(), std::string(relative)));
    }
    return paths;
  }();
  return *kPaths;
}

std::string MapValue(const Message& message, const FieldDescriptor* map, const std::string& key) {
  const Reflection* reflection = message.GetReflection();
  const Descriptor* entry_type = map->message_type();
  for (int i = 0; i < reflection->FieldSize(message, map); ++i) {
    const Message& entry = reflection->GetRepeatedMessage(message, map, i);
    if (entry.GetReflection()->GetString(entry, entry_type->map_key()) == key) {
      return entry.GetReflection()->GetString(entry, entry_type->map_value());
    }
  }
  return "";
}

FieldValue Read(const Message& message, const CompiledPath& path) {
  const Message* at = &message;
  for (size_t i = 0; i + 1 < path.fields.size(); ++i) {
    at = &at->GetReflection()->GetMessage(*at, path.fields[i]);
  }
  const FieldDescriptor* field = path.fields.back();
  const Reflection* reflection = at->GetReflection();
  if (field->is_map()) return MapValue(*at, field, path.map_key);
  if (field->is_repeated()) {
    std::vector<std::string> values;
    values.reserve(reflection->FieldSize(*at, field));
    for (int i = 0; i < reflection->FieldSize(*at, field); ++i) {
      values.push_back(reflection->GetRepeatedString(*at, field, i));
    }
    return absl::StrJoin(values, "; ");
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return int64_t{reflection->GetInt32(*at, field)};
    case FieldDescriptor::CPPTYPE_INT64:
      return reflection->GetInt64(*at, field);
    case FieldDescriptor::CPPTYPE_UINT32:
      return int64_t{reflection->GetUInt32(*at, field)};
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<int64_t>(reflection->GetUInt64(*at, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return int64_t{reflection->GetBool(*at, field) ? 1 : 0};
    case FieldDescriptor::CPPTYPE_ENUM:
      return int64_t{reflection->GetEnumValue(*at, field)};
    case FieldDescriptor::CPPTYPE_FLOAT:
      return double{reflection->GetFloat(*at, field)};
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return reflection->GetDouble(*at, field);
    case FieldDescriptor::CPPTYPE_STRING:
      return reflection->GetString(*at, field);
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  BadPath(field->full_name(), at->GetDescriptor(), "a message is not a value");
}

FieldValue ReadPath(const Message& message, const std::string& path) {
  const CompiledPaths& paths = Paths();
  const auto it = paths.by_type_and_path.find(std::make_pair(message.GetDescriptor(), path));
  if (it != paths.by_type_and_path.end()) return Read(message, it->second);
  return Read(message, Compile(message.GetDescriptor(), path));
}

bool IsZero(const FieldValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i == 0;
  if (const auto* d = std::get_if<double>(&value)) return *d == 0;
  return false;
}

bool IsPositive(const FieldValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i > 0;
  if (const auto* d = std::get_if<double>(&value)) return *d > 0;
  return !std::get<std::string>(value).empty();
}

bool IsIntegerUnit(ShownUnit unit) {
  return unit == ShownUnit::kInteger || unit == ShownUnit::kCount;
}

// `value` as the column shows it: text ("" blank), an integer, or a real
// scaled by the column's multiply and divide.
std::optional<FieldValue> AsShown(const ShownColumn& shown, const FieldValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    if (text->empty()) return std::nullopt;
    return *text;
  }
  const auto* integer = std::get_if<int64_t>(&value);
  if (IsIntegerUnit(shown.unit) && integer != nullptr) return *integer;
  const double real = integer != nullptr ? static_cast<double>(*integer) : std::get<double>(value);
  return real * shown.multiply / shown.divide;
}

// The first field of `path` is a set message of `row`.
bool StartsInSetMessage(const v1::ResultRow& row, const std::string& path) {
  const CompiledPath& compiled = Paths().by_type_and_path.at({row.GetDescriptor(), path});
  return row.GetReflection()->HasField(row, compiled.fields.front());
}

}  // namespace

FieldValue ReadFieldPath(const Message& message, const std::string& path) {
  return ReadPath(message, path);
}

const std::string& ResultInsertSql() {
  static const std::string* const kSql = [] {
    std::vector<std::string> columns = {"job_id",      "attempt_id",  "worker_id",
                                        "platform_id", "measurement", "created_unix_ms",
                                        "harness",     "trust_domain"};
    std::vector<std::string> values = {
        "?1", "?2", "?3", "?4", "?5", "?6",
        // The harness and trust domain of the worker that measured it, as
        // its hello said.
        "COALESCE((SELECT harness FROM workers WHERE id = ?3), '')",
        "COALESCE((SELECT trust_domain FROM workers WHERE id = ?3), '')"};
    int param = kFirstStoredFieldParam;
    for (const auto& stored : Paths().stored) {
      columns.emplace_back(stored.first->column);
      values.push_back(absl::StrCat("?", param++));
    }
    return new std::string(absl::StrCat("INSERT INTO results (", absl::StrJoin(columns, ", "),
                                        ") VALUES (", absl::StrJoin(values, ", "), ")"));
  }();
  return *kSql;
}

void BindStoredFields(const v1::Measurement& measurement, Statement& insert) {
  int param = kFirstStoredFieldParam;
  for (const auto& [stored, path] : Paths().stored) {
    const FieldValue value = Read(measurement, *path);
    if (stored->null_if_zero && IsZero(value)) {
      insert.BindNull(param);
    } else if (const auto* integer = std::get_if<int64_t>(&value)) {
      insert.Bind(param, *integer);
    } else if (const auto* real = std::get_if<double>(&value)) {
      insert.Bind(param, *real);
    } else {
      insert.Bind(param, std::get<std::string>(value));
    }
    ++param;
  }
}

std::optional<FieldValue> ShownCell(const ResultField& field, const v1::ResultRow& row) {
  const ShownColumn& shown = *field.shown;
  const v1::Measurement& m = row.measurement();
  const bool measured = row.has_measurement();
  const bool timed = measured && (m.outcome() == v1::OK || m.stats().steps() > 0);
  const bool predicted = !measured && row.has_prediction();
  switch (shown.when) {
    case ShownWhen::kSource:
      if (measured) return std::string("measured");
      if (predicted) return std::string("predicted");
      return std::nullopt;
    case ShownWhen::kOutcome:
      if (measured) return v1::Outcome_Name(m.outcome());
      return std::string(absl::StripPrefix(v1::JobState_Name(row.state()), "JOB_"));
    case ShownWhen::kHostSpeed: {
      const std::optional<double> speed = common::HostSpeedAround(m.sentinel());
      if (!speed) return std::nullopt;
      return AsShown(shown, *speed);
    }
    case ShownWhen::kPredictedOrTimed:
      if (predicted) return AsShown(shown, ReadPath(row, shown.predicted_path));
      if (!timed) return std::nullopt;
      return AsShown(shown, ReadPath(row, field.path));
    case ShownWhen::kIfSet:
      if (!StartsInSetMessage(row, field.path)) return std::nullopt;
      return AsShown(shown, ReadPath(row, field.path));
    case ShownWhen::kIfTimed:
    case ShownWhen::kIfTimedPositive:
    case ShownWhen::kIfPredicted:
    case ShownWhen::kIfPositive:
    case ShownWhen::kAlways:
      break;
  }
  if ((shown.when == ShownWhen::kIfTimed || shown.when == ShownWhen::kIfTimedPositive) && !timed) {
    return std::nullopt;
  }
  if (shown.when == ShownWhen::kIfPredicted && !predicted) return std::nullopt;
  const FieldValue value = ReadPath(row, field.path);
  if ((shown.when == ShownWhen::kIfPositive || shown.when == ShownWhen::kIfTimedPositive) &&
      !IsPositive(value)) {
    return std::nullopt;
  }
  return AsShown(shown, value);
}

}  // namespace paradnn::db
