#include "worker/runner/core_clock.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/cpu_list.h"

namespace paradnn::runner {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Adds per pass of the chain's loop (the .rept count below). The loop's own
// decrement and branch run beside the chain on other ALUs, so a pass costs
// kAddsPerPass cycles; 128 keeps the loop's share of the front end small.
constexpr uint64_t kAddsPerPass = 128;
// Warm-up chunks and the keep-loaded filler: 256k cycles, ~0.1 ms.
constexpr uint64_t kChunkPasses = 2000;

#if defined(__x86_64__)
constexpr bool kCanMeasure = true;

// Runs `passes` (>= 1) x kAddsPerPass dependent 64-bit adds. A register
// operand, not an immediate: Intel's Golden Cove is reported to fold small
// immediate adds at rename, running an `add $1` chain faster than one per
// cycle; a register's value is unknown at rename, so each add executes in an
// ALU after the one before it: 1 cycle on every Intel core since Core 2 and
// every AMD core since K8 (Agner Fog's instruction tables).
void AddChain(uint64_t passes) {
  uint64_t sum = 0;
  const uint64_t step = 1;
  asm volatile(
      "1:\n\t"
      ".rept 128\n\t"
      "addq %[step], %[sum]\n\t"
      ".endr\n\t"
      "decq %[passes]\n\t"
      "jnz 1b"
      : [sum] "+r"(sum), [passes] "+r"(passes)
      : [step] "r"(step)
      : "cc");
}
#else
constexpr bool kCanMeasure = false;
void AddChain(uint64_t) {}
#endif

double Seconds(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Cycles per second of `passes` that took `seconds`.
double Rate(uint64_t passes, double seconds) {
  return seconds > 0 ? static_cast<double>(passes * kAddsPerPass) / seconds : 0;
}

// The calling thread's involuntary context switches so far; -1 if unknown.
long InvoluntarySwitches() {  // NOLINT(runtime/int): rusage's type
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
  return usage.ru_nivcsw;
}

bool PinCallingThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

struct Rendezvous {
  std::atomic<int> threads{0};  // how many take part
  std::atomic<int> ready{0};
  std::atomic<int> done{0};
};

struct Warmup {
  double best_hz = 0;
  double first_hz = 0;
};

Warmup WarmUp(double seconds) {
  Warmup warmup;
  const SteadyClock::time_point start = SteadyClock::now();
  do {
    const SteadyClock::time_point t0 = SteadyClock::now();
    AddChain(kChunkPasses);
    const double hz = Rate(kChunkPasses, Seconds(t0, SteadyClock::now()));
    if (warmup.first_hz == 0) warmup.first_hz = hz;
    warmup.best_hz = std::max(warmup.best_hz, hz);
  } while (Seconds(start, SteadyClock::now()) < seconds);
  return warmup;
}

// One thread's part: pinned to `cpu` (-1: not pinned), it waits for every
// other thread, warms up, times the repetitions and keeps its core loaded
// until all are done.
CpuClock MeasureOneCpu(int cpu, const CoreClockOptions& options, Rendezvous* rendezvous) {
  CpuClock result;
  if (cpu >= 0 && PinCallingThread(cpu)) result.cpu = cpu;
  // Every core busy before any repetition is timed: an idle neighbour lets
  // a package boost higher than a matmul on all cores would see.
  rendezvous->ready.fetch_add(1);
  while (rendezvous->ready.load() < rendezvous->threads.load()) {
  }
  const Warmup warmup = WarmUp(options.warmup_seconds);
  result.first_chunk_hz = warmup.first_hz;
  const uint64_t passes = std::max<uint64_t>(
      1, static_cast<uint64_t>(options.repetition_seconds * warmup.best_hz / kAddsPerPass));
  double best_clean = 0, best_any = 0;
  for (int tries = 0;
       result.clean_repetitions < options.repetitions && tries < 3 * options.repetitions; ++tries) {
    const long switches = InvoluntarySwitches();  // NOLINT(runtime/int)
    const SteadyClock::time_point t0 = SteadyClock::now();
    AddChain(passes);
    const double hz = Rate(passes, Seconds(t0, SteadyClock::now()));
    best_any = std::max(best_any, hz);
    // A repetition the scheduler interrupted measured someone else's time.
    if (switches >= 0 && InvoluntarySwitches() == switches) {
      ++result.clean_repetitions;
      best_clean = std::max(best_clean, hz);
    }
  }
  result.hz = result.clean_repetitions > 0 ? best_clean : best_any;
  rendezvous->done.fetch_add(1);
  while (rendezvous->done.load() < rendezvous->threads.load()) AddChain(kChunkPasses);
  return result;
}

std::string Method(const CoreClockOptions& options, const std::vector<CpuClock>& cpus) {
  const bool pinned =
      std::all_of(cpus.begin(), cpus.end(), [](const CpuClock& c) { return c.cpu >= 0; });
  return absl::StrFormat(
      "dependent 64-bit add chain, 1 cycle each, %d logical CPU%s at once (%s), best of %d x "
      "%g ms after %g ms warm-up",
      cpus.size(), cpus.size() == 1 ? "" : "s", pinned ? "pinned" : "not pinned",
      options.repetitions, options.repetition_seconds * 1e3, options.warmup_seconds * 1e3);
}

// Why `options` cannot be measured on this host; "" when they can.
std::string WhyNotMeasurable(const CoreClockOptions& options, const std::vector<int>& allowed) {
  if (!kCanMeasure) return "no latency chain for this architecture (x86-64 only)";
  if (options.repetitions < 1 || !(options.repetition_seconds > 0) ||
      !(options.warmup_seconds >= 0)) {
    return "repetitions must be >= 1, repetition_seconds > 0 and warmup_seconds >= 0";
  }
  for (int cpu : options.cpus) {
    if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
      return absl::StrCat("CPU ", cpu, " is not in this process's affinity");
    }
  }
  return "";
}

}  // namespace

std::vector<int> AffinityCpus() { return common::AllowedCpus(); }

void SummarizeCpuClocks(CoreClock* clock) {
  std::vector<double> hz;
  for (const CpuClock& cpu : clock->cpus) {
    if (cpu.hz > 0) hz.push_back(cpu.hz);
  }
  clock->hz = clock->min_hz = clock->max_hz = 0;
  if (hz.empty()) return;
  std::sort(hz.begin(), hz.end());
  const size_t mid = hz.size() / 2;
  clock->hz = hz.size() % 2 == 1 ? hz[mid] : (hz[mid - 1] + hz[mid]) / 2;
  clock->min_hz = hz.front();
  clock->max_hz = hz.back();
}

CoreClock MeasureCoreClock(const CoreClockOptions& options) {
  CoreClock clock;
  const std::vector<int> allowed = AffinityCpus();
  if (std::string why = WhyNotMeasurable(options, allowed); !why.empty()) {
    clock.method = absl::StrCat("not measured: ", why);
    return clock;
  }
  std::vector<int> cpus = options.cpus.empty() ? allowed : options.cpus;
  if (cpus.empty()) cpus.push_back(-1);  // affinity unreadable: one thread, unpinned
  const SteadyClock::time_point start = SteadyClock::now();
  Rendezvous rendezvous;
  rendezvous.threads.store(static_cast<int>(cpus.size()));
  std::vector<CpuClock> results(cpus.size());
  std::vector<std::thread> threads;
  try {
    for (size_t i = 0; i < cpus.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = MeasureOneCpu(cpus[i], options, &rendezvous); });
    }
  } catch (const std::system_error&) {
    // Fewer threads than CPUs: those started must not wait for the rest.
    rendezvous.threads.store(static_cast<int>(threads.size()));
  }
  for (std::thread& thread : threads) thread.join();
  clock.cpus.assign(results.begin(), results.begin() + static_cast<long>(threads.size()));
  clock.seconds = Seconds(start, SteadyClock::now());
  SummarizeCpuClocks(&clock);
  clock.method =
      clock.hz > 0 ? Method(options, clock.cpus) : "not measured: no thread could be started";
  return clock;
}

}  // namespace paradnn::runner
