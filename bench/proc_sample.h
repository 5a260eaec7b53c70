// /proc figures of a process the benches watch (the coordinator, themselves).
#ifndef PARADNN_BENCH_PROC_SAMPLE_H_
#define PARADNN_BENCH_PROC_SAMPLE_H_

#include <sys/types.h>

namespace paradnn::bench {

struct ProcSample {
  double rss_mb = 0;
  double rss_anon_mb = 0;  // heap, stacks: what the process allocated
  double rss_file_mb = 0;  // file pages mapped in (SQLite's memory map of the database)
  double cpu_seconds = 0;  // utime + stime
};

// /proc/PID/status and /proc/PID/stat now; zeros for what cannot be read.
ProcSample ReadProc(pid_t pid);
// The 1-minute load average.
double LoadAverage1();

}  // namespace paradnn::bench

#endif  // PARADNN_BENCH_PROC_SAMPLE_H_
