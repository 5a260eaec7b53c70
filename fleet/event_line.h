// One line of the training-job events format (docs/fleet-events.md), read
// and checked: every field the line's kind allows, of the type and range
// the format says, and nothing else. Pure; no I/O.
#ifndef PARADNN_FLEET_EVENT_LINE_H_
#define PARADNN_FLEET_EVENT_LINE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/fleet_events.pb.h"

namespace paradnn::fleet {

// The format version this reads.
inline constexpr int kEventFormatVersion = 1;

// The event of one JSON object `line` (no trailing newline needed).
// InvalidArgument "<field>: <what is wrong>; allowed: <what is>" for a line
// that is not a JSON object, a missing or unknown field, a value of the
// wrong type or out of range, a span that ends before it starts.
absl::StatusOr<v1::TrainingEvent> ParseEventLine(absl::string_view line);

// Whether `kind` is a span event (start, end) rather than a point (time).
bool IsSpanEvent(absl::string_view kind);

// The time an event is ordered by: its time, or its span's start.
double EventTime(const v1::TrainingEvent& event);

// A key equal for two events exactly when every field is: the intake's
// notion of "the same event" (deterministic serialization).
std::string EventKey(const v1::TrainingEvent& event);

}  // namespace paradnn::fleet

#endif  // PARADNN_FLEET_EVENT_LINE_H_
