#include "server/result_validation.h"

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"

namespace paradnn::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string FieldPath(const std::string& parent, const FieldDescriptor* field, int index) {
  std::string path = absl::StrCat(parent, ".", field->name());
  if (index >= 0) absl::StrAppend(&path, "[", index, "]");
  return path;
}

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// Which numbers may be negative, and how far.
double LowestAllowed(const std::string& path) {
  if (path == "measurement.first_loss" || path == "measurement.last_loss") return -HUGE_VAL;
  if (path == "measurement.subnormal_gradient_fraction") return -1;
  if (path == "measurement.stats.lag1_autocorrelation") return -1;
  return 0;
}

absl::Status CheckNumber(const std::string& path, double value) {
  const double lowest = LowestAllowed(path);
  if (!std::isfinite(value) || value < lowest) {
    return Bad(path, absl::StrFormat("%g; a result's numbers must be finite and >= %g", value,
                                     lowest == -HUGE_VAL ? -1e308 : lowest));
  }
  return absl::OkStatus();
}

absl::Status CheckText(const std::string& path, const std::string& text) {
  if (text.size() > common::kMaxResultTextBytes) {
    return Bad(path, absl::StrCat(text.size(), " bytes; at most ", common::kMaxResultTextBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckScalar(const Message& message, const FieldDescriptor* field, int index,
                         const std::string& path) {
  const auto* reflection = message.GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return CheckNumber(path, repeated ? reflection->GetRepeatedDouble(message, field, index)
                                        : reflection->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return CheckNumber(path, repeated ? reflection->GetRepeatedFloat(message, field, index)
                                        : reflection->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_INT32:
      return CheckNumber(path, repeated ? reflection->GetRepeatedInt32(message, field, index)
                                        : reflection->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return CheckNumber(
          path, static_cast<double>(repeated ? reflection->GetRepeatedInt64(message, field, index)
                                             : reflection->GetInt64(message, field)));
    case FieldDescriptor::CPPTYPE_STRING:
      return CheckText(path, repeated ? reflection->GetRepeatedString(message, field, index)
                                      : reflection->GetString(message, field));
    default:
      return absl::OkStatus();  // bools, enums (the outcome is checked apart), uints
  }
}

absl::Status CheckMessage(const Message& message, const std::string& path) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (path == "measurement" && field->name() == "config") continue;
    if (field->is_map()) {
      // Map entries are messages of key and value; both are text or numbers.
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        const Message& entry = reflection->GetRepeatedMessage(message, field, i);
        if (absl::Status s = CheckMessage(entry, FieldPath(path, field, i)); !s.ok()) return s;
      }
      continue;
    }
    if (field->is_repeated()) {
      const int size = reflection->FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        const std::string item = FieldPath(path, field, i);
        absl::Status s = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                             ? CheckMessage(reflection->GetRepeatedMessage(message, field, i), item)
                             : CheckScalar(message, field, i, item);
        if (!s.ok()) return s;
      }
      continue;
    }
    const std::string item = FieldPath(path, field, -1);
    absl::Status s = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                         ? CheckMessage(reflection->GetMessage(message, field), item)
                         : CheckScalar(message, field, -1, item);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMeasurement(const v1::Measurement& m) {
  if (const size_t bytes = m.ByteSizeLong(); bytes > common::kMaxResultBytes) {
    return Bad("measurement",
               absl::StrCat(bytes, " bytes; a result may have at most ", common::kMaxResultBytes));
  }
  if (!v1::Outcome_IsValid(m.outcome()) || m.outcome() == v1::OUTCOME_UNSPECIFIED) {
    return Bad("measurement.outcome",
               absl::StrCat(static_cast<int>(m.outcome()),
                            " is not an outcome (OK = 1 ... CANCELLED = 8)"));
  }
  for (const auto& [path, count, limit] :
       {std::tuple<const char*, int, int>{"measurement.step_seconds", m.step_seconds_size(),
                                          common::kMaxResultSamples},
        {"measurement.stats.steps", m.stats().steps(), common::kMaxResultSamples},
        {"measurement.op_profile", m.op_profile_size(), common::kMaxResultProfileRows},
        {"measurement.suspect", m.suspect_size(), common::kMaxResultSuspects}}) {
    if (count > limit) {
      return Bad(path, absl::StrCat(count, " entries; a result may have at most ", limit));
    }
  }
  return CheckMessage(m, "measurement");
}

v1::Measurement RefusedMeasurement(const v1::Measurement& m, const absl::Status& why) {
  v1::Measurement refused;
  refused.set_outcome(v1::ERROR);
  refused.set_device(m.device().substr(0, 64));
  refused.set_error(absl::StrCat("refused by the coordinator: ", why.message()));
  return refused;
}

}  // namespace paradnn::server
