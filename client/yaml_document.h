// Loading the one YAML document of a sweep file with yaml-cpp, guarded
// against yaml-cpp 0.7's endless loop on some malformed streams. Internal to
// sweep_file (callers use client/sweep_file.h); a pure function,
// thread-safe.
#ifndef PARADNN_CLIENT_YAML_DOCUMENT_H_
#define PARADNN_CLIENT_YAML_DOCUMENT_H_

#include <yaml-cpp/yaml.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paradnn::client::internal {

// The one document of `text` (a null node for a stream without one).
// InvalidArgument naming `source` and the line: "SOURCE:LINE: YAML does not
// parse (column C): what" for a syntax error, or a second document (---).
absl::StatusOr<YAML::Node> LoadOneDocument(const std::string& text, absl::string_view source);

}  // namespace paradnn::client::internal

#endif  // PARADNN_CLIENT_YAML_DOCUMENT_H_
