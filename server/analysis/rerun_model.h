// How far a re-run of a measurement may land on the same platform (issue
// "differences you can trust"): a result's own 95 % interval covers the
// steps of its one run, not the host's drift between runs, which on shared
// cloud hosts is 10-50 % over minutes. The re-run model learns that spread
// per platform from the results it holds:
//   - re-runs: configurations measured more than once (a sweep's repeats,
//     or the same configuration in several sweeps), pooled per step-time
//     band (tiny steps wake threads and drift more) and shrunk toward the
//     platform's overall spread where a band has few re-runs;
//   - without re-runs, the host-speed sentinel (Measurement.sentinel): the
//     spread of the compute probe over the platform's results;
//   - without either, a prior for shared hosts, said so.
// Spreads are standard deviations of log step time ("relative sd"): drift
// scales every step time by a factor. Pure functions; thread-compatible.
#ifndef PARADNN_SERVER_ANALYSIS_RERUN_MODEL_H_
#define PARADNN_SERVER_ANALYSIS_RERUN_MODEL_H_

#include <array>
#include <map>
#include <string>
#include <vector>

namespace paradnn::server::analysis {

// One measured (not reused, not predicted) OK result of a platform.
struct RerunSample {
  // What makes two results re-runs of each other: the configuration,
  // precision, optimizer and thread settings.
  std::string group;
  double step_s = 0;      // median step seconds
  double within_rel = 0;  // the run's own 95 % half-width / mean (StepStats.ci95_rel)
  // The sentinel's compute ratio around the run (geometric mean of before
  // and after); 0 = not run.
  double sentinel = 0;
};

// The spread of one run's log step time around the configuration's level on
// this platform, and what it rests on.
struct RerunSpread {
  double rel_sd = 0;
  // Of the estimate, for a t quantile; 0 = a normal quantile (the prior).
  double degrees_of_freedom = 0;
  // "re-runs", "sentinel" or "prior".
  std::string basis;
};

// The prior spread of a shared cloud host, where a platform has neither
// re-runs nor sentinel readings: the prediction benchmark measured its own
// re-measurement floor on such hosts at 16.7 % median, 51.9 % p90 between two
// runs, about a relative sd of 0.18 a run.
inline constexpr double kPriorRerunRelSd = 0.18;

class RerunModel {
 public:
  // The step-time bands' upper edges (seconds); the last band is open.
  static constexpr std::array<double, 3> kBandEdges = {1e-3, 1e-2, 1e-1};
  // A band's own estimate weighs as much as this many degrees of freedom of
  // the platform's overall one (shrinkage toward the overall spread).
  static constexpr double kShrinkDegrees = 4;
  // Sentinel readings needed before their spread replaces the prior.
  static constexpr size_t kMinSentinelReadings = 8;

  // The model of a platform from its samples (any order).
  static RerunModel Fit(const std::vector<RerunSample>& samples);

  // The spread of a run of `step_s`, at least its own within-run spread
  // (`within_rel`, a 95 % half-width; 0 = unknown). With the run's `group`
  // and re-runs of it in the model, the group's own spread shrunk toward its
  // band's by kShrinkDegrees (configurations differ: on a 2-vCPU host a
  // 0.3 ms FC step re-ran with a spread of 0.20, a 640 ms one with 0.07,
  // both in the model's bands; bench/rerun_coverage.py, quiet host: 90.8 %
  // coverage by band alone, 93.8 % with the groups', at the same width).
  RerunSpread SpreadAt(double step_s, double within_rel, const std::string& group = "") const;

  // The configurations measured more than once, and the degrees of freedom
  // of the pooled estimate (sum over them of runs - 1).
  size_t rerun_groups() const { return rerun_groups_; }
  double rerun_degrees() const { return overall_.degrees_of_freedom; }
  size_t sentinel_readings() const { return sentinel_readings_; }
  // The platform-wide spread (no band, no within-run floor).
  const RerunSpread& overall() const { return overall_; }

 private:
  struct Band {
    double sum_squares = 0;  // of log deviations from their group's mean
    double degrees = 0;
  };
  std::array<Band, kBandEdges.size() + 1> bands_;
  std::map<std::string, Band> groups_;  // those measured more than once
  RerunSpread overall_;
  size_t rerun_groups_ = 0;
  size_t sentinel_readings_ = 0;
};

// Where a re-run's median step time is expected, at `level` (95 %): the
// run's step time times exp(+-q x sqrt(2) x rel_sd), since a re-run and
// this run each deviate from the level by the spread.
struct RerunInterval {
  double low_s = 0;
  double high_s = 0;
  // exp(q x sqrt(2) x rel_sd) - 1: "+-N %" as people read it (the interval
  // is symmetric in log terms, so the lower side is a little smaller).
  double half_width_rel = 0;
  RerunSpread spread;
};
RerunInterval PredictRerun(const RerunModel& model, double step_s, double within_rel,
                           const std::string& group = "", double level = 0.95);

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_RERUN_MODEL_H_
