// The progress line `paradnn watch` and `paradnn local` draw while a sweep
// runs:
//   [#####.....] 7/12 done, 1 running, ok 7, failed 0  elapsed 0:42  ETA 0:30
// "done" counts finished jobs (a result, failed or cancelled); "failed" the
// finished jobs that are neither OK nor cancelled (OOM, ERROR, TIMEOUT, ...,
// and jobs given up after repeated infrastructure failures).
#ifndef PARADNN_CLIENT_PROGRESS_H_
#define PARADNN_CLIENT_PROGRESS_H_

#include <cstdint>
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
};

ProgressCounts CountProgress(const v1::SweepStatus& status);

// Seconds left: elapsed / finished x (total - finished); negative ("--")
// before the first job finishes.
double EstimateRemainingSeconds(const ProgressCounts& counts, double elapsed_seconds);

// The whole line, without a line ending. `bar_width` cells of '#'/'.'.
std::string FormatProgressLine(const v1::SweepStatus& status, double elapsed_seconds,
                               int bar_width = 10);

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
};

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_PROGRESS_H_
