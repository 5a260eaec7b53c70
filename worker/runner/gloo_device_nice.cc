#include "worker/runner/gloo_device_nice.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"

namespace paradnn::runner {

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
  for (int tid : common::ThreadIds()) {
    if (std::binary_search(before.begin(), before.end(), tid)) continue;
    // Linux applies PRIO_PROCESS with a thread id to that thread alone.
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), *nice) == 0) reniced.push_back(tid);
  }
  return absl::StrCat(kGlooDeviceNiceEnv, "=", *nice, ": Gloo device thread(s) ",
                      reniced.empty() ? "none found" : absl::StrJoin(reniced, ","), " at nice ",
                      *nice);
}

}  // namespace paradnn::runner
