#include "worker/runner/gloo_device_nice.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::runner {

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

std::optional<int> GlooDeviceNice() {
  const char* text = std::getenv(kGlooDeviceNiceEnv);
  int nice = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &nice) || nice < 0 || nice > 19) {
    return std::nullopt;
  }
  return nice;
}

std::string ReniceNewThreads(const std::vector<int>& before) {
  const std::optional<int> nice = GlooDeviceNice();
  if (!nice.has_value()) return "";
  std::vector<int> reniced;
  for (int tid : ThreadIds()) {
    if (std::binary_search(before.begin(), before.end(), tid)) continue;
    // Linux applies PRIO_PROCESS with a thread id to that thread alone.
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), *nice) == 0) reniced.push_back(tid);
  }
  return absl::StrCat(kGlooDeviceNiceEnv, "=", *nice, ": Gloo device thread(s) ",
                      reniced.empty() ? "none found" : absl::StrJoin(reniced, ","), " at nice ",
                      *nice);
}

}  // namespace paradnn::runner
