// PlatformStore: each fingerprint described by its first reporter.
#include "db/platform_store.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/stores_internal.h"
#include "spdlog/spdlog.h"

namespace paradnn::db {

// ---- platforms ------------------------------------------------------------

namespace {

// The facts a fingerprint stands for, as "field: value" pairs: what two
// reports of one fingerprint must agree on. Hostnames differ between hosts
// of one stack; roofs, peaks, the probe and the clocks are measurements.
std::vector<std::pair<const char*, std::string>> IdentityFacts(const v1::Platform& p) {
  return {{"device_kind", p.device_kind()},
          {"device_name", p.device_name()},
          {"sockets", absl::StrCat(p.sockets())},
          {"cores", absl::StrCat(p.cores())},
          {"logical_cpus", absl::StrCat(p.logical_cpus())},
          {"memory_bytes", absl::StrCat(p.memory_bytes())},
          {"os", p.os()},
          {"libtorch_version", p.libtorch_version()},
          {"blas_backend", p.blas_backend()},
          {"compiler", p.compiler()},
          {"cpu_flags", p.cpu_flags()},
          {"isa_paths", p.isa_paths()},
          {"onednn_version", p.onednn_version()},
          {"blas_core", p.blas_core()},
          {"aten_capability", p.aten_capability()}};
}

// The first fact `b` states differently from `a`, e.g. "device_name:
// 'Xeon' vs 'EPYC'"; "" when they agree.
std::string FirstDifference(const v1::Platform& a, const v1::Platform& b) {
  const auto fa = IdentityFacts(a), fb = IdentityFacts(b);
  for (size_t i = 0; i < fa.size(); ++i) {
    if (fa[i].second != fb[i].second) {
      return absl::StrCat(fa[i].first, ": '", fa[i].second.substr(0, 80), "' vs '",
                          fb[i].second.substr(0, 80), "'");
    }
  }
  return "";
}

constexpr int64_t kMaxClockSkewMs = int64_t{24} * 3600 * 1000;

// InvalidArgument for a report no platform row may come from.
absl::Status CheckReport(const v1::Platform& platform, int64_t now_unix_ms) {
  if (platform.fingerprint().empty()) {
    return absl::InvalidArgumentError("platform.fingerprint is empty");
  }
  if (platform.calibrated_unix_ms() > now_unix_ms + kMaxClockSkewMs) {
    return absl::InvalidArgumentError(
        absl::StrCat("platform.calibrated_unix_ms: ", platform.calibrated_unix_ms(),
                     " is more than a day in the future (now ", now_unix_ms, ")"));
  }
  return absl::OkStatus();
}

// Stores `platform` under `fingerprint` unless that fingerprint has a row.
absl::Status InsertUnlessKnown(sqlite3* db, const v1::Platform& platform,
                               const std::string& fingerprint, const std::string& owner,
                               int64_t now_unix_ms) {
  // The first host to report a fingerprint describes it (and owns its
  // roofs); later hosts with the same stack differ only in hostname, which
  // the fingerprint deliberately leaves out.
  Statement statement(db,
                      "INSERT INTO platforms (fingerprint, device_kind, device_name, hostname, "
                      "libtorch_version, blas_backend, details, created_unix_ms, blas_core, "
                      "aten_capability, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                      "ON CONFLICT (fingerprint) DO NOTHING");
  v1::Platform stored = platform;
  stored.set_fingerprint(fingerprint);
  statement.Bind(1, fingerprint)
      .Bind(2, platform.device_kind())
      .Bind(3, platform.device_name())
      .Bind(4, platform.hostname())
      .Bind(5, platform.libtorch_version())
      .Bind(6, platform.blas_backend())
      .BindBlob(7, stored.SerializeAsString())
      .Bind(8, now_unix_ms)
      .Bind(9, platform.blas_core())
      .Bind(10, platform.aten_capability())
      .Bind(11, owner);
  return statement.Run();
}

// A fingerprint's row as stored.
struct StoredPlatform {
  int64_t id = 0;
  std::string owner;
  v1::Platform details;
};

// The row of `fingerprint`, which InsertUnlessKnown has just made sure of.
absl::StatusOr<StoredPlatform> FindStored(sqlite3* db, const std::string& fingerprint) {
  Statement statement(db, "SELECT id, details, owner FROM platforms WHERE fingerprint = ?");
  statement.Bind(1, fingerprint);
  absl::StatusOr<bool> found = statement.Step();
  if (!found.ok()) return found.status();
  if (!*found) return absl::InternalError("platform vanished right after its insert");
  StoredPlatform row;
  row.id = statement.ColumnInt(0);
  row.owner = statement.ColumnText(2);
  if (absl::Status s =
          internal::ParseBlob(statement.ColumnBlob(1), &row.details, "platforms", row.id);
      !s.ok()) {
    return s;
  }
  return row;
}

// Claims an unowned row for `owner` and stores a newer calibration, where
// `owner` may.
absl::Status RefreshIfOwned(sqlite3* db, const v1::Platform& platform,
                            const std::string& fingerprint, const std::string& owner,
                            const StoredPlatform& row) {
  // Only the platform's owner replaces its roofs with a newer calibration
  // (rows from before owners are claimed by the next).
  if (!row.owner.empty() && row.owner != owner) return absl::OkStatus();
  if (row.owner.empty() && !owner.empty()) {
    Statement claim(db, "UPDATE platforms SET owner = ? WHERE id = ?");
    claim.Bind(1, owner).Bind(2, row.id);
    if (absl::Status s = claim.Run(); !s.ok()) return s;
  }
  if (platform.calibrated_unix_ms() > row.details.calibrated_unix_ms()) {
    v1::Platform stored = platform;
    stored.set_fingerprint(fingerprint);
    Statement update(db, "UPDATE platforms SET details = ? WHERE id = ?");
    update.BindBlob(1, stored.SerializeAsString()).Bind(2, row.id);
    if (absl::Status s = update.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Upsert's write function: the id of the row `platform` is stored under.
absl::StatusOr<int64_t> UpsertPlatform(sqlite3* db, const v1::Platform& platform,
                                       const std::string& owner, int64_t now_unix_ms) {
  if (absl::Status s = CheckReport(platform, now_unix_ms); !s.ok()) return s;
  std::string fingerprint = platform.fingerprint();
  if (absl::Status s = InsertUnlessKnown(db, platform, fingerprint, owner, now_unix_ms); !s.ok()) {
    return s;
  }
  absl::StatusOr<StoredPlatform> row = FindStored(db, fingerprint);
  if (!row.ok()) return row.status();
  if (const std::string differs = FirstDifference(row->details, platform); !differs.empty()) {
    // One fingerprint, other facts: a buggy or hostile worker. Its report is
    // kept apart under a fingerprint of its own and never replaces the first.
    fingerprint = absl::StrCat(platform.fingerprint(), "~", owner.empty() ? "?" : owner);
    spdlog::warn("platform {}: {} reports other facts than {} did ({}); kept apart as {}",
                 platform.fingerprint(), owner.empty() ? "a caller" : owner,
                 row->owner.empty() ? "its first reporter" : row->owner, differs, fingerprint);
    if (absl::Status s = InsertUnlessKnown(db, platform, fingerprint, owner, now_unix_ms);
        !s.ok()) {
      return s;
    }
    row = FindStored(db, fingerprint);
    if (!row.ok()) return row.status();
  }
  if (absl::Status s = RefreshIfOwned(db, platform, fingerprint, owner, *row); !s.ok()) return s;
  return row->id;
}

}  // namespace

void PlatformStore::Upsert(const v1::Platform& platform, Callback<int64_t> done,
                           const std::string& owner) {
  // Upsert takes no clock; created_unix_ms is informational (when the
  // coordinator first met this stack) and nothing schedules on it.
  const int64_t now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  internal::WriteValue<int64_t>(
      db_,
      [platform, owner, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
        return UpsertPlatform(db, platform, owner, now_unix_ms);
      },
      std::move(done));
}

absl::StatusOr<int64_t> PlatformStore::UpsertSync(const v1::Platform& platform,
                                                  const std::string& owner) {
  return internal::Await<int64_t>(
      db_, [&](Callback<int64_t> done) { Upsert(platform, std::move(done), owner); });
}

absl::StatusOr<v1::Platform> ReadPlatform(const Database& database, int64_t platform_id) {
  v1::Platform platform;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    Statement find(db, "SELECT details FROM platforms WHERE id = ?");
    find.Bind(1, platform_id);
    absl::StatusOr<bool> found = find.Step();
    if (!found.ok()) return found.status();
    if (!*found) return absl::NotFoundError(absl::StrCat("platform ", platform_id, " not found"));
    return internal::ParseBlob(find.ColumnBlob(0), &platform, "platforms", platform_id);
  });
  if (!status.ok()) return status;
  return platform;
}

absl::StatusOr<v1::Platform> ReadPlatformByFingerprint(const Database& database,
                                                       const std::string& fingerprint) {
  v1::Platform platform;
  absl::Status status = database.Read([&](sqlite3* db) -> absl::Status {
    Statement find(db, "SELECT id, details FROM platforms WHERE fingerprint = ?");
    find.Bind(1, fingerprint);
    absl::StatusOr<bool> found = find.Step();
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(absl::StrCat("no platform has fingerprint '", fingerprint, "'"));
    }
    return internal::ParseBlob(find.ColumnBlob(1), &platform, "platforms", find.ColumnInt(0));
  });
  if (!status.ok()) return status;
  return platform;
}

}  // namespace paradnn::db
