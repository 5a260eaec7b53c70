#include "client/presets.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/sweep_file.h"

namespace paradnn::client {
namespace internal {
// Defined in the generated embedded_presets.cc (client/CMakeLists.txt).
extern const Preset kEmbeddedPresets[];
extern const size_t kEmbeddedPresetCount;
}  // namespace internal

absl::Span<const Preset> Presets() {
  return absl::MakeConstSpan(internal::kEmbeddedPresets, internal::kEmbeddedPresetCount);
}

const Preset* FindPreset(absl::string_view name) {
  for (const Preset& preset : Presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

std::string AllowedPresets() {
  std::vector<absl::string_view> names;
  for (const Preset& preset : Presets()) names.push_back(preset.name);
  return absl::StrJoin(names, "|");
}

std::string PresetSummary(const Preset& preset) {
  std::vector<absl::string_view> words;
  for (absl::string_view line : absl::StrSplit(preset.text, '\n')) {
    if (!absl::ConsumePrefix(&line, "#")) break;
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) words.push_back(line);
  }
  std::string comment = absl::StrJoin(words, " ");
  // The first sentence: up to a period that ends a word.
  for (size_t i = 0; i < comment.size(); ++i) {
    if (comment[i] == '.' && (i + 1 == comment.size() || comment[i + 1] == ' ')) {
      return comment.substr(0, i + 1);
    }
  }
  return comment;
}

absl::StatusOr<v1::SweepSpec> LoadPreset(absl::string_view name, int64_t max_jobs) {
  const Preset* preset = FindPreset(name);
  if (preset == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--preset: '", name,
                                                   "' is not a preset; one of ", AllowedPresets(),
                                                   " (paradnn presets lists them)"));
  }
  return ParseSweepText(preset->text, absl::StrCat("preset ", preset->name), max_jobs);
}

}  // namespace paradnn::client
