// PlatformStore: each fingerprint described by its first reporter.
#include "db/platform_store.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/stores_internal.h"
#include "platform/silicon_peak.h"
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
  if (platform.fingerprint().find_first_of("@~") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "platform.fingerprint: '", platform.fingerprint().substr(0, 80),
        "' holds '@' or '~', which name a trust domain's or a kept-apart report's row"));
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

// The row of `fingerprint` if there is one.
absl::StatusOr<std::optional<StoredPlatform>> FindIfStored(sqlite3* db,
                                                           const std::string& fingerprint) {
  Statement statement(db, "SELECT id, details, owner FROM platforms WHERE fingerprint = ?");
  statement.Bind(1, fingerprint);
  absl::StatusOr<bool> found = statement.Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<StoredPlatform>();
  StoredPlatform row;
  row.id = statement.ColumnInt(0);
  row.owner = statement.ColumnText(2);
  if (absl::Status s =
          internal::ParseBlob(statement.ColumnBlob(1), &row.details, "platforms", row.id);
      !s.ok()) {
    return s;
  }
  return std::optional<StoredPlatform>(std::move(row));
}

// The row of `fingerprint`, which InsertUnlessKnown has just made sure of.
absl::StatusOr<StoredPlatform> FindStored(sqlite3* db, const std::string& fingerprint) {
  absl::StatusOr<std::optional<StoredPlatform>> row = FindIfStored(db, fingerprint);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return absl::InternalError("platform vanished right after its insert");
  return **std::move(row);
}

// Stores a newer calibration of the row, when `trust_domain` owns it.
absl::Status RefreshIfOwned(sqlite3* db, const v1::Platform& platform,
                            const std::string& fingerprint, const std::string& trust_domain,
                            const StoredPlatform& row) {
  // Every worker of the row's trust domain may recalibrate it (the fleet's
  // hosts of one stack share a row); no other domain's may.
  if (row.owner != trust_domain) return absl::OkStatus();
  if (platform.calibrated_unix_ms() > row.details.calibrated_unix_ms()) {
    v1::Platform stored = platform;
    stored.set_fingerprint(fingerprint);
    Statement update(db, "UPDATE platforms SET details = ? WHERE id = ?");
    update.BindBlob(1, stored.SerializeAsString()).Bind(2, row.id);
    if (absl::Status s = update.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// How far apart (either way) a report's calibrated roof may be from the
// stored one of the same fingerprint and facts, once the host's own speed
// at each calibration is taken out. Shared hosts drift 10-50 % over minutes
// and a calibration under contention can read half the silicon; a roof 4x
// off is another machine, or a made-up one.
constexpr double kMaxRoofRatio = 4;

// How much faster the host ran at `report`'s calibration than at `stored`'s,
// by the host-speed probe each calibration takes (Platform.
// probe_flops_per_sec, docs/measurement.md): a calibration on a busy host
// reads every roof low, and an honest recalibration on a quiet one must not
// be refused for it (a CI run's first worker calibrated with three tests
// beside it). 1 where either lacks the probe, or where the probes themselves
// are more than kMaxRoofRatio apart (then the roofs are compared as read).
double HostSpeedRatio(const v1::Platform& report, const v1::Platform& stored) {
  const double now = report.probe_flops_per_sec(), then = stored.probe_flops_per_sec();
  if (!(now > 0) || !(then > 0)) return 1;
  const double ratio = now / then;
  return ratio > kMaxRoofRatio || ratio < 1 / kMaxRoofRatio ? 1 : ratio;
}

// InvalidArgument naming the roof when `report` claims `stored`'s
// fingerprint (same facts) with a calibration more than kMaxRoofRatio from
// it, host speed taken out: a claim the calibration it comes with
// contradicts.
absl::Status CheckRoofsAgree(const v1::Platform& report, const StoredPlatform& stored) {
  const double host_speed = HostSpeedRatio(report, stored.details);
  auto far = [host_speed](double a, double b) {
    a /= host_speed;
    return a > 0 && b > 0 && (a > kMaxRoofRatio * b || b > kMaxRoofRatio * a);
  };
  const std::string speed_note =
      host_speed == 1
          ? std::string()
          : absl::StrFormat(", after the host's own speed (its probe %.3gx of then)", host_speed);
  // A dtype's roofs of different kernel paths are far apart by nature (on
  // LibTorch 1.13 CPUs bfloat16 convolutions run ~4x below bfloat16 GEMM):
  // only a roof of the same dtype and kernel path is comparable.
  for (const v1::MatmulRoof& claimed : report.matmul_roofs()) {
    for (const v1::MatmulRoof& known : stored.details.matmul_roofs()) {
      if (claimed.dtype() != known.dtype() ||
          platform::RoofKernel(claimed) != platform::RoofKernel(known) ||
          !far(claimed.flops_per_sec(), known.flops_per_sec())) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "platform.matmul_roofs[%s, %s].flops_per_sec: %.4g contradicts the %.4g calibrated "
          "for fingerprint '%s' (more than %gx apart%s): a host of that fingerprint cannot be "
          "this far from it; recalibrate it, or check what it fingerprints",
          claimed.dtype(), platform::RoofKernel(claimed), claimed.flops_per_sec(),
          known.flops_per_sec(), stored.details.fingerprint(), kMaxRoofRatio, speed_note));
    }
  }
  for (const v1::BandwidthPoint& claimed : report.bandwidth()) {
    for (const v1::BandwidthPoint& known : stored.details.bandwidth()) {
      if (claimed.kernel() != known.kernel() || claimed.bytes() != known.bytes() ||
          !far(claimed.bytes_per_sec(), known.bytes_per_sec())) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "platform.bandwidth[%s, %d bytes].bytes_per_sec: %.4g contradicts the %.4g calibrated "
          "for fingerprint '%s' (more than %gx apart%s); recalibrate it, or check what it "
          "fingerprints",
          claimed.kernel(), claimed.bytes(), claimed.bytes_per_sec(), known.bytes_per_sec(),
          stored.details.fingerprint(), kMaxRoofRatio, speed_note));
    }
  }
  return absl::OkStatus();
}

// Upsert's write function: the id of the row `platform` is stored under.
absl::StatusOr<int64_t> UpsertPlatform(sqlite3* db, const v1::Platform& platform,
                                       const PlatformReporter& reporter, int64_t now_unix_ms) {
  if (absl::Status s = CheckReport(platform, now_unix_ms); !s.ok()) return s;
  // A claim of a known fingerprint (the fleet's row, or the domain's own)
  // with the same facts must come with a calibration near its own.
  const std::string domain_fingerprint = PlatformFingerprintOf(platform.fingerprint(), reporter);
  for (const std::string& known : {platform.fingerprint(), domain_fingerprint}) {
    absl::StatusOr<std::optional<StoredPlatform>> stored = FindIfStored(db, known);
    if (!stored.ok()) return stored.status();
    if (*stored && FirstDifference((*stored)->details, platform).empty()) {
      if (absl::Status s = CheckRoofsAgree(platform, **stored); !s.ok()) return s;
    }
  }
  std::string fingerprint = domain_fingerprint;
  const std::string& domain = reporter.trust_domain;
  if (absl::Status s = InsertUnlessKnown(db, platform, fingerprint, domain, now_unix_ms); !s.ok()) {
    return s;
  }
  absl::StatusOr<StoredPlatform> row = FindStored(db, fingerprint);
  if (!row.ok()) return row.status();
  if (const std::string differs = FirstDifference(row->details, platform); !differs.empty()) {
    // One fingerprint, other facts: a buggy or hostile worker. Its report is
    // kept apart under a fingerprint of its own and never replaces the first.
    const std::string& who = reporter.worker_id;
    fingerprint = absl::StrCat(fingerprint, "~", who.empty() ? "?" : who);
    spdlog::warn(
        "platform {}: {} reports other facts than its first reporter did ({}); kept "
        "apart as {}",
        row->details.fingerprint(), who.empty() ? "a caller" : who, differs, fingerprint);
    if (absl::Status s = InsertUnlessKnown(db, platform, fingerprint, domain, now_unix_ms);
        !s.ok()) {
      return s;
    }
    row = FindStored(db, fingerprint);
    if (!row.ok()) return row.status();
  }
  if (absl::Status s = RefreshIfOwned(db, platform, fingerprint, domain, *row); !s.ok()) return s;
  return row->id;
}

}  // namespace

std::string PlatformFingerprintOf(const std::string& fingerprint,
                                  const PlatformReporter& reporter) {
  if (reporter.trust_domain.empty()) return fingerprint;
  return absl::StrCat(fingerprint, "@", reporter.trust_domain);
}

void PlatformStore::Upsert(const v1::Platform& platform, Callback<int64_t> done,
                           const PlatformReporter& reporter) {
  // Upsert takes no clock; created_unix_ms is informational (when the
  // coordinator first met this stack) and nothing schedules on it.
  const int64_t now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  internal::WriteValue<int64_t>(
      db_,
      [platform, reporter, now_unix_ms](sqlite3* db) -> absl::StatusOr<int64_t> {
        return UpsertPlatform(db, platform, reporter, now_unix_ms);
      },
      std::move(done));
}

absl::StatusOr<int64_t> PlatformStore::UpsertSync(const v1::Platform& platform,
                                                  const PlatformReporter& reporter) {
  return internal::Await<int64_t>(
      db_, [&](Callback<int64_t> done) { Upsert(platform, std::move(done), reporter); });
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
