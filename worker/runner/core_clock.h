// The clock the cores really run at under load, measured rather than read.
// Inside a VM /proc/cpuinfo and cpufreq report only a nominal clock (an
// "AMD EPYC" guest shows 2.45 GHz while its cores run at 3.04-3.24 GHz), so a
// silicon peak computed from it lies below the matmul roof the host reaches.
// The measurement times a chain of dependent 64-bit register adds (1 cycle
// each on every x86-64 core of interest) on every logical CPU of the
// process's affinity at once, one pinned thread each, so that all cores are
// loaded as during a matmul. Torch-free; x86-64 only (elsewhere: "not
// measured").
#ifndef PARADNN_WORKER_RUNNER_CORE_CLOCK_H_
#define PARADNN_WORKER_RUNNER_CORE_CLOCK_H_

#include <string>
#include <vector>

namespace paradnn::runner {

struct CoreClockOptions {
  // Logical CPUs to load at once, one thread pinned to each; empty = every
  // CPU of the process's affinity.
  std::vector<int> cpus;
  // Each thread first runs the chain this long: cores that idled may take a
  // few milliseconds to reach their clock (on bare metal; the 2-vCPU EPYC
  // guest showed none), and the warm-up sizes the repetitions.
  double warmup_seconds = 0.03;
  // Each thread's figure is its fastest repetition of this many, each of
  // about repetition_seconds. Short ones, because on a host with every CPU
  // loaded any interruption lands in them: on the EPYC guest (timer tick
  // every millisecond) repetitions of 0.5 ms read 3.244 GHz, of 1 ms 3.22
  // (each held a tick), of 5 ms 3.22 alone and as low as 1.8 beside two
  // busy processes (0.5 ms: 3.03-3.19). A repetition during which the scheduler took the CPU away
  // (an involuntary context switch) does not count and is run again, up to
  // three times as many in all.
  int repetitions = 40;
  double repetition_seconds = 0.0005;
};

// One thread's figure.
struct CpuClock {
  int cpu = -1;               // the logical CPU it was pinned to; -1 = not pinned
  double hz = 0;              // fastest clean repetition (fastest of all if none was clean)
  int clean_repetitions = 0;  // repetitions the scheduler did not interrupt
  double first_chunk_hz = 0;  // the first chunk of the warm-up (~0.1 ms): ramp-up
};

// The result: hz = 0 when not measured, and then `method` says why.
struct CoreClock {
  double hz = 0;      // median over the threads
  double min_hz = 0;  // slowest and fastest thread
  double max_hz = 0;
  std::vector<CpuClock> cpus;
  // How, for Platform.measured_clock_method, e.g. "dependent 64-bit add
  // chain, 1 cycle each, 2 logical CPUs at once (pinned), best of 40 x 0.5
  // ms after 30 ms warm-up"; or "not measured: ...".
  std::string method;
  double seconds = 0;  // wall time of the whole measurement
};

// Measures the core clock as described at the top. Takes about
// warmup_seconds + repetitions x repetition_seconds (0.05 s by default),
// more where the scheduler interrupts the repetitions. A CPU of `options.cpus` outside the
// process's affinity gives "not measured". Thread-safe; starts and joins its own threads.
CoreClock MeasureCoreClock(const CoreClockOptions& options = {});

// The logical CPUs of the process's affinity, ascending; empty if unreadable.
std::vector<int> AffinityCpus();

// Fills hz, min_hz and max_hz of `clock` from its per-CPU figures (median:
// the mean of the middle two for an even count); 0 for none.
void SummarizeCpuClocks(CoreClock* clock);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CORE_CLOCK_H_
