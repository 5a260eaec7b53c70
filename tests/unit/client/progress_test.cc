#include "client/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace paradnn::client {
namespace {

using ::testing::HasSubstr;

v1::SweepStatus Status(int64_t total, int64_t done, int64_t running, int64_t ok, int64_t failed = 0,
                       int64_t cancelled = 0) {
  v1::SweepStatus s;
  s.set_state(v1::SWEEP_RUNNING);
  s.set_total_jobs(total);
  s.set_done_jobs(done);
  s.set_leased_jobs(running);
  s.set_ok_results(ok);
  s.set_failed_jobs(failed);
  s.set_cancelled_jobs(cancelled);
  s.set_pending_jobs(total - done - running - failed - cancelled);
  return s;
}

TEST(ProgressTest, TheDocumentedLine) {
  EXPECT_EQ(FormatProgressLine(Status(12, 7, 1, 7), 42),
            "[#####.....] 7/12 done, 1 running, ok 7, failed 0  elapsed 0:42  ETA 0:30");
}

TEST(ProgressTest, NoEtaBeforeTheFirstFinish) {
  EXPECT_EQ(FormatProgressLine(Status(12, 0, 1, 0), 5),
            "[..........] 0/12 done, 1 running, ok 0, failed 0  elapsed 0:05  ETA --");
}

TEST(ProgressTest, TheModelsEstimateWinsOverTheRateAndSaysSo) {
  v1::SweepStatus s = Status(12, 7, 1, 7);
  s.set_model_seconds_left(95);
  EXPECT_EQ(FormatProgressLine(s, 42),
            "[#####.....] 7/12 done, 1 running, ok 7, failed 0  elapsed 0:42  ETA 1:35 (model)");
  // Before any job finished too: the model knows the sizes already.
  s = Status(12, 0, 1, 0);
  s.set_model_seconds_left(95);
  EXPECT_THAT(FormatProgressLine(s, 5), HasSubstr("ETA 1:35 (model)"));
}

TEST(ProgressTest, WhyNothingRunsIsSaid) {
  v1::SweepStatus s = Status(4, 1, 0, 1);
  s.add_waiting("job 2 (hosts 4) waits for 4 idle workers of platform 3: 2 idle of 4 connected");
  s.add_waiting("another line");
  EXPECT_THAT(FormatProgressLine(s, 5),
              HasSubstr("ok 1, failed 0, waiting: job 2 (hosts 4) waits for 4 idle workers of "
                        "platform 3: 2 idle of 4 connected  elapsed"));
  // While something runs the line stays as it was.
  s.set_leased_jobs(1);
  EXPECT_THAT(FormatProgressLine(s, 5), ::testing::Not(HasSubstr("waiting")));
}

TEST(ProgressTest, FinishedSweep) {
  v1::SweepStatus s = Status(12, 12, 0, 11);
  s.set_state(v1::SWEEP_DONE);
  EXPECT_EQ(FormatProgressLine(s, 3725),
            "[##########] 12/12 done, 0 running, ok 11, failed 1  elapsed 1:02:05  ETA 0:00");
}

TEST(ProgressTest, FailedAndCancelledJobsCount) {
  // 3 results (2 OK, 1 OOM), 1 infrastructure failure, 2 cancelled.
  const v1::SweepStatus s = Status(10, 3, 0, 2, 1, 2);
  const ProgressCounts c = CountProgress(s);
  EXPECT_EQ(c.finished, 6);
  EXPECT_EQ(c.failed, 2);
  EXPECT_EQ(c.cancelled, 2);
  EXPECT_THAT(FormatProgressLine(s, 60), HasSubstr("6/10 done, 0 running, ok 2, failed 2, "
                                                   "cancelled 2  elapsed 1:00  ETA 0:40"));
}

TEST(ProgressTest, EmptySweepAndBarWidth) {
  EXPECT_THAT(FormatProgressLine(Status(0, 0, 0, 0), 0), HasSubstr("[..........] 0/0 done"));
  EXPECT_THAT(FormatProgressLine(Status(4, 1, 0, 1), 10, 4), HasSubstr("[#...] 1/4"));
}

TEST(ProgressTest, EtaIsMeasuredFromTheFirstFinishNotTheStart) {
  // The first job finished after 100 s (start-up and the first
  // calibration); four more took 8 s: 5 left at 2 s each.
  ProgressCounts c;
  c.total = 10;
  c.finished = 1;
  const EtaBaseline first{1, 100};
  EXPECT_LT(EstimateRemainingSeconds(c, 100, first), 0);  // no rate yet: "--"
  c.finished = 5;
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(c, 108, first), 10);
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(c, 108), 108.0 / 5 * 5);  // from the start: wild

  // The printer takes its baseline from the first status with a finish.
  std::ostringstream out;
  ProgressPrinter printer(&out, false, 0);
  printer.Show(Status(10, 1, 1, 1), 100, 0);
  printer.Show(Status(10, 5, 1, 5), 108, 1);
  EXPECT_THAT(out.str(), HasSubstr("1/10 done, 1 running, ok 1, failed 0  elapsed 1:40  ETA --"));
  EXPECT_THAT(out.str(), HasSubstr("5/10 done, 1 running, ok 5, failed 0  elapsed 1:48  ETA 0:10"));
}

TEST(ProgressTest, Eta) {
  ProgressCounts c;
  c.total = 12;
  EXPECT_LT(EstimateRemainingSeconds(c, 10), 0);
  c.finished = 4;
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(c, 20), 40);
  c.finished = 12;
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(c, 20), 0);
}

TEST(ProgressPrinterTest, TerminalRedrawsOneLine) {
  std::ostringstream out;
  ProgressPrinter printer(&out, /*terminal=*/true);
  printer.Show(Status(2, 0, 1, 0), 1, 1);
  printer.Show(Status(2, 1, 1, 1), 2, 2);
  printer.Finish();
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 2);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_THAT(text, HasSubstr("\x1b[K"));
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProgressPrinterTest, PlainStreamPrintsChangesAtMostOncePerSecond) {
  std::ostringstream out;
  ProgressPrinter printer(&out, /*terminal=*/false);
  printer.Show(Status(3, 0, 1, 0), 0.1, 0.1);  // printed
  printer.Show(Status(3, 0, 1, 0), 1.5, 1.5);  // same counts: not printed
  printer.Show(Status(3, 1, 1, 1), 1.7, 1.7);  // changed, 1.6 s later: printed
  printer.Show(Status(3, 2, 1, 2), 2.0, 2.0);  // changed, 0.3 s later: held back
  printer.Show(Status(3, 2, 1, 2), 2.8, 2.8);  // now due
  printer.Show(Status(3, 3, 0, 3), 3.0, 3.0);  // held back
  printer.Finish();                            // the last line always shows
  printer.Finish();                            // idempotent
  const std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  EXPECT_THAT(text, HasSubstr("0/3 done"));
  EXPECT_THAT(text, HasSubstr("1/3 done"));
  EXPECT_THAT(text, HasSubstr("2/3 done"));
  EXPECT_THAT(text, HasSubstr("3/3 done"));
}

}  // namespace
}  // namespace paradnn::client
