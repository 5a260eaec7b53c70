// The worker's newest host-speed sentinel reading, handed to each job's
// runner so that a short job reuses it instead of reading its own. Read on
// both sides of every job, the sentinel took 18 % of the quick sweep's
// half-second jobs (its target is at most 3 %); reused while younger than
// its cost / kShare, it takes about kShare of the worker's time whatever
// the jobs' length, and a job that outlasts that age still reads it after.
#ifndef PARADNN_WORKER_SENTINEL_MEMORY_H_
#define PARADNN_WORKER_SENTINEL_MEMORY_H_

#include <chrono>
#include <optional>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::worker {

// A host whose sentinel runs this much faster than its calibration's probe
// was calibrated while busy: the calibration's roofs understate it, and
// every job would read as several times faster than "calibrated". The
// probe's own run-to-run spread is a few per cent; a busy neighbour halves
// it. The worker calibrates again when it starts and finds the host this
// much faster (worker/platform_probe.h, BusyCalibration).
inline constexpr double kBusyCalibrationRatio = 1.25;

class SentinelMemory {
 public:
  using Clock = std::chrono::steady_clock;

  // The share of worker time the sentinel is meant to take.
  static constexpr double kShare = 0.01;
  // No reading is reused for longer than this, however slow it is to take:
  // these hosts drift 10-50 % over minutes.
  static constexpr double kMaxReuseSeconds = 30;

  // Takes the readings of a finished job that was handed to its runner at
  // `started` and whose result arrived at `finished`: its "after" reading
  // (taken at its end), else a "before" of its own (taken after `started`;
  // dated then, which errs toward older). A reused "before" changes nothing.
  void Record(const v1::HostSentinel& sentinel, Clock::time_point started,
              Clock::time_point finished);

  // Whether a job's own readings ran kBusyCalibrationRatio times faster
  // than the calibration (see there).
  static bool BeatsCalibration(const v1::HostSentinel& sentinel);

  // Before the worker's first reading, what its cost is taken to be: about
  // what the first reading of a fresh runner takes on a 2-vCPU host. It
  // lets the first job skip its "after" reading when it is short.
  static constexpr double kFirstReadingSeconds = 0.1;

  // Sets `job`'s recent_sentinel (with its age at `now`; none before the
  // first reading) and sentinel_reuse_s.
  void Fill(Clock::time_point now, v1::RunnerJob* job) const;

  // How long a reading that took `reading_seconds` is reused.
  static double ReuseSeconds(double reading_seconds);

 private:
  struct Reading {
    double compute_ratio = 0;
    double latency_s = 0;
    Clock::time_point at;
  };
  std::optional<Reading> newest_;
  // Wall seconds one reading took, the last time this worker took one.
  double reading_seconds_ = kFirstReadingSeconds;
};

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_SENTINEL_MEMORY_H_
