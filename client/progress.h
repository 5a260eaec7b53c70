// The progress line `paradnn watch` and `paradnn local` draw while a sweep
// runs:
//   [#####.....] 7/12 done, 1 running, ok 7, failed 0  elapsed 0:42  ETA 0:30
// "done" counts finished jobs (a result, failed or cancelled); "failed" the
// finished jobs that are neither OK nor cancelled (OOM, ERROR, TIMEOUT, ...,
// and jobs given up after repeated infrastructure failures).
#ifndef PARADNN_CLIENT_PROGRESS_H_
#define PARADNN_CLIENT_PROGRESS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::client {

struct ProgressCounts {
  int64_t total = 0;
  int64_t finished = 0;
  int64_t running = 0;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;
  int64_t held = 0;       // budgeted: not chosen to measure (yet)
  int64_t predicted = 0;  // budgeted: predicted when the budget ended (in finished)
};

ProgressCounts CountProgress(const v1::SweepStatus& status);

// Where the rate of an ETA is measured from: `finished` jobs at
// `elapsed_seconds`. The zero baseline is the sweep's start.
struct EtaBaseline {
  int64_t finished = 0;
  double elapsed_seconds = 0;
};

// Seconds left at the rate since `baseline`: (elapsed - baseline elapsed) /
// (finished - baseline finished) x (total - finished); negative ("--")
// until a job has finished after the baseline.
double EstimateRemainingSeconds(const ProgressCounts& counts, double elapsed_seconds,
                                const EtaBaseline& baseline = {});

// The whole line, without a line ending. `bar_width` cells of '#'/'.'.
std::string FormatProgressLine(const v1::SweepStatus& status, double elapsed_seconds,
                               int bar_width = 10, const EtaBaseline& baseline = {});

// Draws progress on a stream. On a terminal it redraws one line in place
// ("\r" + line + erase to end of line); otherwise it writes a plain line on
// change, at most one per `min_interval_seconds`, and always the last one.
// Time is passed in so tests need no clock. Not thread-safe.
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream* out, bool terminal, double min_interval_seconds = 1.0)
      : out_(out), terminal_(terminal), min_interval_seconds_(min_interval_seconds) {}

  // Shows `status` as of `elapsed_seconds` since the sweep started; `now`
  // is any monotonic time in seconds.
  void Show(const v1::SweepStatus& status, double elapsed_seconds, double now);

  // Ends the display: writes the last line if a plain stream has not seen
  // it, and the line break a terminal needs. Idempotent.
  void Finish();

 private:
  std::ostream* out_;
  bool terminal_;
  double min_interval_seconds_;
  std::string last_line_;     // last line computed
  std::string printed_line_;  // last line written (plain streams)
  double printed_at_ = -1e300;
  bool drawn_ = false;  // a terminal line is on screen
  // Set at the first status with a finished job: the start-up, the first
  // calibration and a resumed sweep's earlier jobs stay out of the ETA.
  std::optional<EtaBaseline> baseline_;
};

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_PROGRESS_H_
