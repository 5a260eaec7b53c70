// What the coordinator checks of an uploaded TorchScript model before it
// stores it (family torchscript, docs/models.md): that it is a TorchScript
// archive at all, and that loading it cannot inflate past a limit. A random
// file was accepted and failed in every job; a 1 MB zip holding a 1 GiB
// constants.pkl was inflated by every runner.
#ifndef PARADNN_SERVER_TORCHSCRIPT_ARCHIVE_H_
#define PARADNN_SERVER_TORCHSCRIPT_ARCHIVE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paradnn::server {

// Most entries an archive may hold (a large model has a few thousand).
inline constexpr int64_t kMaxTorchScriptEntries = 100000;

// OK when `content` is a zip archive (as torch.jit.save writes) whose
// entries all sit in one top-level folder holding `data.pkl`, `version`
// (or `.data/version`) and a `code/` folder, at most kMaxTorchScriptEntries
// of them, whose sizes once inflated add up to at most
// `max_uncompressed_bytes`. Otherwise InvalidArgument naming
// torchscript.content and what is wrong. The sizes are the archive's own
// (its central directory): LibTorch's reader inflates an entry to the size
// the directory states and fails on a mismatch, so they bound what a
// runner allocates.
absl::Status CheckTorchScriptArchive(absl::string_view content, int64_t max_uncompressed_bytes);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_TORCHSCRIPT_ARCHIVE_H_
