// The results table: the configuration's columns, one column per shown
// result field (db/result_fields.h, the one description of a result's facts
// for the CLI, the Python package and the dashboard), and BuildResultTable
// (client/output_format.h), which every output format reads.
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/output_format.h"
#include "db/result_fields.h"
#include "paradnn/v1/metrics.pb.h"
#include "platform/stack_findings.h"

namespace paradnn::client {
namespace {

Cell Text(const std::string& text) {
  if (text.empty()) return std::monostate{};
  return text;
}

ColumnUnit UnitOf(db::ShownUnit unit) {
  switch (unit) {
    case db::ShownUnit::kText:
      return ColumnUnit::kText;
    case db::ShownUnit::kInteger:
      return ColumnUnit::kInteger;
    case db::ShownUnit::kCount:
      return ColumnUnit::kCount;
    case db::ShownUnit::kMillis:
      return ColumnUnit::kMillis;
    case db::ShownUnit::kPercent:
      return ColumnUnit::kPercent;
    case db::ShownUnit::kRatio:
      return ColumnUnit::kRatio;
    case db::ShownUnit::kRate:
      return ColumnUnit::kRate;
    case db::ShownUnit::kFlag:
      return ColumnUnit::kFlag;
  }
  return ColumnUnit::kText;
}

// The columns that follow the configuration: the shown result fields
// (db/result_fields.h), in their order; the same table makes the Python
// frame's and the dashboard's columns.
const std::vector<const db::ResultField*>& MeasurementColumns() {
  static const std::vector<const db::ResultField*>* const kColumns = [] {
    auto* columns = new std::vector<const db::ResultField*>;
    for (const db::ResultField& field : db::ResultFields()) {
      if (field.shown) columns->push_back(&field);
    }
    return columns;
  }();
  return *kColumns;
}

ResultColumn ColumnOf(const db::ResultField& field) {
  return {field.shown->name, field.shown->title, UnitOf(field.shown->unit)};
}

Cell CellOf(const db::ResultField& field, const v1::ResultRow& row) {
  const std::optional<db::FieldValue> value = db::ShownCell(field, row);
  if (!value) return std::monostate{};
  return std::visit([](const auto& v) -> Cell { return v; }, *value);
}

bool IsFixedColumn(const std::string& name) {
  if (name == "job_id" || name == "repeat" || name == "precision" || name == "optimizer") {
    return true;
  }
  for (const db::ResultField* field : MeasurementColumns()) {
    if (field->shown->name == name) return true;
  }
  return false;
}

}  // namespace

Cell TextCell(const std::string& text) { return Text(text); }

ConfigColumns::ConfigColumns(const std::vector<v1::ResultRow>& rows) {
  std::set<std::string> param_set;
  std::set<std::string> option_set;
  std::set<std::string> stack_set;
  for (const v1::ResultRow& row : rows) {
    for (const auto& [key, unused] : row.config().params()) param_set.insert(key);
    for (const auto& [key, unused] : row.config().options()) option_set.insert(key);
    for (const auto& [key, unused] : row.config().stack()) stack_set.insert(key);
  }
  params.assign(param_set.begin(), param_set.end());
  options.assign(option_set.begin(), option_set.end());
  stack.assign(stack_set.begin(), stack_set.end());
}

void ConfigColumns::AppendColumns(std::vector<ResultColumn>* columns) const {
  for (const std::string& key : params) {
    // A future family's parameter must not shadow a measurement column.
    const std::string name = IsFixedColumn(key) ? "param_" + key : key;
    columns->push_back({name, name, ColumnUnit::kInteger});
  }
  for (const std::string& key : options) {
    const std::string name = IsFixedColumn(key) ? "param_" + key : key;
    columns->push_back({name, name, ColumnUnit::kText});
  }
  for (const std::string& key : stack) {
    const std::string name = absl::StrCat(platform::kStackKeyPrefix, key);
    columns->push_back({name, name, ColumnUnit::kText});
  }
  columns->push_back({"precision", "precision", ColumnUnit::kText});
  columns->push_back({"optimizer", "optimizer", ColumnUnit::kText});
}

void ConfigColumns::AppendCells(const v1::ModelConfig& config, std::vector<Cell>* cells) const {
  for (const std::string& key : params) {
    const auto it = config.params().find(key);
    cells->push_back(it == config.params().end() ? Cell{} : Cell{it->second});
  }
  for (const std::string& key : options) {
    const auto it = config.options().find(key);
    cells->push_back(it == config.options().end() ? Cell{} : Text(it->second));
  }
  for (const std::string& key : stack) {
    const auto it = config.stack().find(key);
    cells->push_back(it == config.stack().end() ? Cell{} : Text(it->second));
  }
  cells->push_back(Text(config.precision()));
  cells->push_back(Text(config.optimizer()));
}

bool HasRepeats(const std::vector<v1::ResultRow>& rows) {
  for (const v1::ResultRow& row : rows) {
    if (row.repeat() > 0) return true;
  }
  return false;
}

ResultTable BuildResultTable(const std::vector<v1::ResultRow>& rows) {
  const ConfigColumns config_columns(rows);
  const bool repeats = HasRepeats(rows);
  ResultTable table;
  table.columns.push_back({"job_id", "job", ColumnUnit::kInteger});
  if (repeats) table.columns.push_back({"repeat", "repeat", ColumnUnit::kInteger});
  config_columns.AppendColumns(&table.columns);
  for (const db::ResultField* field : MeasurementColumns()) {
    table.columns.push_back(ColumnOf(*field));
  }

  for (const v1::ResultRow& row : rows) {
    std::vector<Cell> cells;
    cells.reserve(table.columns.size());
    cells.emplace_back(row.job_id());
    if (repeats) cells.emplace_back(int64_t{row.repeat()});
    config_columns.AppendCells(row.config(), &cells);
    for (const db::ResultField* field : MeasurementColumns()) {
      cells.push_back(CellOf(*field, row));
    }
    table.rows.push_back(std::move(cells));
    const auto& steps = row.measurement().step_seconds();
    table.step_seconds.emplace_back(steps.begin(), steps.end());
  }
  return table;
}

}  // namespace paradnn::client
