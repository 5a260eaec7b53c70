#include "worker/runner/cpu_caches.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hostfacts/host_facts.h"

namespace paradnn::runner {
namespace {

// "48K" -> 49152; 0 when unparsable.
int64_t CacheBytes(absl::string_view text) {
  const absl::string_view size = absl::StripAsciiWhitespace(text);
  if (size.empty()) return 0;
  const char unit = absl::ascii_toupper(size.back());
  const int64_t scale = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1;
  int64_t value = 0;
  if (!absl::SimpleAtoi(scale == 1 ? size : size.substr(0, size.size() - 1), &value)) return 0;
  return value * scale;
}

}  // namespace

std::string FormatCacheSizes(std::vector<CpuCache> caches) {
  auto type_rank = [](const std::string& type) {
    return type == "Data" ? 0 : type == "Instruction" ? 1 : 2;
  };
  std::stable_sort(caches.begin(), caches.end(), [&](const CpuCache& a, const CpuCache& b) {
    return a.level != b.level ? a.level < b.level : type_rank(a.type) < type_rank(b.type);
  });
  std::vector<std::string> parts;
  for (const CpuCache& cache : caches) {
    const int64_t bytes = CacheBytes(cache.size);
    if (cache.level <= 0 || bytes <= 0) continue;
    std::string shown;
    if (bytes % (int64_t{1} << 30) == 0) {
      shown = absl::StrCat(bytes >> 30, " GiB");
    } else if (bytes % (1 << 20) == 0) {
      shown = absl::StrCat(bytes >> 20, " MiB");
    } else if (bytes % (1 << 10) == 0) {
      shown = absl::StrCat(bytes >> 10, " KiB");
    } else {
      shown = absl::StrCat(bytes, " B");
    }
    const char* suffix = cache.type == "Data" ? "d" : cache.type == "Instruction" ? "i" : "";
    parts.push_back(absl::StrCat("L", cache.level, suffix, " ", shown));
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<int64_t> BandwidthWorkingSets(const std::vector<CpuCache>& caches, int cores,
                                          int64_t memory_bytes) {
  constexpr int64_t kSmallest = 32 << 10;
  int64_t last_level = 0;
  int top = 0;
  for (const CpuCache& cache : caches) {
    if (cache.type != "Instruction" && CacheBytes(cache.size) > 0) top = std::max(top, cache.level);
  }
  std::set<int64_t> sizes;
  for (const CpuCache& cache : caches) {
    if (cache.type == "Instruction") continue;
    const int64_t bytes = CacheBytes(cache.size);
    if (bytes <= 0) continue;
    last_level = std::max(last_level, bytes);
    sizes.insert(bytes / 2);
    // Levels below the last are private to a core: all threads together
    // hold cores times as much in them. The last level is shared.
    if (cores > 1 && cache.level < top) sizes.insert(bytes * cores / 2);
  }
  const int64_t largest = std::max<int64_t>(256 << 20, 8 * last_level);
  for (int64_t bytes = kSmallest; bytes <= largest; bytes *= 4) sizes.insert(bytes);
  sizes.insert(largest);
  if (last_level > 0) {
    sizes.insert(4 * last_level);
    sizes.insert(8 * last_level);
  }
  std::vector<int64_t> out;
  for (int64_t bytes : sizes) {
    if (bytes < kSmallest / 2) continue;
    if (memory_bytes > 0 && bytes > memory_bytes / 4) continue;
    out.push_back(bytes);
  }
  return out;
}

std::vector<CpuCache> ReadCpuCaches(const std::string& cache_dir) {
  std::vector<CpuCache> caches;
  // index0, index1, ... are numbered without gaps; stop at the first missing.
  for (int index = 0;; ++index) {
    const std::string dir = absl::StrCat(cache_dir, "/index", index, "/");
    const std::string level = hostfacts::ReadTextFile(dir + "level");
    if (level.empty()) break;
    CpuCache cache;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(level), &cache.level)) continue;
    cache.type = std::string(absl::StripAsciiWhitespace(hostfacts::ReadTextFile(dir + "type")));
    cache.size = std::string(absl::StripAsciiWhitespace(hostfacts::ReadTextFile(dir + "size")));
    caches.push_back(std::move(cache));
  }
  return caches;
}

}  // namespace paradnn::runner
