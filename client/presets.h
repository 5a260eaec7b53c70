// Presets: sweep files that ship inside the `paradnn` binary, so that
// `paradnn submit --preset paper-fc` works from any directory. Each preset
// is a YAML file in the source tree (examples/quick.yaml and
// examples/presets/*.yaml); the build embeds their bytes (client/
// CMakeLists.txt), and a test checks that the embedded text equals the files.
//
// All functions are thread-safe.
#ifndef PARADNN_CLIENT_PRESETS_H_
#define PARADNN_CLIENT_PRESETS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

struct Preset {
  absl::string_view name;  // "paper-fc" (the file's stem and its `name:`)
  absl::string_view path;  // "examples/presets/paper-fc.yaml", relative to the source tree
  absl::string_view text;  // the YAML, as in the file
};

// Every preset, in the order `paradnn presets` lists them.
absl::Span<const Preset> Presets();

// The preset called `name`, or nullptr.
const Preset* FindPreset(absl::string_view name);

// Preset names joined with '|', for errors and help.
std::string AllowedPresets();

// The first sentence of the comment the preset's file starts with (its
// description), or "" when it starts without a comment.
std::string PresetSummary(const Preset& preset);

// Parses and validates preset `name` as a sweep file named "preset NAME"
// (client/sweep_file.h) with a cap of `max_jobs` configurations.
// InvalidArgument naming --preset and the allowed names for an unknown name.
absl::StatusOr<v1::SweepSpec> LoadPreset(absl::string_view name, int64_t max_jobs);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_PRESETS_H_
