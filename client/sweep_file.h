// Sweep files: YAML as documented in docs/sweep-files.md, read into a
// v1::SweepSpec and validated with model::ValidateSweep before anything is
// sent to a coordinator. Categorical options (block_fn, cell, ...) may be
// written among `params` or under a top-level `options` mapping; either way
// they land in SweepSpec.options (the family's schema decides which keys
// are options) and errors name them "options.KEY".
//
// Every error is InvalidArgument of the form "SOURCE:LINE: FIELD: what is
// wrong and what is allowed", e.g.
//   quick.yaml:7: params.node.min: 'abc' is not an integer
// LINE is 1-based; it is left out only when no line can be named (a missing
// required parameter is reported at its parent's line).
#ifndef PARADNN_CLIENT_SWEEP_FILE_H_
#define PARADNN_CLIENT_SWEEP_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// Files larger than this are refused before parsing.
inline constexpr size_t kMaxSweepFileBytes = 1 << 20;

// Parses `text` (named `source` in errors) into a SweepSpec, keeps the text
// in source_text, and validates it with a cap of `max_jobs` configurations
// (<= 0: model::kDefaultMaxJobs). The device defaults to "cpu".
absl::StatusOr<v1::SweepSpec> ParseSweepText(absl::string_view text, absl::string_view source,
                                             int64_t max_jobs);

// Reads `path` ("-" reads standard input) and parses it as ParseSweepText,
// naming the file by `path` in errors.
absl::StatusOr<v1::SweepSpec> ReadSweepFile(const std::string& path, int64_t max_jobs);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_SWEEP_FILE_H_
