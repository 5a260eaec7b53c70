#include "worker/runner/thread_pinning.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paradnn::runner {

std::string PinOpenMpThreads(int threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return "threads not pinned (CPU affinity unreadable)";
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
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
