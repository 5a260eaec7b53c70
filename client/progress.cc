#include "client/progress.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "client/output_format.h"

namespace paradnn::client {

ProgressCounts CountProgress(const v1::SweepStatus& status) {
  ProgressCounts c;
  c.total = status.total_jobs();
  c.predicted = status.predicted_jobs();
  c.held = status.held_jobs();
  c.finished = status.done_jobs() + status.failed_jobs() + status.cancelled_jobs() + c.predicted;
  c.running = status.leased_jobs();
  c.ok = status.ok_results();
  c.cancelled = status.cancelled_jobs();
  c.failed = std::max<int64_t>(0, c.finished - c.ok - c.cancelled - c.predicted);
  return c;
}

double EstimateRemainingSeconds(const ProgressCounts& counts, double elapsed_seconds,
                                const EtaBaseline& baseline) {
  const int64_t remaining = std::max<int64_t>(0, counts.total - counts.finished);
  if (counts.finished > 0 && remaining == 0) return 0;
  const int64_t since = counts.finished - baseline.finished;
  if (since <= 0) return -1;
  return (elapsed_seconds - baseline.elapsed_seconds) / static_cast<double>(since) *
         static_cast<double>(remaining);
}

std::string FormatProgressLine(const v1::SweepStatus& status, double elapsed_seconds, int bar_width,
                               const EtaBaseline& baseline) {
  const ProgressCounts c = CountProgress(status);
  int filled = 0;
  if (c.total > 0) {
    filled = static_cast<int>(std::min<int64_t>(c.finished, c.total) * bar_width / c.total);
  }
  std::string line = absl::StrCat(
      "[", std::string(filled, '#'), std::string(bar_width - filled, '.'), "] ", c.finished, "/",
      c.total, " done, ", c.running, " running, ok ", c.ok, ", failed ", c.failed);
  if (c.cancelled > 0) absl::StrAppend(&line, ", cancelled ", c.cancelled);
  // Nothing runs and something waits for a reason: say the first one.
  if (c.running == 0 && status.waiting_size() > 0) {
    absl::StrAppend(&line, ", waiting: ", status.waiting(0));
  }
  double eta = EstimateRemainingSeconds(c, elapsed_seconds, baseline);
  // The model's estimate knows each remaining job's size; the rate only
  // the average of those done.
  const bool model_eta = status.model_seconds_left() > 0 && c.finished < c.total;
  if (model_eta) eta = status.model_seconds_left();
  if (status.spec().run().budget_seconds() > 0) {
    absl::StrAppend(&line, ", held ", c.held, ", predicted ", c.predicted);
    // A budgeted sweep ends with its budget (then predicts what is held),
    // or sooner when every configuration got measured.
    if (status.budget_ends_unix_ms() > 0 && c.held + c.running > 0) {
      const double now_ms =
          static_cast<double>(status.created_unix_ms()) + status.elapsed_seconds() * 1000.0;
      const double left = std::max(0.0, (status.budget_ends_unix_ms() - now_ms) / 1000.0);
      eta = eta < 0 ? left : std::min(eta, left);
    }
  }
  absl::StrAppend(&line, "  elapsed ", HumanClock(elapsed_seconds), "  ETA ", HumanClock(eta),
                  model_eta ? " (model)" : "");
  return line;
}

void ProgressPrinter::Show(const v1::SweepStatus& status, double elapsed_seconds, double now) {
  const ProgressCounts progress = CountProgress(status);
  if (!baseline_.has_value() && progress.finished > 0) {
    baseline_ = EtaBaseline{progress.finished, elapsed_seconds};
  }
  last_line_ = FormatProgressLine(status, elapsed_seconds, 10, baseline_.value_or(EtaBaseline{}));
  if (terminal_) {
    *out_ << "\r" << last_line_ << "\x1b[K" << std::flush;
    drawn_ = true;
    return;
  }
  // Plain streams get a line only when the counts changed, not every tick
  // of the clock, so compare without the elapsed/ETA part.
  const std::string counts = last_line_.substr(0, last_line_.find("  elapsed"));
  if (counts == printed_line_.substr(0, printed_line_.find("  elapsed"))) return;
  if (now - printed_at_ < min_interval_seconds_) return;
  *out_ << last_line_ << "\n" << std::flush;
  printed_line_ = last_line_;
  printed_at_ = now;
}

void ProgressPrinter::Finish() {
  if (terminal_) {
    if (drawn_) *out_ << "\n" << std::flush;
    drawn_ = false;
    return;
  }
  if (!last_line_.empty() && last_line_ != printed_line_) {
    *out_ << last_line_ << "\n" << std::flush;
    printed_line_ = last_line_;
  }
}

}  // namespace paradnn::client
