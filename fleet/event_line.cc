#include "fleet/event_line.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/framing.h"

namespace paradnn::fleet {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxJobChars = 256;
constexpr size_t kMaxAttributeChars = 256;
constexpr size_t kMaxDeviceKindChars = 64;
constexpr size_t kMaxReasonChars = 4096;

// The fields each kind carries besides v, job and event (and time or
// start/end).
const std::map<std::string, std::set<std::string>>& KindFields() {
  static const auto* kinds = new std::map<std::string, std::set<std::string>>{
      {"submitted", {"framework", "model", "workload", "size", "precision", "model_params"}},
      {"requested", {"device_kind", "devices"}},
      {"granted", {"devices"}},
      {"released", {"devices"}},
      {"started", {}},
      {"preempted", {}},
      {"failed", {"reason"}},
      {"ended", {"status"}},
      {"init", {}},
      {"compile", {}},
      {"data_wait", {}},
      {"step", {"step", "examples", "flops", "bytes"}},
      {"checkpoint_save", {"step"}},
      {"checkpoint_restore", {"step"}},
  };
  return *kinds;
}

absl::Status Bad(absl::string_view field, absl::string_view what, absl::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what, "; allowed: ", allowed));
}

std::string Shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 64 ? text.substr(0, 61) + "..." : text;
}

// Code points of UTF-8 `text`, and whether it holds a control character
// (category Cc: U+0000-U+001F, U+007F-U+009F).
size_t CodePoints(const std::string& text, bool* has_control) {
  size_t count = 0;
  *has_control = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte & 0xC0) != 0x80) ++count;
    if (byte < 0x20 || byte == 0x7F) *has_control = true;
    if (byte == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) *has_control = true;
    }
  }
  return count;
}

absl::StatusOr<std::string> StringField(const Json& line, const std::string& field,
                                        size_t min_chars, size_t max_chars) {
  const std::string allowed =
      absl::StrCat("a string of ", min_chars, "-", max_chars, " characters, no control characters");
  const Json& value = line.at(field);
  if (!value.is_string())
    return Bad(field, absl::StrCat(Shown(value), " is not a string"), allowed);
  const std::string text = value.get<std::string>();
  bool control = false;
  const size_t chars = CodePoints(text, &control);
  if (control) return Bad(field, "holds a control character", allowed);
  if (chars < min_chars || chars > max_chars) {
    return Bad(field, absl::StrCat("has ", chars, " characters"), allowed);
  }
  return text;
}

absl::StatusOr<int64_t> IntegerField(const Json& line, const std::string& field, int64_t min) {
  const std::string allowed = absl::StrCat("an integer >= ", min, " (no fraction or exponent)");
  const Json& value = line.at(field);
  if (!value.is_number_integer()) {
    return Bad(field, absl::StrCat(Shown(value), " is not an integer"), allowed);
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return Bad(field, absl::StrCat(Shown(value), " is too large"), allowed);
  }
  const int64_t n = value.get<int64_t>();
  if (n < min) return Bad(field, absl::StrCat(n, " is below ", min), allowed);
  return n;
}

absl::StatusOr<double> NumberField(const Json& line, const std::string& field) {
  const Json& value = line.at(field);
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
    return Bad(field, absl::StrCat(Shown(value), " is not a finite number >= 0"),
               "a finite number >= 0");
  }
  return value.get<double>();
}

absl::Status ReadTimes(const Json& line, v1::TrainingEvent* event) {
  if (!IsSpanEvent(event->event())) {
    if (!line.contains("time")) return Bad("time", "missing", "Unix seconds, a number >= 0");
    absl::StatusOr<double> time = NumberField(line, "time");
    if (!time.ok()) return time.status();
    event->set_time(*time);
    return absl::OkStatus();
  }
  for (const char* field : {"start", "end"}) {
    if (!line.contains(field)) {
      return Bad(field, "missing",
                 absl::StrCat("Unix seconds; a ", event->event(), " is a span with start and end"));
    }
  }
  absl::StatusOr<double> start = NumberField(line, "start");
  if (!start.ok()) return start.status();
  absl::StatusOr<double> end = NumberField(line, "end");
  if (!end.ok()) return end.status();
  if (*end < *start) {
    return Bad("end", absl::StrFormat("%.6f is before start %.6f", *end, *start), "end >= start");
  }
  event->set_start(*start);
  event->set_end(*end);
  return absl::OkStatus();
}

absl::Status ReadSubmitted(const Json& line, v1::TrainingEvent* event) {
  for (const char* field : {"framework", "model", "workload", "size", "precision"}) {
    if (!line.contains(field)) continue;
    absl::StatusOr<std::string> text = StringField(line, field, 0, kMaxAttributeChars);
    if (!text.ok()) return text.status();
    if (!text->empty()) (*event->mutable_attributes())[field] = *text;
  }
  if (!line.contains("model_params")) return absl::OkStatus();
  const Json& params = line.at("model_params");
  if (!params.is_object()) {
    return Bad("model_params", absl::StrCat(Shown(params), " is not an object"),
               "an object of finite numbers >= 0, e.g. {\"layer\": 4, \"batch\": 64}");
  }
  for (const auto& [name, value] : params.items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      return Bad(absl::StrCat("model_params.", name),
                 absl::StrCat(Shown(value), " is not a finite number >= 0"),
                 "a finite number >= 0");
    }
    (*event->mutable_model_params())[name] = value.get<double>();
  }
  return absl::OkStatus();
}

absl::Status ReadStep(const Json& line, v1::TrainingEvent* event) {
  if (!line.contains("step")) {
    return Bad("step", "missing", event->event() == "step" ? "an integer >= 1" : "an integer >= 0");
  }
  absl::StatusOr<int64_t> step = IntegerField(line, "step", event->event() == "step" ? 1 : 0);
  if (!step.ok()) return step.status();
  event->set_step(*step);
  if (event->event() != "step") return absl::OkStatus();
  if (!line.contains("examples")) return Bad("examples", "missing", "an integer >= 0");
  absl::StatusOr<int64_t> examples = IntegerField(line, "examples", 0);
  if (!examples.ok()) return examples.status();
  event->set_examples(*examples);
  for (const char* field : {"flops", "bytes"}) {
    if (!line.contains(field)) continue;
    absl::StatusOr<double> value = NumberField(line, field);
    if (!value.ok()) return value.status();
    field == std::string("flops") ? event->set_flops(*value) : event->set_bytes(*value);
  }
  return absl::OkStatus();
}

// The kind's own fields.
absl::Status ReadKindFields(const Json& line, v1::TrainingEvent* event) {
  const std::string& kind = event->event();
  if (kind == "submitted") return ReadSubmitted(line, event);
  if (kind == "step" || kind == "checkpoint_save" || kind == "checkpoint_restore") {
    return ReadStep(line, event);
  }
  if (kind == "requested") {
    if (!line.contains("device_kind")) return Bad("device_kind", "missing", "a string of 1-64");
    absl::StatusOr<std::string> device_kind =
        StringField(line, "device_kind", 1, kMaxDeviceKindChars);
    if (!device_kind.ok()) return device_kind.status();
    event->set_device_kind(*device_kind);
  }
  if (kind == "requested" || kind == "granted" || kind == "released") {
    if (!line.contains("devices")) return Bad("devices", "missing", "an integer >= 1");
    absl::StatusOr<int64_t> devices = IntegerField(line, "devices", 1);
    if (!devices.ok()) return devices.status();
    if (*devices > INT32_MAX) return Bad("devices", "is too large", "an integer >= 1");
    event->set_devices(static_cast<int32_t>(*devices));
  }
  if (kind == "failed" && line.contains("reason")) {
    absl::StatusOr<std::string> reason = StringField(line, "reason", 0, kMaxReasonChars);
    if (!reason.ok()) return reason.status();
    event->set_reason(*reason);
  }
  if (kind == "ended") {
    static const std::set<std::string> kStatuses = {"completed", "failed", "cancelled",
                                                    "preempted"};
    const std::string allowed = "completed, failed, cancelled or preempted";
    if (!line.contains("status")) return Bad("status", "missing", allowed);
    const Json& status = line.at("status");
    if (!status.is_string() || kStatuses.count(status.get<std::string>()) == 0) {
      return Bad("status", absl::StrCat(Shown(status), " is not a status"), allowed);
    }
    event->set_status(status.get<std::string>());
  }
  return absl::OkStatus();
}

}  // namespace

bool IsSpanEvent(absl::string_view kind) {
  return kind == "init" || kind == "compile" || kind == "data_wait" || kind == "step" ||
         kind == "checkpoint_save" || kind == "checkpoint_restore";
}

double EventTime(const v1::TrainingEvent& event) {
  return IsSpanEvent(event.event()) ? event.start() : event.time();
}

absl::StatusOr<v1::TrainingEvent> ParseEventLine(absl::string_view text) {
  const Json line = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (line.is_discarded()) {
    return Bad("line", "is not JSON (cut off, or not one object per line)",
               "one JSON object per line");
  }
  if (!line.is_object()) return Bad("line", "is not a JSON object", "one JSON object per line");
  if (!line.contains("v")) return Bad("v", "missing", "1");
  if (!line.at("v").is_number_integer() || line.at("v").get<int64_t>() != kEventFormatVersion) {
    return Bad("v", absl::StrCat(Shown(line.at("v")), " is not a version this reads"), "1");
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, fields] : KindFields()) kinds.push_back(kind);
  const std::string kind_list = absl::StrJoin(kinds, ", ");
  if (!line.contains("event")) return Bad("event", "missing", kind_list);
  const Json& kind_value = line.at("event");
  const auto kind = kind_value.is_string() ? KindFields().find(kind_value.get<std::string>())
                                           : KindFields().end();
  if (kind == KindFields().end()) {
    return Bad("event", absl::StrCat(Shown(kind_value), " is not an event kind"), kind_list);
  }
  v1::TrainingEvent event;
  event.set_event(kind->first);
  if (!line.contains("job")) return Bad("job", "missing", "a string of 1-256 characters");
  absl::StatusOr<std::string> job = StringField(line, "job", 1, kMaxJobChars);
  if (!job.ok()) return job.status();
  event.set_job(*job);

  std::set<std::string> allowed = kind->second;
  allowed.insert({"v", "job", "event"});
  if (IsSpanEvent(kind->first)) {
    allowed.insert({"start", "end"});
  } else {
    allowed.insert("time");
  }
  for (const auto& [field, value] : line.items()) {
    if (allowed.count(field) == 0) {
      return Bad(field, absl::StrCat("is not a field of ", kind->first),
                 absl::StrJoin(allowed, ", "));
    }
  }
  if (absl::Status times = ReadTimes(line, &event); !times.ok()) return times;
  if (absl::Status fields = ReadKindFields(line, &event); !fields.ok()) return fields;
  return event;
}

std::string EventKey(const v1::TrainingEvent& event) { return common::DeterministicBytes(event); }

}  // namespace paradnn::fleet
