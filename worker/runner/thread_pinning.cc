#include "worker/runner/thread_pinning.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"

namespace paradnn::runner {

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& list) {
  return common::ParseCpuList(list, "cpus");
}

std::vector<int> ProcessCpusAtStart() {
  const int places = omp_get_num_places();
  if (places <= 0) return common::AllowedCpus();
  std::set<int> cpus;
  for (int place = 0; place < places; ++place) {
    std::vector<int> ids(static_cast<size_t>(std::max(0, omp_get_place_num_procs(place))));
    if (!ids.empty()) omp_get_place_proc_ids(place, ids.data());
    cpus.insert(ids.begin(), ids.end());
  }
  return cpus.empty() ? common::AllowedCpus() : std::vector<int>(cpus.begin(), cpus.end());
}

absl::StatusOr<std::vector<int>> JobCpus(const std::string& list) {
  if (list.empty()) return ProcessCpusAtStart();
  return ParseCpuList(list);
}

absl::StatusOr<std::string> ConfineProcessToCpus(const std::string& list) {
  if (list.empty()) return std::string();
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(list);
  if (!cpus.ok()) return cpus.status();
  if (absl::Status allowed = common::CheckCpusAllowed(*cpus, ProcessCpusAtStart(), "cpus");
      !allowed.ok()) {
    return allowed;
  }
  absl::StatusOr<int> threads = SetProcessAffinity(*cpus);
  if (!threads.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpus '", list, "': ", threads.status().message()));
  }
  return absl::StrCat("process confined to CPUs ", common::FormatCpuList(*cpus),
                      " (RunnerJob.cpus: its ", std::max(*threads, 1),
                      " threads so far and every later one)");
}

absl::StatusOr<int> SetProcessAffinity(const std::vector<int>& cpus) {
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : cpus) CPU_SET(cpu, &wanted);
  // sched_setaffinity sets one thread's mask: set every thread started so
  // far (logging, a zygote's leftovers), and the ones to come inherit it.
  int threads = 0;
  for (int tid : common::ThreadIds()) {
    if (sched_setaffinity(tid, sizeof(wanted), &wanted) == 0) ++threads;
  }
  if (sched_setaffinity(0, sizeof(wanted), &wanted) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sched_setaffinity failed: ", std::strerror(errno)));
  }
  return threads;
}

std::string PinOpenMpThreads(int threads, bool always) {
  const std::vector<int> cpus = common::AllowedCpus();
  if (cpus.empty()) return "threads not pinned (CPU affinity unreadable)";
  if (!always && threads != static_cast<int>(cpus.size())) {
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
  const std::vector<int> used(
      cpus.begin(),
      cpus.begin() + std::min<std::ptrdiff_t>(team, static_cast<std::ptrdiff_t>(cpus.size())));
  return absl::StrCat("OpenMP threads pinned one per CPU (", pinned, " of ", team, " on CPUs ",
                      absl::StrJoin(used, ","), ")");
}

}  // namespace paradnn::runner
