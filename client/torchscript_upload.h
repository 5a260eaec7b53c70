// The `torchscript:` section of a sweep file (family torchscript, "bring
// your own model"), as docs/sweep-files.md describes it:
//
//   torchscript:
//     file: mlp.pt            # relative to the sweep file
//     sha256: 3f1c...         # optional; alone, names a model the coordinator stores
//     inputs: [{name: x, shape: [-1, 64], dtype: float32, low: -1, high: 1}]
//     loss: cross_entropy     # cross_entropy | mse | sum | output
//     target: {shape: [-1], dtype: int64, low: 0, high: 10}
//
// The model file's bytes are read into TorchScriptModel.content (the
// coordinator hashes, checks and stores them once); the rest of the message
// is validated by model::ValidateSweep.
#ifndef PARADNN_CLIENT_TORCHSCRIPT_UPLOAD_H_
#define PARADNN_CLIENT_TORCHSCRIPT_UPLOAD_H_

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// Reads `section` (the value of the top-level `torchscript` key, whose key
// is on `line`) into `model`. `source` names the sweep file in errors and
// its directory resolves a relative `file` ("<stdin>" and other non-paths
// resolve against the working directory). Each field's line is recorded in
// `lines` under its proto path ("torchscript.inputs[0].shape") so that later
// validation errors can name it.
//
// Returns InvalidArgument "SOURCE:LINE: FIELD: what is wrong" for an unknown
// key, a model file that cannot be read or is larger than
// model::kMaxTorchScriptBytes, a shape that is not a list of positive
// integers or -1, an unknown dtype or loss, or a value of the wrong kind.
absl::Status ReadTorchScriptSection(const YAML::Node& section, int line, absl::string_view source,
                                    v1::TorchScriptModel* model, std::map<std::string, int>* lines);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_TORCHSCRIPT_UPLOAD_H_
