// The text rules of a sweep: every string is UTF-8 (what protobuf can send;
// a spec read from a file was never on the wire), and user-given keys are
// echoed in errors escaped and bounded. Pure; thread-safe.
#ifndef PARADNN_MODEL_SWEEP_TEXT_H_
#define PARADNN_MODEL_SWEEP_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::model {

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points above U+10FFFF are not),
// or absl::string_view::npos when there is none.
size_t FirstNonUtf8Byte(absl::string_view text);

// A user-given key (a parameter or option name) as error messages name it:
// escaped, and cut after 64 bytes ("params.<key>..." stays short whatever
// the key).
std::string EchoKey(absl::string_view key);

// OK when every string field of `spec` is UTF-8 (torchscript.content is
// bytes), else InvalidArgument naming the field and the byte offset.
absl::Status CheckSweepUtf8(const v1::SweepSpec& spec);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_SWEEP_TEXT_H_
