#include "db/result_fields.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "db/result_field_code.h"
#include "tests/unit/db/test_db.h"

namespace paradnn::db {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using testing::CpuPlatform;
using testing::Jobs;
using testing::Spec;
using testing::StoresTest;

// The results columns that are the row's own, not a measured fact: its id,
// whose result it is, the blob, and what the store and reuse write.
const std::set<std::string> kRowColumns = {
    "id",          "job_id",          "attempt_id", "worker_id",    "platform_id",
    "measurement", "created_unix_ms", "harness",    "trust_domain", "reused_from_job_id"};

// name -> declared type of every results column, as the migrations leave it.
std::map<std::string, std::string> ResultsSchema(const Database& db) {
  std::map<std::string, std::string> columns;
  absl::Status status = db.Read([&](sqlite3* conn) -> absl::Status {
    Statement info(conn, "SELECT name, type FROM pragma_table_info('results')");
    for (;;) {
      absl::StatusOr<bool> row = info.Step();
      if (!row.ok()) return row.status();
      if (!*row) return absl::OkStatus();
      columns[info.ColumnText(0)] = info.ColumnText(1);
    }
  });
  EXPECT_TRUE(status.ok()) << status;
  return columns;
}

// The descriptor of the last field of `path` in v1::ResultRow.
const FieldDescriptor* LastField(const std::string& path) {
  const google::protobuf::Descriptor* type = v1::ResultRow::descriptor();
  const FieldDescriptor* field = nullptr;
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (const std::string& part : parts) {
    if (type == nullptr) break;  // a map's key
    field = type->FindFieldByName(part);
    if (field == nullptr) return nullptr;
    type = field->is_map() ? nullptr : field->message_type();
  }
  return field;
}

class ResultFieldsTest : public StoresTest {};

TEST_F(ResultFieldsTest, StoredFieldsAreTheSchemasMeasuredColumns) {
  const std::map<std::string, std::string> schema = ResultsSchema(*db_);
  ASSERT_FALSE(schema.empty());
  std::set<std::string> stored;
  for (const ResultField& field : ResultFields()) {
    if (!field.stored) continue;
    const std::string column = field.stored->column;
    EXPECT_TRUE(stored.insert(column).second) << column << " is stored twice";
    const auto it = schema.find(column);
    ASSERT_NE(it, schema.end()) << column << " (" << field.path
                                << ") is not a column of results: add it in db/migrations.cc";
    EXPECT_EQ(it->second, SqlTypeName(field.stored->type)) << column;
  }
  for (const auto& [column, type] : schema) {
    EXPECT_TRUE(stored.count(column) > 0 || kRowColumns.count(column) > 0)
        << "results." << column << " (" << type
        << ") is neither a stored field of db/result_fields.cc nor one of the row's own columns";
  }
}

TEST(ResultFieldTableTest, StoredTypesHoldTheFieldsValues) {
  for (const ResultField& field : ResultFields()) {
    if (!field.stored) continue;
    const FieldDescriptor* proto = LastField(field.path);
    ASSERT_NE(proto, nullptr) << field.path;
    SqlType want = SqlType::kText;
    switch (proto->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT:
        want = SqlType::kReal;
        break;
      case FieldDescriptor::CPPTYPE_STRING:
      case FieldDescriptor::CPPTYPE_MESSAGE:  // a map<string, string>'s value
        want = SqlType::kText;
        break;
      default:  // integers, enums (their numbers), bools
        want = SqlType::kInteger;
        break;
    }
    EXPECT_EQ(SqlTypeName(field.stored->type), std::string(SqlTypeName(want))) << field.path;
  }
}

TEST(ResultFieldTableTest, ShownNamesAreUniqueAndEveryPathReads) {
  std::set<std::string> names;
  v1::ResultRow row;
  row.mutable_measurement()->set_outcome(v1::OK);
  row.mutable_measurement()->mutable_stats()->set_steps(3);
  row.mutable_rerun()->set_basis("prior");
  for (const ResultField& field : ResultFields()) {
    if (!field.shown) continue;
    EXPECT_TRUE(names.insert(field.shown->name).second) << field.shown->name;
    static_cast<void>(ShownCell(field, row));  // aborts on a path ResultRow lacks
    if (field.shown->when == ShownWhen::kPredictedOrTimed) {
      EXPECT_NE(field.shown->predicted_path, nullptr) << field.shown->name;
    }
  }
  EXPECT_GE(names.count("examples_per_sec"), 1u);
}

TEST(ResultFieldTableTest, PathsReadMapsRepeatedTextAndEnums) {
  v1::ResultRow row;
  v1::Measurement& m = *row.mutable_measurement();
  (*m.mutable_stack())["blas_core"] = "Haswell";
  m.add_suspect("busy host");
  m.add_suspect("noisy steps");
  m.set_outcome(v1::OOM);
  m.mutable_stats()->set_steps(7);
  EXPECT_EQ(std::get<std::string>(ReadFieldPath(row, "measurement.stack.blas_core")), "Haswell");
  EXPECT_EQ(std::get<std::string>(ReadFieldPath(row, "measurement.stack.aten_capability")), "");
  EXPECT_EQ(std::get<std::string>(ReadFieldPath(m, "suspect")), "busy host; noisy steps");
  EXPECT_EQ(std::get<int64_t>(ReadFieldPath(m, "outcome")), static_cast<int64_t>(v1::OOM));
  EXPECT_EQ(std::get<int64_t>(ReadFieldPath(row, "measurement.stats.steps")), 7);
  EXPECT_EQ(std::get<double>(ReadFieldPath(row, "prediction.step_seconds")), 0.0);
}

TEST(ResultFieldTableTest, ShownCellsFollowTheirRules) {
  const auto field = [](const std::string& name) -> const ResultField& {
    for (const ResultField& f : ResultFields()) {
      if (f.shown && f.shown->name == name) return f;
    }
    ADD_FAILURE() << "no shown field " << name;
    return ResultFields().front();
  };
  v1::ResultRow failed;
  failed.mutable_measurement()->set_outcome(v1::OOM);
  failed.mutable_measurement()->set_peak_rss_bytes(3 << 20);
  failed.mutable_measurement()->mutable_stats()->set_median_s(0.5);
  EXPECT_EQ(ShownCell(field("step_median_ms"), failed), std::nullopt);  // not timed
  EXPECT_EQ(std::get<double>(*ShownCell(field("peak_rss_mib"), failed)), 3.0);
  EXPECT_EQ(std::get<std::string>(*ShownCell(field("outcome"), failed)), "OOM");

  v1::ResultRow predicted;
  predicted.set_state(v1::JOB_PREDICTED);
  predicted.mutable_prediction()->set_step_seconds(0.002);
  EXPECT_EQ(std::get<double>(*ShownCell(field("step_median_ms"), predicted)), 0.002 * 1e3);
  EXPECT_EQ(std::get<std::string>(*ShownCell(field("source"), predicted)), "predicted");
  EXPECT_EQ(std::get<std::string>(*ShownCell(field("outcome"), predicted)), "PREDICTED");
  EXPECT_EQ(ShownCell(field("rerun_pct"), predicted), std::nullopt);  // no rerun
  EXPECT_EQ(ShownCell(field("peak_rss_mib"), predicted), std::nullopt);

  v1::ResultRow ok;
  ok.mutable_measurement()->set_outcome(v1::OK);
  ok.mutable_measurement()->set_model_flops_per_sec(2.5e9);
  ok.mutable_measurement()->mutable_counts()->set_params(5000);
  EXPECT_EQ(std::get<double>(*ShownCell(field("model_gflops_per_sec"), ok)), 2.5e9 / 1e9);
  EXPECT_EQ(std::get<int64_t>(*ShownCell(field("params"), ok)), 5000);
  EXPECT_EQ(ShownCell(field("mfu_pct"), ok), std::nullopt);  // no roof: 0
}

// Sets the field at `path` (relative to `message`) to a value that tells it
// from every other: integers `seed`, reals seed + 0.25, text "text-<seed>",
// a map's key "text-<seed>", a repeated string two values.
void SetDistinct(Message* message, const std::string& path, int seed) {
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  Message* at = message;
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* field = at->GetDescriptor()->FindFieldByName(parts[i]);
    ASSERT_NE(field, nullptr) << path;
    const google::protobuf::Reflection* r = at->GetReflection();
    const std::string text = absl::StrCat("text-", seed);
    if (field->is_map()) {
      Message* entry = r->AddMessage(at, field);
      entry->GetReflection()->SetString(entry, field->message_type()->map_key(), parts[i + 1]);
      entry->GetReflection()->SetString(entry, field->message_type()->map_value(), text);
      return;
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      at = r->MutableMessage(at, field);
      continue;
    }
    if (field->is_repeated()) {
      r->AddString(at, field, text);
      r->AddString(at, field, "second");
      return;
    }
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        return r->SetInt32(at, field, seed);
      case FieldDescriptor::CPPTYPE_INT64:
        return r->SetInt64(at, field, seed);
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return r->SetDouble(at, field, seed + 0.25);
      case FieldDescriptor::CPPTYPE_STRING:
        return r->SetString(at, field, text);
      case FieldDescriptor::CPPTYPE_ENUM:
        return r->SetEnumValue(at, field, v1::OK);
      default:
        FAIL() << path << ": no distinct value for its type";
    }
  }
}

TEST_F(ResultFieldsTest, EveryStoredFieldLandsInItsColumn) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(1), kNow).ok());
  absl::StatusOr<std::optional<Lease>> lease = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 1000);
  ASSERT_TRUE(lease.ok() && lease->has_value());
  v1::Measurement m;
  int seed = 10;
  for (const ResultField& field : ResultFields()) {
    if (field.stored) SetDistinct(&m, std::string(field.path).substr(12), ++seed);
  }
  ASSERT_TRUE(results_
                  ->StoreSync((*lease)->job_id, (*lease)->attempt_id, "w",
                              UpsertPlatform(CpuPlatform("fp")), m, kNow)
                  .ok());
  for (const ResultField& field : ResultFields()) {
    if (!field.stored) continue;
    const std::string sql = absl::StrCat("SELECT quote(", field.stored->column, ") FROM results");
    const FieldValue value = ReadFieldPath(m, std::string(field.path).substr(12));
    std::string want;
    if (const auto* i = std::get_if<int64_t>(&value)) want = absl::StrCat(*i);
    if (const auto* d = std::get_if<double>(&value)) want = absl::StrCat(*d);
    if (const auto* t = std::get_if<std::string>(&value)) want = absl::StrCat("'", *t, "'");
    EXPECT_EQ(*testing::ScalarText(*db_, sql.c_str()), want) << field.stored->column;
  }
}

TEST_F(ResultFieldsTest, AZeroUtilizationIsStoredAsNull) {
  ASSERT_TRUE(sweeps_->CreateSync(Spec("s"), Jobs(1), kNow).ok());
  absl::StatusOr<std::optional<Lease>> lease = jobs_->LeaseNextSync("cpu", "w", kNow, kNow + 1000);
  ASSERT_TRUE(lease.ok() && lease->has_value());
  v1::Measurement m = testing::OkMeasurement(2);
  m.set_hfu(0.5);
  ASSERT_TRUE(results_->StoreSync((*lease)->job_id, (*lease)->attempt_id, "w", 0, m, kNow).ok());
  EXPECT_EQ(*testing::ScalarText(*db_, "SELECT quote(mfu) || ' ' || quote(hfu) FROM results"),
            "NULL 0.5");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The checked-in copies are what the Python package and the dashboard read;
// each must be exactly what the table generates. PARADNN_UPDATE_GENERATED=1
// rewrites them.
void ExpectCurrent(const char* relative_path, const std::string& want) {
  const char* source_dir = std::getenv("PARADNN_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "PARADNN_SOURCE_DIR is not set (run through ctest)";
  const std::string path = absl::StrCat(source_dir, "/", relative_path);
  const char* update = std::getenv("PARADNN_UPDATE_GENERATED");
  if (update != nullptr && std::string(update) == "1" && ReadFile(path) != want) {
    std::ofstream(path) << want;
  }
  EXPECT_EQ(ReadFile(path), want) << relative_path
                                  << " is stale: rerun with PARADNN_UPDATE_GENERATED=1";
}

TEST(GeneratedResultFieldsTest, PythonTableIsCurrent) {
  ExpectCurrent(kPythonResultFieldsPath, ResultFieldsPython());
}

TEST(GeneratedResultFieldsTest, DashboardTableIsCurrent) {
  ExpectCurrent(kDashboardResultFieldsPath, ResultFieldsJavaScript());
}

TEST(GeneratedResultFieldsTest, TablesHoldEveryShownFieldExactly) {
  const std::string python = ResultFieldsPython();
  const std::string js = ResultFieldsJavaScript();
  EXPECT_NE(python.find("    (\"peak_rss_mib\", \"RSS MiB\", \"rate\", \"if_positive\", "
                        "\"measurement.peak_rss_bytes\", \"\", 1.0, 1048576.0),\n"),
            std::string::npos)
      << python;
  EXPECT_NE(js.find("{ name: 'step_median_ms', title: 'median', unit: 'millis', when: "
                    "'predicted_or_timed', path: 'measurement.stats.median_s', predictedPath: "
                    "'prediction.step_seconds', multiply: 1000, divide: 1, dashboard: true },"),
            std::string::npos)
      << js;
  EXPECT_EQ(python.find("step_mean_s"), std::string::npos);  // stored only
}

}  // namespace
}  // namespace paradnn::db
