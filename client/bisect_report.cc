// `paradnn bisect`'s result: the table a person reads and the JSON a
// script does (client/bisect_command.h).
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/bisect_command.h"

namespace paradnn::client {
namespace {

// The median of a measurement's step times, 0 without any.
double MedianStepSeconds(std::vector<double> step_seconds) {
  if (step_seconds.empty()) return 0;
  std::sort(step_seconds.begin(), step_seconds.end());
  const size_t n = step_seconds.size();
  return n % 2 == 1 ? step_seconds[n / 2] : (step_seconds[n / 2 - 1] + step_seconds[n / 2]) / 2;
}

// "2.12x [1.98x, 2.27x] (+112.0 %), p 0.0001"; "not estimated" without data.
std::string EffectText(const v1::BisectEffect& effect) {
  if (effect.basis().empty()) return "not estimated";
  return absl::StrFormat("%.2fx [%.2fx, %.2fx] (%+.1f %%), p %.2g", effect.ratio(), effect.low(),
                         effect.high(), 100 * (effect.ratio() - 1), effect.p_value());
}

// A stack's value of a setting: "-" when the stack leaves it out (the
// file's or the worker's default), "(unset)" for an emptied env.NAME.
std::string StackValueText(const google::protobuf::Map<std::string, std::string>& stack,
                           const std::string& name) {
  const auto it = stack.find(name);
  if (it == stack.end()) return "-";
  return it->second.empty() ? "(unset)" : it->second;
}

std::string PaddedRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    absl::StrAppend(&line, "  ", cells[i]);
    if (i + 1 < cells.size())
      line.append(widths[i] > cells[i].size() ? widths[i] - cells[i].size() : 0, ' ');
  }
  return line + "\n";
}

// Rows under a header, each column as wide as its widest cell.
std::string AlignedRows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const std::vector<std::string>& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const std::vector<std::string>& row : rows) out += PaddedRow(row, widths);
  return out;
}

std::string StacksTable(const v1::BisectResponse& result, const v1::BisectRequest& request) {
  std::vector<std::vector<std::string>> rows = {{"setting", "A (--good)", "B (--bad)"}};
  for (const std::string& name : result.differing()) {
    rows.push_back(
        {name, StackValueText(request.good(), name), StackValueText(request.bad(), name)});
  }
  return absl::StrCat("the stacks differ in ", result.differing_size(), " setting",
                      result.differing_size() == 1 ? "" : "s", ":\n", AlignedRows(rows));
}

std::string DecisionsTable(const v1::BisectResponse& result) {
  if (result.decisions().empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"probe: A +", "carries the effect", "share", "rounds"}};
  for (const v1::BisectDecision& d : result.decisions()) {
    rows.push_back({absl::StrJoin(d.from_bad(), ", "),
                    absl::StrCat(d.carries() ? "yes" : "no", d.clear() ? "" : " (unclear)"),
                    absl::StrFormat("%.2f", d.share()), absl::StrCat(d.rounds())});
  }
  return absl::StrCat("decisions, in order:\n", AlignedRows(rows));
}

std::string MeasurementsTable(const std::vector<BisectMeasured>& measured, size_t differing) {
  size_t a = 0, b = 0;
  std::set<std::string> workers;
  std::vector<std::vector<std::string>> rows = {
      {"#", "round", "mix", "median step", "steps", "sweep", "worker"}};
  for (const BisectMeasured& m : measured) {
    const std::string label = BisectMixLabel(m.mix, differing);
    a += label == "A" ? 1 : 0;
    b += label == "B" ? 1 : 0;
    if (!m.worker.empty()) workers.insert(m.worker);
    rows.push_back({absl::StrCat(m.mix.index() + 1), absl::StrCat(m.mix.round()), label,
                    m.step_seconds.empty()
                        ? absl::StrCat("failed: ", m.error)
                        : absl::StrFormat("%.3f ms", 1e3 * MedianStepSeconds(m.step_seconds)),
                    absl::StrCat(m.step_seconds.size()), absl::StrCat(m.sweep_id), m.worker});
  }
  std::string out = absl::StrCat("measurements: ", measured.size(), " (A ", a, ", B ", b,
                                 ", probes ", measured.size() - a - b, ")\n", AlignedRows(rows));
  if (workers.size() > 1) {
    absl::StrAppend(&out, "note: the measurements ran on ", workers.size(),
                    " workers; the rounds assume one host (a coordinator with one worker of this "
                    "device, or no --coordinator, keeps them on one)\n");
  }
  return out;
}

std::string BisectTable(const v1::BisectResponse& result,
                        const std::vector<BisectMeasured>& measured,
                        const v1::BisectRequest& request) {
  std::string out = StacksTable(result, request);
  absl::StrAppend(&out, "outcome: ", result.outcome(), "\n");
  if (!result.culprits().empty()) {
    absl::StrAppend(&out, "culprit", result.culprits_size() > 1 ? "s (together)" : "", ": ",
                    absl::StrJoin(result.culprits(), ", "), "\n",
                    "  A with it from B, over A: ", EffectText(result.culprit_effect()), "\n",
                    absl::StrFormat("  share of B's effect:      %.2f (of the log step time)\n",
                                    result.culprit_share()));
  }
  absl::StrAppend(&out, "  B over A (the stacks):    ", EffectText(result.stack_effect()), "\n");
  absl::StrAppend(&out, DecisionsTable(result),
                  MeasurementsTable(measured, static_cast<size_t>(result.differing_size())),
                  result.summary(), "\n");
  return out;
}

nlohmann::ordered_json MeasuredJson(const BisectMeasured& m, size_t differing) {
  nlohmann::ordered_json out = {
      {"index", m.mix.index()},
      {"round", m.mix.round()},
      {"mix", BisectMixLabel(m.mix, differing)},
      {"from_bad", std::vector<std::string>(m.mix.from_bad().begin(), m.mix.from_bad().end())},
      {"settings",
       std::map<std::string, std::string>(m.mix.settings().begin(), m.mix.settings().end())},
      {"sweep_id", m.sweep_id},
      {"worker", m.worker},
      {"median_step_s", MedianStepSeconds(m.step_seconds)},
      {"step_seconds", m.step_seconds}};
  if (!m.error.empty()) out["error"] = m.error;
  return out;
}

std::string BisectJson(const v1::BisectResponse& result,
                       const std::vector<BisectMeasured>& measured) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(result, &text, options);
  nlohmann::ordered_json json;
  json["result"] = status.ok() ? nlohmann::ordered_json::parse(text)
                               : nlohmann::ordered_json{{"error", std::string(status.message())}};
  json["measurements"] = nlohmann::ordered_json::array();
  for (const BisectMeasured& m : measured) {
    json["measurements"].push_back(MeasuredJson(m, static_cast<size_t>(result.differing_size())));
  }
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string FormatBisectReport(const v1::BisectResponse& result,
                               const std::vector<BisectMeasured>& measured,
                               const v1::BisectRequest& request, OutputFormat format) {
  return format == OutputFormat::kJson ? BisectJson(result, measured)
                                       : BisectTable(result, measured, request);
}

}  // namespace paradnn::client
