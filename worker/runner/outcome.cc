#include "worker/runner/outcome.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace paradnn::runner {

v1::Outcome ClassifyModelError(absl::string_view message) {
  const std::string lower = absl::AsciiStrToLower(message);
  constexpr std::array<absl::string_view, 7> kOom = {
      "not enough memory", "out of memory",     "can't allocate memory", "cannot allocate memory",
      "bad_alloc",         "allocation failed", "failed to allocate"};
  constexpr std::array<absl::string_view, 6> kUnsupported = {
      "not implemented for", "not supported", "only support",
      "notimplementederror", "could not run", "unsupported"};
  for (absl::string_view needle : kOom) {
    if (absl::StrContains(lower, needle)) return v1::OOM;
  }
  for (absl::string_view needle : kUnsupported) {
    if (absl::StrContains(lower, needle)) return v1::UNSUPPORTED;
  }
  return v1::ERROR;
}

std::string FirstErrorLine(absl::string_view message) {
  absl::string_view line = message;
  const size_t newline = line.find('\n');
  if (newline != absl::string_view::npos) line = line.substr(0, newline);
  const size_t raised = line.find("Exception raised from");
  if (raised != absl::string_view::npos) line = line.substr(0, raised);
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace paradnn::runner
