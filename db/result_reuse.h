// Reusing results across sweeps (docs/prediction.md, "Reusing results"): a
// job whose configuration an earlier sweep already measured on a platform
// of the same fingerprint, with the same timing harness and the same
// measurement settings, takes that result instead of running again, unless
// its sweep asked to measure afresh (RunSettings.fresh). The copy names the
// job it came from (results.reused_from_job_id) and keeps who measured it,
// on which platform, with which harness; fleet goodput counts it as no work.
#ifndef PARADNN_DB_RESULT_REUSE_H_
#define PARADNN_DB_RESULT_REUSE_H_

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "paradnn/v1/metrics.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::db::internal {

// What a worker's results are matched on: its platform's fingerprint (which
// names its stack) and its harness, both non-empty, or no reuse; and its
// trust domain (common::TrustDomainOf): only results measured in it.
struct ReuseKey {
  std::string fingerprint;
  std::string harness;
  std::string trust_domain;
};

// The key of `worker_id` as its hello recorded it; nullopt when it has no
// platform or no harness (an older worker: nothing is reused for it).
absl::StatusOr<std::optional<ReuseKey>> ReuseKeyOfWorker(sqlite3* db, const std::string& worker_id);

// A job as reuse matches it: the configuration (family and hyper-parameters,
// stack settings included), precision, optimizer, repeat and settings.
struct JobIdentity {
  int64_t job_id = 0;
  int64_t sweep_id = 0;
  int64_t config_id = 0;
  std::string precision;
  std::string optimizer;
  int64_t repeat = 0;
  v1::RunSettings settings;
};

// The stored result a job can take.
struct ReusableResult {
  int64_t result_id = 0;
  int64_t origin_job_id = 0;  // the job that was measured (a reused result's own origin)
  std::string measured_by;    // the worker that measured it
};

// Whether two jobs' settings measure alike: everything but what only
// schedules them (timeout, budget, fresh) and the seed of their synthetic
// data and weights.
bool SameMeasurementSettings(const v1::RunSettings& a, const v1::RunSettings& b);

// The newest OK result of another sweep's job with `job`'s identity and
// measurement settings, measured on a platform with key.fingerprint by a
// harness equal to key.harness, by a worker of key.trust_domain that no
// spot check refused (JudgeSpotCheck), not suspect; nullopt when there is
// none.
absl::StatusOr<std::optional<ReusableResult>> FindReusableResult(sqlite3* db,
                                                                 const JobIdentity& job,
                                                                 const ReuseKey& key);

// Stores `source` as the result of `job_id`, whose attempt `attempt_id` is
// open and leased to `worker_id` (ResultStore's exactly-once path), then
// restores who measured it, where and with what harness, and names its
// origin.
absl::Status StoreReusedResult(sqlite3* db, int64_t job_id, int64_t attempt_id,
                               const std::string& worker_id, const ReusableResult& source,
                               int64_t now_unix_ms);

// Whether the reuse of a result by `job_id` is measured again instead
// (DatabaseOptions.reuse_spot_check_every: one in `every`, drawn by a
// keyed hash of the job id that a worker cannot predict; 1 = all, 0 = none).
bool SpotCheckDue(int64_t job_id, int every);

// Notes that `job_id`, which could have taken `source`, is measured again
// to check it.
absl::Status RecordSpotCheck(sqlite3* db, int64_t job_id, const ReusableResult& source,
                             int64_t now_unix_ms);

// What a spot check compares of a result.
struct SpotCheckFigures {
  double median_s = 0;  // the step time; 0 = not measured (a harness family)
  double ci95_rel = 0;
  double examples_per_sec = 0;
};

// Whether a re-measurement agrees with the result it checks: their step
// times (or, where neither has one, their throughputs) within a factor of
// 1.5 either way, or of 1 + three times their 95 % intervals added,
// whichever is wider. Today's intervals cover a re-run on the same host
// about a third of the time, and shared hosts drift 10-50 % over minutes; a
// made-up result is off by far more. A figure one has and the other lacks
// disagrees; neither having any agrees (nothing was claimed).
inline constexpr double kSpotCheckMinRatio = 1.5;
bool SpotCheckAgrees(const SpotCheckFigures& source, const SpotCheckFigures& fresh);

// A worker whose results disagree with those of this many other workers
// in spot checks is refused as a source.
inline constexpr int64_t kSpotCheckRefusals = 2;

// When `job_id` was a spot check (RecordSpotCheck) and `fresh`, its OK
// result measured by `checker`, was just stored: records the verdict. When
// the two disagree, both results are marked suspect (disputed: neither is
// reused), and a worker (either side) whose results now disagree with
// those of kSpotCheckRefusals other workers is refused as a source of
// reused results (workers.reuse_refused says why), every OK result it
// measured is marked suspect, and the disputes it raised on other workers'
// results are lifted: a lone liar cannot get an honest worker refused,
// having only itself to disagree with. No-op otherwise.
absl::Status JudgeSpotCheck(sqlite3* db, int64_t job_id, const std::string& checker,
                            const v1::Measurement& fresh, int64_t now_unix_ms);

}  // namespace paradnn::db::internal

#endif  // PARADNN_DB_RESULT_REUSE_H_
