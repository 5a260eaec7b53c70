#include "common/framing.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace paradnn::common {
namespace {

void PutLength(uint32_t n, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

uint32_t GetLength(const char* in) {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return n;
}

// Reads exactly `size` bytes. Returns the number read (< size only at EOF).
absl::StatusOr<size_t> ReadFully(int fd, char* out, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, out + got, size - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("read: ", std::strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  return got;
}

}  // namespace

std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {  // the streams write into `bytes` until they are gone
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

std::string EncodeFrame(const google::protobuf::MessageLite& message) {
  std::string payload = message.SerializeAsString();
  std::string frame(4, '\0');
  PutLength(static_cast<uint32_t>(payload.size()), frame.data());
  frame += payload;
  return frame;
}

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  const std::string frame = EncodeFrame(message);
  size_t sent = 0;
  while (sent < frame.size()) {
    ssize_t n = ::write(fd, frame.data() + sent, frame.size() - sent);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("write: ", std::strerror(errno)));
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ReadFrame(int fd, google::protobuf::MessageLite* message) {
  char header[4];
  absl::StatusOr<size_t> got = ReadFully(fd, header, 4);
  if (!got.ok()) return got.status();
  if (*got == 0) return false;
  if (*got < 4) return absl::DataLossError("truncated frame header");
  const uint32_t length = GetLength(header);
  if (length > kMaxFrameBytes) {
    return absl::DataLossError(
        absl::StrCat("frame of ", length, " bytes exceeds the ", kMaxFrameBytes, "-byte limit"));
  }
  std::string payload(length, '\0');
  got = ReadFully(fd, payload.data(), length);
  if (!got.ok()) return got.status();
  if (*got < length) return absl::DataLossError("truncated frame payload");
  if (!message->ParseFromString(payload))
    return absl::DataLossError("frame payload does not parse");
  return true;
}

absl::Status FrameDecoder::Append(const char* data, size_t size) {
  if (broken_) return absl::DataLossError("frame stream already corrupt");
  buffer_.append(data, size);
  while (buffer_.size() >= 4) {
    const uint32_t length = GetLength(buffer_.data());
    if (length > kMaxFrameBytes) {
      broken_ = true;
      return absl::DataLossError(absl::StrCat("frame of ", length, " bytes exceeds the limit"));
    }
    if (buffer_.size() < 4 + static_cast<size_t>(length)) break;
    ready_.push_back(buffer_.substr(4, length));
    buffer_.erase(0, 4 + static_cast<size_t>(length));
  }
  return absl::OkStatus();
}

bool FrameDecoder::Next(std::string* payload) {
  if (ready_.empty()) return false;
  *payload = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

}  // namespace paradnn::common
