// Length-prefixed protobuf frames, the runner <-> worker wire format:
// a 4-byte little-endian payload length, then the serialized message.
#ifndef PARADNN_COMMON_FRAMING_H_
#define PARADNN_COMMON_FRAMING_H_

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <deque>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paradnn::common {

// Frames larger than this are refused as corrupt input. A RunnerJob of
// family torchscript carries a whole model file (up to 1 GiB, the
// coordinator's largest --max-model-bytes) plus the job.
inline constexpr uint32_t kMaxFrameBytes = (1u << 30) + (16u << 20);

// `message` serialized deterministically (map entries in key order): equal
// messages give equal bytes, so the bytes can serve as a key.
std::string DeterministicBytes(const google::protobuf::MessageLite& message);

// Returns the frame (header + payload) for `message`.
std::string EncodeFrame(const google::protobuf::MessageLite& message);

// Writes one frame to `fd`, retrying short writes and EINTR.
absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// Reads one frame from `fd` into `message`. Returns false at a clean end of
// stream before any byte of a frame; an error for a truncated or oversized
// frame or bytes that do not parse.
absl::StatusOr<bool> ReadFrame(int fd, google::protobuf::MessageLite* message);

// Incremental decoder for asynchronous reads: feed bytes as they arrive and
// take whole frames out. Not thread-safe.
class FrameDecoder {
 public:
  // Appends bytes. Returns an error (and stays broken) on an oversized frame.
  absl::Status Append(const char* data, size_t size);
  // Moves the next complete payload into `payload`; false if none is ready.
  bool Next(std::string* payload);
  // Bytes received that do not yet form a whole frame.
  size_t buffered_bytes() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::deque<std::string> ready_;
  bool broken_ = false;
};

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_FRAMING_H_
