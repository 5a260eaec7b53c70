#include "db/result_reuse.h"

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/stores_internal.h"
#include "paradnn/v1/metrics.pb.h"
#include "spdlog/spdlog.h"

namespace paradnn::db::internal {

absl::StatusOr<std::optional<ReuseKey>> ReuseKeyOfWorker(sqlite3* db,
                                                         const std::string& worker_id) {
  Statement find(db,
                 "SELECT w.harness, COALESCE(p.fingerprint, ''), w.trust_domain FROM workers w "
                 "LEFT JOIN platforms p ON p.id = w.platform_id WHERE w.id = ?");
  find.Bind(1, worker_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<ReuseKey>();
  ReuseKey key{find.ColumnText(1), find.ColumnText(0), find.ColumnText(2)};
  if (key.fingerprint.empty() || key.harness.empty()) return std::optional<ReuseKey>();
  return std::optional<ReuseKey>(std::move(key));
}

bool SameMeasurementSettings(const v1::RunSettings& a, const v1::RunSettings& b) {
  auto measured_part = [](v1::RunSettings settings) {
    settings.clear_timeout_seconds();
    settings.clear_budget_seconds();
    settings.clear_fresh();
    // A sweep without a seed gets one of its own; synthetic data and initial
    // weights do not move a step's time (subnormal gradients, which would,
    // make a result suspect, and suspect results are not reused).
    settings.clear_seed();
    return settings.SerializeAsString();  // no maps: deterministic
  };
  return measured_part(a) == measured_part(b);
}

absl::StatusOr<std::optional<ReusableResult>> FindReusableResult(sqlite3* db,
                                                                 const JobIdentity& job,
                                                                 const ReuseKey& key) {
  // A result flagged suspect (other load, reference BLAS, a failed spot
  // check, ...) is not worth copying: the job measures afresh. Neither is
  // one of another trust domain, or of a worker a spot check refused.
  Statement find(db,
                 "SELECT r.id, COALESCE(r.reused_from_job_id, r.job_id), js.settings, r.worker_id "
                 "FROM jobs js JOIN results r ON r.job_id = js.id "
                 "JOIN platforms p ON p.id = r.platform_id "
                 "WHERE js.config_id = ?1 AND js.precision = ?2 AND js.optimizer = ?3 "
                 "AND js.repeat = ?4 AND js.sweep_id != ?5 AND r.outcome = ?6 "
                 "AND r.harness = ?7 AND p.fingerprint = ?8 AND COALESCE(r.suspect, '') = '' "
                 "AND r.trust_domain = ?9 AND NOT EXISTS (SELECT 1 FROM workers w "
                 "WHERE w.id = r.worker_id AND w.reuse_refused != '') "
                 "ORDER BY r.id DESC LIMIT 16");
  find.Bind(1, job.config_id).Bind(2, job.precision).Bind(3, job.optimizer).Bind(4, job.repeat);
  find.Bind(5, job.sweep_id).Bind(6, static_cast<int>(v1::OK)).Bind(7, key.harness);
  find.Bind(8, key.fingerprint).Bind(9, key.trust_domain);
  for (;;) {
    absl::StatusOr<bool> row = find.Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<ReusableResult>();
    v1::RunSettings settings;
    if (!settings.ParseFromString(find.ColumnBlob(2))) continue;  // unreadable: not a match
    if (!SameMeasurementSettings(settings, job.settings)) continue;
    return std::optional<ReusableResult>(
        ReusableResult{find.ColumnInt(0), find.ColumnInt(1), find.ColumnText(3)});
  }
}

absl::Status StoreReusedResult(sqlite3* db, int64_t job_id, int64_t attempt_id,
                               const std::string& worker_id, const ReusableResult& source,
                               int64_t now_unix_ms) {
  v1::Measurement measurement;
  std::string measured_by;
  std::string harness;
  int64_t platform_id = 0;
  {
    Statement read(db,
                   "SELECT measurement, worker_id, harness, COALESCE(platform_id, 0) "
                   "FROM results WHERE id = ?");
    read.Bind(1, source.result_id);
    absl::StatusOr<bool> found = read.Step();
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(absl::StrCat("result ", source.result_id, " to reuse is gone"));
    }
    if (absl::Status s = ParseBlob(read.ColumnBlob(0), &measurement, "results", source.result_id);
        !s.ok()) {
      return s;
    }
    measured_by = read.ColumnText(1);
    harness = read.ColumnText(2);
    platform_id = read.ColumnInt(3);
  }
  if (absl::Status s = AppendSamples(db, source.result_id, &measurement); !s.ok()) return s;
  absl::StatusOr<StoreOutcome> stored = StoreResultInTransaction(
      db, job_id, attempt_id, worker_id, platform_id, measurement, now_unix_ms);
  if (!stored.ok()) return stored.status();
  Statement mark(db,
                 "UPDATE results SET worker_id = ?1, harness = ?2, reused_from_job_id = ?3 "
                 "WHERE job_id = ?4");
  mark.Bind(1, measured_by).Bind(2, harness).Bind(3, source.origin_job_id).Bind(4, job_id);
  if (absl::Status s = mark.Run(); !s.ok()) return s;
  Statement attempt(db, "UPDATE attempts SET outcome = 'reused' WHERE id = ?");
  attempt.Bind(1, attempt_id);
  return attempt.Run();
}

namespace {

// A key drawn once per process: which reuses are checked cannot be read off
// job ids.
uint64_t SpotCheckKey() {
  static const uint64_t key = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return key;
}

}  // namespace

bool SpotCheckDue(int64_t job_id, int every) {
  if (every <= 0) return false;
  if (every == 1) return true;
  // splitmix64's finalizer over the keyed id: well spread for any ids.
  uint64_t z = static_cast<uint64_t>(job_id) ^ SpotCheckKey();
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return z % static_cast<uint64_t>(every) == 0;
}

absl::Status RecordSpotCheck(sqlite3* db, int64_t job_id, const ReusableResult& source,
                             int64_t now_unix_ms) {
  Statement insert(db,
                   "INSERT INTO spot_checks (job_id, source_result_id, source_worker, "
                   "created_unix_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (job_id) DO UPDATE SET "
                   "source_result_id = excluded.source_result_id, "
                   "source_worker = excluded.source_worker, checker = '', verdict = ''");
  insert.Bind(1, job_id).Bind(2, source.result_id).Bind(3, source.measured_by);
  insert.Bind(4, now_unix_ms);
  return insert.Run();
}

bool SpotCheckAgrees(const SpotCheckFigures& source, const SpotCheckFigures& fresh) {
  const double allowed = std::max(
      kSpotCheckMinRatio, 1 + 3 * (std::max(0.0, source.ci95_rel) + std::max(0.0, fresh.ci95_rel)));
  const auto within = [allowed](double a, double b) {
    if (!(a > 0) && !(b > 0)) return true;  // neither claims one
    if (!(a > 0) || !(b > 0)) return false;
    const double ratio = b / a;
    return ratio <= allowed && ratio >= 1 / allowed;
  };
  if (source.median_s > 0 || fresh.median_s > 0) return within(source.median_s, fresh.median_s);
  return within(source.examples_per_sec, fresh.examples_per_sec);
}

namespace {

// Adds ?1 to the suspect conditions of the results the WHERE that follows
// names.
constexpr char kAppendSuspect[] =
    "UPDATE results SET suspect = CASE WHEN COALESCE(suspect, '') = '' THEN ?1 "
    "ELSE suspect || '; ' || ?1 END WHERE ";

// How a disputed result's suspect column starts; the verdict and ')' follow.
constexpr char kDisputedPrefix[] = "disputed by a spot check (";

// The workers `worker` disagreed with in spot checks, either side.
absl::StatusOr<int64_t> DisagreeingCounterparts(sqlite3* db, const std::string& worker) {
  Statement count(db,
                  "SELECT COUNT(DISTINCT CASE WHEN source_worker = ?1 THEN checker "
                  "ELSE source_worker END) FROM spot_checks WHERE verdict LIKE 'disagrees%' "
                  "AND (source_worker = ?1 OR checker = ?1)");
  count.Bind(1, worker);
  absl::StatusOr<bool> row = count.Step();
  if (!row.ok()) return row.status();
  return *row ? count.ColumnInt(0) : 0;
}

// Refuses `worker` as a source of reused results and marks every OK result
// it measured (copies included) suspect, once.
absl::Status RefuseSource(sqlite3* db, const std::string& worker, const std::string& why,
                          int64_t now_unix_ms) {
  Statement refuse(db, "UPDATE workers SET reuse_refused = ? WHERE id = ? AND reuse_refused = ''");
  refuse.Bind(1, absl::StrCat(why, " (", now_unix_ms, ")")).Bind(2, worker);
  if (absl::Status s = refuse.Run(); !s.ok()) return s;
  if (sqlite3_changes(db) == 0) return absl::OkStatus();  // refused before
  spdlog::warn(
      "worker {}: {}; it is no longer a source of reused results, and its results are "
      "marked suspect",
      worker, why);
  const std::string append = absl::StrCat(kAppendSuspect, "worker_id = ?2 AND outcome = ?3");
  Statement suspect(db, append.c_str());
  suspect.Bind(1, why).Bind(2, worker).Bind(3, static_cast<int>(v1::OK));
  if (absl::Status s = suspect.Run(); !s.ok()) return s;
  // The results it disputed on the other side of its spot checks were
  // right: the dispute (when it is all they are suspect of) is lifted.
  Statement lift(
      db,
      "UPDATE results SET suspect = '' WHERE id IN (SELECT CASE WHEN s.checker = ?1 "
      "THEN s.source_result_id ELSE (SELECT r.id FROM results r WHERE r.job_id = "
      "s.job_id) END FROM spot_checks s WHERE s.verdict LIKE 'disagrees%' AND "
      "(s.checker = ?1 OR s.source_worker = ?1)) AND worker_id != ?1 AND suspect = "
      "(SELECT ?2 || s.verdict || ')' FROM spot_checks s WHERE s.verdict LIKE "
      "'disagrees%' AND (s.job_id = results.job_id OR s.source_result_id = results.id))");
  lift.Bind(1, worker).Bind(2, kDisputedPrefix);
  return lift.Run();
}

}  // namespace

absl::Status JudgeSpotCheck(sqlite3* db, int64_t job_id, const std::string& checker,
                            const v1::Measurement& fresh, int64_t now_unix_ms) {
  // Nothing to compare yet: the job's next OK result is judged.
  if (fresh.outcome() != v1::OK) return absl::OkStatus();
  Statement find(db,
                 "SELECT s.source_result_id, COALESCE(r.step_median_s, 0), "
                 "COALESCE(r.ci95_rel, 0), s.source_worker, COALESCE(r.examples_per_sec, 0) "
                 "FROM spot_checks s JOIN results r ON r.id = s.source_result_id "
                 "WHERE s.job_id = ? AND s.verdict = ''");
  find.Bind(1, job_id);
  absl::StatusOr<bool> found = find.Step();
  if (!found.ok()) return found.status();
  if (!*found) return absl::OkStatus();
  const int64_t source_id = find.ColumnInt(0);
  const SpotCheckFigures source{find.ColumnDouble(1), find.ColumnDouble(2), find.ColumnDouble(4)};
  const std::string source_worker = find.ColumnText(3);
  const double fresh_s = fresh.stats().median_s();
  const bool agrees = SpotCheckAgrees(
      source, SpotCheckFigures{fresh_s, fresh.stats().ci95_rel(), fresh.examples_per_sec()});
  const std::string verdict = absl::StrFormat(
      "%s: job %d measured again by %s at %.6g s (%.6g ex/s) against result %d of %s, %.6g s "
      "(%.6g ex/s)",
      agrees ? "agrees" : "disagrees", job_id, checker, fresh_s, fresh.examples_per_sec(),
      source_id, source_worker, source.median_s, source.examples_per_sec);
  Statement record(db, "UPDATE spot_checks SET verdict = ?, checker = ? WHERE job_id = ?");
  record.Bind(1, verdict).Bind(2, checker).Bind(3, job_id);
  if (absl::Status s = record.Run(); !s.ok()) return s;
  if (agrees) return absl::OkStatus();
  // Two measurements disagree and either may be the lie: neither is reused
  // (the checked result, and the new one, are disputed).
  spdlog::warn("spot check {}", verdict);
  const std::string append = absl::StrCat(kAppendSuspect, "id = ?2 OR job_id = ?3");
  Statement disputed(db, append.c_str());
  disputed.Bind(1, absl::StrCat(kDisputedPrefix, verdict, ")"));
  disputed.Bind(2, source_id).Bind(3, job_id);
  if (absl::Status s = disputed.Run(); !s.ok()) return s;
  // A worker contradicted by two others is the liar: one liar alone can
  // contradict an honest worker only once.
  for (const std::string& worker : {source_worker, checker}) {
    absl::StatusOr<int64_t> counterparts = DisagreeingCounterparts(db, worker);
    if (!counterparts.ok()) return counterparts.status();
    if (*counterparts < kSpotCheckRefusals) continue;
    if (absl::Status s = RefuseSource(
            db, worker,
            absl::StrCat("spot checks: its results and ", *counterparts,
                         " other workers' disagree (beyond ", kSpotCheckMinRatio, "x)"),
            now_unix_ms);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace paradnn::db::internal
