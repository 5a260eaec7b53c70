#include "worker/runner/thread_pinning.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paradnn::runner {

namespace {

std::vector<int> AllowedCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  return cpus;
}

// "0-3,8" for {0,1,2,3,8}.
std::string CpuListText(const std::vector<int>& cpus) {
  std::vector<std::string> ranges;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    ranges.push_back(j == i ? absl::StrCat(cpus[i]) : absl::StrCat(cpus[i], "-", cpus[j]));
    i = j + 1;
  }
  return absl::StrJoin(ranges, ",");
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& list) {
  auto bad = [&list](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpus '", list, "': ", why, "; a CPU list is CPU numbers and ranges, like 0-3,8"));
  };
  std::set<int> cpus;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int first = 0;
    int last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) ||
        !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &last)) {
      return bad(absl::StrCat("'", item, "' is not a CPU number or range"));
    }
    if (first < 0 || last < first || last >= CPU_SETSIZE) {
      return bad(absl::StrCat("'", item, "' is not a range within 0..", CPU_SETSIZE - 1));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

absl::StatusOr<std::string> ConfineProcessToCpus(const std::string& list) {
  if (list.empty()) return std::string();
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(list);
  if (!cpus.ok()) return cpus.status();
  const std::vector<int> allowed = AllowedCpus();
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : *cpus) {
    if (!std::binary_search(allowed.begin(), allowed.end(), cpu)) {
      return absl::InvalidArgumentError(absl::StrCat("cpus '", list, "': CPU ", cpu,
                                                     " is not among the CPUs this runner may use (",
                                                     CpuListText(allowed), ")"));
    }
    CPU_SET(cpu, &wanted);
  }
  // sched_setaffinity sets one thread's mask: set every thread started so
  // far (logging, a zygote's leftovers), and the ones to come inherit it.
  int threads = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    int tid = 0;
    if (!absl::SimpleAtoi(task.path().filename().string(), &tid)) continue;
    if (sched_setaffinity(tid, sizeof(wanted), &wanted) == 0) ++threads;
  }
  if (sched_setaffinity(0, sizeof(wanted), &wanted) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpus '", list, "': sched_setaffinity failed: ", std::strerror(errno)));
  }
  return absl::StrCat("process confined to CPUs ", CpuListText(*cpus), " (RunnerJob.cpus: its ",
                      std::max(threads, 1), " threads so far and every later one)");
}

std::string PinOpenMpThreads(int threads) {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.empty()) return "threads not pinned (CPU affinity unreadable)";
  if (threads != static_cast<int>(cpus.size())) {
    return absl::StrCat("threads not pinned (", threads, " intra-op threads, ", cpus.size(),
                        " CPUs allowed)");
  }
  int pinned = 0;
  int team = 0;
#pragma omp parallel num_threads(threads) reduction(+ : pinned)
  {
    const int i = omp_get_thread_num();
    if (i == 0) team = omp_get_num_threads();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<size_t>(i) % cpus.size()], &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0) pinned += 1;
  }
  return absl::StrCat("OpenMP threads pinned one per CPU (", pinned, " of ", team, " on CPUs ",
                      absl::StrJoin(cpus, ","), ")");
}

}  // namespace paradnn::runner
