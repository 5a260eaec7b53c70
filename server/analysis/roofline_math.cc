// The roofline's arithmetic (analysis_math.h, "Roofline"): the bandwidth
// roofs of a platform from its measured bandwidth sweep and cache sizes,
// the bytes a profiled operator's input shapes move, and the attainable
// FLOP/s at an intensity.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "server/analysis/analysis_math.h"

namespace paradnn::server::analysis {

namespace {

// Bytes of one size like "48 KiB", "1 MiB" or "48K"; nullopt when unreadable.
std::optional<double> ParseSize(absl::string_view number, absl::string_view unit) {
  // The number may carry its unit ("48K").
  size_t digits = 0;
  while (digits < number.size() &&
         (std::isdigit(static_cast<unsigned char>(number[digits])) || number[digits] == '.')) {
    ++digits;
  }
  std::optional<double> value = ParseNumber(number.substr(0, digits));
  if (!value.has_value()) return std::nullopt;
  if (digits < number.size()) unit = number.substr(digits);
  const std::string u = absl::AsciiStrToLower(unit);
  double scale = 0;
  if (u.empty() || u == "b") {
    scale = 1;
  } else if (u == "k" || u == "kb" || u == "kib") {
    scale = 1024.0;
  } else if (u == "m" || u == "mb" || u == "mib") {
    scale = 1024.0 * 1024;
  } else if (u == "g" || u == "gb" || u == "gib") {
    scale = 1024.0 * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  return *value * scale;
}

// "1 MiB", "48 KiB", "1536 KiB": the largest binary unit that divides evenly.
std::string FormatSize(double bytes) {
  const std::pair<double, const char*> units[] = {
      {1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}, {1024.0, "KiB"}};
  for (const auto& [scale, name] : units) {
    if (bytes >= scale && std::fmod(bytes, scale) == 0)
      return absl::StrCat(bytes / scale, " ", name);
  }
  return absl::StrCat(bytes, " B");
}

// The cache levels of `text` ("L1d 48 KiB, L2 1 MiB, L3 32 MiB") that roofs
// are drawn for, in order L1d, L2, L3; unreadable or other entries (L1i)
// are skipped.
std::vector<std::pair<std::string, double>> ParseCacheSizes(const std::string& text) {
  std::map<std::string, double> found;
  for (absl::string_view entry : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> tokens = absl::StrSplit(entry, ' ', absl::SkipWhitespace());
    if (tokens.size() < 2) continue;
    std::optional<double> bytes = ParseSize(tokens[1], tokens.size() > 2 ? tokens[2] : "");
    if (bytes.has_value() && *bytes > 0) found[absl::AsciiStrToLower(tokens[0])] = *bytes;
  }
  std::vector<std::pair<std::string, double>> levels;
  for (const char* name : {"L1d", "L2", "L3"}) {
    auto it = found.find(absl::AsciiStrToLower(name));
    if (it != found.end()) levels.emplace_back(name, it->second);
  }
  return levels;
}

}  // namespace

std::vector<v1::BandwidthRoof> BandwidthRoofs(const v1::Platform& platform) {
  std::vector<const v1::BandwidthPoint*> points;
  for (const char* kernel : {"copy", "triad"}) {
    for (const v1::BandwidthPoint& p : platform.bandwidth()) {
      if (p.kernel() == kernel) points.push_back(&p);
    }
    if (!points.empty()) break;
  }
  std::vector<v1::BandwidthRoof> roofs;
  if (points.empty()) return roofs;

  // Best bandwidth over the working sets `in_band` accepts; nullopt when none.
  auto best_where = [&points](auto in_band) -> std::optional<double> {
    std::optional<double> best;
    for (const v1::BandwidthPoint* p : points) {
      if (in_band(static_cast<double>(p->bytes())) &&
          (!best.has_value() || p->bytes_per_sec() > *best)) {
        best = p->bytes_per_sec();
      }
    }
    return best;
  };
  auto add = [&roofs](std::string level, double bytes_per_sec) {
    v1::BandwidthRoof roof;
    roof.set_level(std::move(level));
    roof.set_bytes_per_sec(bytes_per_sec);
    roofs.push_back(std::move(roof));
  };

  // Each level's band starts above the previous level's size, so a working
  // set counts towards the smallest cache it fits and the plateaus differ.
  double previous = 0;
  for (const auto& [name, size] : ParseCacheSizes(platform.cache_sizes())) {
    auto in_band = [lo = previous, hi = size](double bytes) { return bytes > lo && bytes <= hi; };
    if (std::optional<double> best = best_where(in_band); best.has_value()) {
      add(absl::StrCat(name, " (", FormatSize(size), ")"), *best);
    }
    previous = std::max(previous, size);
  }
  // DRAM: well past the last cache, where it no longer helps; without known
  // sizes, the largest working set measured is the best guess.
  double dram_from = 4 * previous;
  if (previous == 0) {
    for (const v1::BandwidthPoint* p : points) {
      dram_from = std::max(dram_from, static_cast<double>(p->bytes()));
    }
  }
  auto past_caches = [dram_from](double bytes) { return bytes >= dram_from; };
  if (std::optional<double> best = best_where(past_caches); best.has_value()) {
    // Named with the working sets it was measured on, as the caches are.
    double smallest = std::numeric_limits<double>::infinity();
    for (const v1::BandwidthPoint* p : points) {
      const double bytes = static_cast<double>(p->bytes());
      if (past_caches(bytes)) smallest = std::min(smallest, bytes);
    }
    add(absl::StrCat("DRAM (≥ ", FormatSize(smallest), ")"), *best);
  }
  return roofs;
}

namespace {

// Recursive-descent reader of the profiler's shape lists. A list of numbers
// is one tensor's shape (bytes = product × element size); a list of lists
// sums its members; "[]" is a scalar or absent input and counts 0.
class ShapeReader {
 public:
  explicit ShapeReader(absl::string_view text) : text_(text) {}

  // Elements of the list at the cursor; nullopt on malformed text.
  std::optional<double> List() {
    if (!Consume('[')) return std::nullopt;
    if (Consume(']')) return 0.0;
    std::optional<double> product, sum;  // which one is set says what the list holds
    do {
      SkipSpace();
      if (Peek() == '[') {
        if (product.has_value()) return std::nullopt;  // numbers and lists mixed
        std::optional<double> inner = List();
        if (!inner.has_value()) return std::nullopt;
        sum = sum.value_or(0) + *inner;
      } else {
        if (sum.has_value()) return std::nullopt;
        std::optional<double> dim = Dim();
        if (!dim.has_value()) return std::nullopt;
        product = product.value_or(1) * *dim;
      }
    } while (Consume(','));
    if (!Consume(']')) return std::nullopt;
    return product.has_value() ? *product : *sum;
  }

  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  std::optional<double> Dim() {
    const size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    if (pos_ == start) return std::nullopt;
    return ParseNumber(text_.substr(start, pos_ - start));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

double InputBytesFromShapes(const std::string& shapes, int element_bytes) {
  ShapeReader reader(shapes);
  std::optional<double> elements = reader.List();
  if (!elements.has_value() || !reader.AtEnd()) return 0;
  return *elements * element_bytes;
}

double Attainable(double intensity, double compute_flops_per_sec, double bytes_per_sec) {
  return std::min(compute_flops_per_sec, intensity * bytes_per_sec);
}

}  // namespace paradnn::server::analysis
