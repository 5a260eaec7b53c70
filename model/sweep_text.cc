#include "model/sweep_text.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "model/family.h"  // Quote

namespace paradnn::model {
namespace {

absl::Status NotUtf8(const std::string& field, absl::string_view text, size_t offset) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": byte ", offset, " of ", Quote(text), " is not UTF-8; use UTF-8 text"));
}

absl::Status CheckUtf8(const std::string& field, absl::string_view text) {
  const size_t offset = FirstNonUtf8Byte(text);
  if (offset == absl::string_view::npos) return absl::OkStatus();
  return NotUtf8(field, text, offset);
}

absl::Status CheckUtf8List(const std::string& field,
                           const google::protobuf::RepeatedPtrField<std::string>& list) {
  for (int i = 0; i < list.size(); ++i) {
    if (absl::Status s = CheckUtf8(absl::StrCat(field, "[", i, "]"), list[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A map of names to lists of text (options, stack): every key, then every
// value of its list, named "MAP.KEY[i]".
template <typename Map>
absl::Status CheckUtf8ListMap(const std::string& map_name, const Map& map) {
  for (const auto& entry : map) {
    if (const size_t offset = FirstNonUtf8Byte(entry.first); offset != absl::string_view::npos) {
      return NotUtf8(map_name, entry.first, offset);
    }
    if (absl::Status s =
            CheckUtf8List(absl::StrCat(map_name, ".", EchoKey(entry.first)), entry.second.values());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTensorUtf8(const v1::TensorSpec& tensor, const std::string& path) {
  if (absl::Status s = CheckUtf8(path + ".name", tensor.name()); !s.ok()) return s;
  return CheckUtf8(path + ".dtype", tensor.dtype());
}

}  // namespace

absl::Status CheckSweepUtf8(const v1::SweepSpec& spec) {
  for (const auto& [field, text] :
       {std::pair<const char*, const std::string*>{"name", &spec.name()},
        {"family", &spec.family()},
        {"device", &spec.device()},
        {"source_text", &spec.source_text()},
        {"torchscript.sha256", &spec.torchscript().sha256()},
        {"torchscript.file_name", &spec.torchscript().file_name()},
        {"torchscript.loss", &spec.torchscript().loss()}}) {
    if (absl::Status s = CheckUtf8(field, *text); !s.ok()) return s;
  }
  for (const auto& entry : spec.params()) {
    if (const size_t offset = FirstNonUtf8Byte(entry.first); offset != absl::string_view::npos) {
      return NotUtf8("params", entry.first, offset);
    }
  }
  if (absl::Status s = CheckUtf8ListMap("options", spec.options()); !s.ok()) return s;
  if (absl::Status s = CheckUtf8ListMap("stack", spec.stack()); !s.ok()) return s;
  if (absl::Status s = CheckUtf8List("precision", spec.precision()); !s.ok()) return s;
  if (absl::Status s = CheckUtf8List("optimizer", spec.optimizer()); !s.ok()) return s;
  for (int i = 0; i < spec.torchscript().inputs_size(); ++i) {
    if (absl::Status s = CheckTensorUtf8(spec.torchscript().inputs(i),
                                         absl::StrCat("torchscript.inputs[", i, "]"));
        !s.ok()) {
      return s;
    }
  }
  return CheckTensorUtf8(spec.torchscript().target(), "torchscript.target");
}

size_t FirstNonUtf8Byte(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range of its second byte (which
    // rules out overlong forms, surrogates and code points above U+10FFFF).
    size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      if (c == 0xe0) low = 0xa0;
      if (c == 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      if (c == 0xf0) low = 0x90;
      if (c == 0xf4) high = 0x8f;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    if (byte(i + 1) < low || byte(i + 1) > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return i;
    }
    i += length;
  }
  return absl::string_view::npos;
}

std::string EchoKey(absl::string_view key) {
  constexpr size_t kMaxEcho = 64;
  if (key.size() > kMaxEcho) return absl::StrCat(absl::CHexEscape(key.substr(0, kMaxEcho)), "...");
  return absl::CHexEscape(key);
}

}  // namespace paradnn::model
