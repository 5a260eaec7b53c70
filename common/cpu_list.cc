#include "common/cpu_list.h"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paradnn::common {
namespace {

constexpr char kSyntax[] =
    "give CPU numbers and inclusive ranges separated by commas, e.g. 0-3,8 (CPUs 0..1023)";

// Digits only (no sign, no spaces inside): absl::SimpleAtoi would take "+1".
std::optional<int> CpuNumber(absl::string_view digits) {
  if (digits.empty() || digits.size() > 4) return std::nullopt;
  int n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > kMaxCpuNumber) return std::nullopt;
  return n;
}

absl::Status BadItem(absl::string_view field, absl::string_view text, absl::string_view item,
                     absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", text, "' is not a CPU list: ", why, " '", item, "'; ", kSyntax));
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text, absl::string_view field) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": empty; ", kSyntax));
  }
  std::vector<int> cpus;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) return BadItem(field, text, item, "an empty item");
    const size_t dash = item.find('-');
    const std::optional<int> first = CpuNumber(item.substr(0, dash));
    const std::optional<int> last =
        dash == absl::string_view::npos ? first : CpuNumber(item.substr(dash + 1));
    if (!first.has_value() || !last.has_value()) {
      return BadItem(field, text, item, "not a CPU number (0..1023) or range");
    }
    if (*first > *last) return BadItem(field, text, item, "a reversed range");
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::vector<std::string> items;
  for (size_t i = 0; i < cpus.size();) {
    size_t end = i;
    while (end + 1 < cpus.size() && cpus[end + 1] == cpus[end] + 1) ++end;
    items.push_back(end == i ? absl::StrCat(cpus[i]) : absl::StrCat(cpus[i], "-", cpus[end]));
    i = end + 1;
  }
  return absl::StrJoin(items, ",");
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<int> ThreadIds() {
  std::vector<int> ids;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    int tid = 0;
    if (absl::SimpleAtoi(task.path().filename().string(), &tid)) ids.push_back(tid);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

int UsableCpuCount() {
  const std::vector<int> allowed = AllowedCpus();
  if (!allowed.empty()) return static_cast<int>(allowed.size());
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

absl::Status CheckCpusAllowed(const std::vector<int>& cpus, const std::vector<int>& allowed,
                              absl::string_view field) {
  std::vector<int> outside;
  std::set_difference(cpus.begin(), cpus.end(), allowed.begin(), allowed.end(),
                      std::back_inserter(outside));
  if (outside.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": ", outside.size() == 1 ? "CPU " : "CPUs ", FormatCpuList(outside),
      outside.size() == 1 ? " is" : " are",
      " outside this process's affinity; allowed: ", allowed.size() == 1 ? "CPU " : "CPUs ",
      FormatCpuList(allowed), " (this process's affinity)"));
}

}  // namespace paradnn::common
