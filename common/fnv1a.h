// 64-bit FNV-1a, the hash of platform fingerprints (the runner's
// PlatformFingerprint, the worker's fallback platform) and of the stack
// doctor's cache keys: a stable, dependency-free hash of text, not a
// cryptographic one. Thread-safe.
#ifndef PARADNN_COMMON_FNV1A_H_
#define PARADNN_COMMON_FNV1A_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace paradnn::common {

// The 64-bit FNV-1a hash of `data`.
inline uint64_t Fnv1a64(absl::string_view data) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // the offset basis
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ULL;  // the FNV prime
  }
  return hash;
}

}  // namespace paradnn::common

#endif  // PARADNN_COMMON_FNV1A_H_
