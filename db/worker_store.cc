// PlatformStore and WorkerStore: the fleet as the coordinator has seen it.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "db/stores.h"
#include "db/stores_internal.h"

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
        if (platform.fingerprint().empty()) {
          return absl::InvalidArgumentError("platform.fingerprint is empty");
        }
        if (platform.calibrated_unix_ms() > now_unix_ms + kMaxClockSkewMs) {
          return absl::InvalidArgumentError(absl::StrCat(
              "platform.calibrated_unix_ms: ", platform.calibrated_unix_ms(),
              " is more than a day in the future (now ", now_unix_ms, ")"));
        }
        auto insert = [&](const std::string& fingerprint) -> absl::Status {
          // The first host to report a fingerprint describes it (and owns
          // its roofs); later hosts with the same stack differ only in
          // hostname, which the fingerprint deliberately leaves out.
          Statement statement(
              db,
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
        };
        struct Row {
          int64_t id = 0;
          std::string owner;
          v1::Platform details;
        };
        auto find = [&](const std::string& fingerprint) -> absl::StatusOr<Row> {
          Statement statement(db, "SELECT id, details, owner FROM platforms WHERE fingerprint = ?");
          statement.Bind(1, fingerprint);
          absl::StatusOr<bool> found = statement.Step();
          if (!found.ok()) return found.status();
          if (!*found) return absl::InternalError("platform vanished right after its insert");
          Row row;
          row.id = statement.ColumnInt(0);
          row.owner = statement.ColumnText(2);
          if (absl::Status s =
                  internal::ParseBlob(statement.ColumnBlob(1), &row.details, "platforms", row.id);
              !s.ok()) {
            return s;
          }
          return row;
        };
        std::string fingerprint = platform.fingerprint();
        if (absl::Status s = insert(fingerprint); !s.ok()) return s;
        absl::StatusOr<Row> row = find(fingerprint);
        if (!row.ok()) return row.status();
        if (const std::string differs = FirstDifference(row->details, platform); !differs.empty()) {
          // One fingerprint, other facts: a buggy or hostile worker. Its
          // report is kept apart under a fingerprint of its own and never
          // replaces the first.
          fingerprint = absl::StrCat(platform.fingerprint(), "~", owner.empty() ? "?" : owner);
          spdlog::warn("platform {}: {} reports other facts than {} did ({}); kept apart as {}",
                       platform.fingerprint(), owner.empty() ? "a caller" : owner,
                       row->owner.empty() ? "its first reporter" : row->owner, differs,
                       fingerprint);
          if (absl::Status s = insert(fingerprint); !s.ok()) return s;
          row = find(fingerprint);
          if (!row.ok()) return row.status();
        }
        // Only the platform's owner replaces its roofs with a newer
        // calibration (rows from before owners are claimed by the next).
        if (!row->owner.empty() && row->owner != owner) return row->id;
        if (row->owner.empty() && !owner.empty()) {
          Statement claim(db, "UPDATE platforms SET owner = ? WHERE id = ?");
          claim.Bind(1, owner).Bind(2, row->id);
          if (absl::Status s = claim.Run(); !s.ok()) return s;
        }
        if (platform.calibrated_unix_ms() > row->details.calibrated_unix_ms()) {
          v1::Platform stored = platform;
          stored.set_fingerprint(fingerprint);
          Statement update(db, "UPDATE platforms SET details = ? WHERE id = ?");
          update.BindBlob(1, stored.SerializeAsString()).Bind(2, row->id);
          if (absl::Status s = update.Run(); !s.ok()) return s;
        }
        return row->id;
      },
      std::move(done));
}

absl::StatusOr<int64_t> PlatformStore::UpsertSync(const v1::Platform& platform,
                                                  const std::string& owner) {
  return internal::Await<int64_t>(
      db_, [&](Callback<int64_t> done) { Upsert(platform, std::move(done), owner); });
}

absl::StatusOr<v1::Platform> PlatformStore::Get(int64_t platform_id) const {
  v1::Platform platform;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
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

// ---- workers --------------------------------------------------------------

void WorkerStore::Connected(const std::string& worker_id, const std::string& device_kind,
                            const std::string& hostname, int64_t platform_id, int64_t now_unix_ms) {
  db_->Write(
      [worker_id, device_kind, hostname, platform_id, now_unix_ms](sqlite3* db) -> absl::Status {
        // An unknown platform id links no platform rather than losing the
        // worker's row: nobody waits on this write to hear about the error.
        Statement upsert(db,
                         "INSERT INTO workers (id, device_kind, hostname, platform_id, connected, "
                         "connected_unix_ms, last_seen_unix_ms) VALUES (?1, ?2, ?3, "
                         "(SELECT id FROM platforms WHERE id = ?4), 1, ?5, ?5) "
                         "ON CONFLICT (id) DO UPDATE SET device_kind = excluded.device_kind, "
                         "hostname = excluded.hostname, platform_id = excluded.platform_id, "
                         "connected = 1, connected_unix_ms = excluded.connected_unix_ms, "
                         "last_seen_unix_ms = excluded.last_seen_unix_ms");
        upsert.Bind(1, worker_id).Bind(2, device_kind).Bind(3, hostname);
        internal::BindOptionalId(upsert, 4, platform_id);
        upsert.Bind(5, now_unix_ms);
        return upsert.Run();
      },
      internal::LogIfFailed(absl::StrCat("record worker ", worker_id, " connected")));
}

void WorkerStore::Disconnected(const std::string& worker_id, int64_t now_unix_ms) {
  db_->Write(
      [worker_id, now_unix_ms](sqlite3* db) -> absl::Status {
        Statement update(db,
                         "UPDATE workers SET connected = 0, last_seen_unix_ms = ? WHERE id = ?");
        update.Bind(1, now_unix_ms).Bind(2, worker_id);
        return update.Run();
      },
      internal::LogIfFailed(absl::StrCat("record worker ", worker_id, " disconnected")));
}

void WorkerStore::Seen(const std::string& worker_id, int64_t now_unix_ms) {
  db_->Write(
      [worker_id, now_unix_ms](sqlite3* db) -> absl::Status {
        Statement update(db, "UPDATE workers SET last_seen_unix_ms = ? WHERE id = ?");
        update.Bind(1, now_unix_ms).Bind(2, worker_id);
        return update.Run();
      },
      internal::LogIfFailed(absl::StrCat("record worker ", worker_id, " seen")));
}

absl::StatusOr<std::vector<v1::WorkerInfo>> WorkerStore::List() const {
  std::vector<v1::WorkerInfo> workers;
  absl::Status status = db_->Read([&](sqlite3* db) -> absl::Status {
    Statement list(db,
                   "SELECT w.id, w.device_kind, w.hostname, w.connected, w.connected_unix_ms, "
                   "w.last_seen_unix_ms, p.id, p.details, "
                   "(SELECT COUNT(*) FROM results r WHERE r.worker_id = w.id) "
                   "FROM workers w LEFT JOIN platforms p ON p.id = w.platform_id ORDER BY w.id");
    for (;;) {
      absl::StatusOr<bool> more = list.Step();
      if (!more.ok()) return more.status();
      if (!*more) return absl::OkStatus();
      v1::WorkerInfo& info = workers.emplace_back();
      info.set_worker_id(list.ColumnText(0));
      info.set_device_kind(list.ColumnText(1));
      info.set_hostname(list.ColumnText(2));
      info.set_connected(list.ColumnInt(3) != 0);
      // Busy is live state only the coordinator knows; it overlays it.
      info.set_state(info.connected() ? "idle" : "disconnected");
      info.set_connected_unix_ms(list.ColumnInt(4));
      info.set_last_seen_unix_ms(list.ColumnInt(5));
      if (!list.ColumnIsNull(6)) {
        if (absl::Status s = internal::ParseBlob(list.ColumnBlob(7), info.mutable_platform(),
                                                 "platforms", list.ColumnInt(6));
            !s.ok()) {
          return s;
        }
      }
      info.set_jobs_done(list.ColumnInt(8));
    }
  });
  if (!status.ok()) return status;
  return workers;
}

absl::Status WorkerStore::MarkAllDisconnectedSync(int64_t /*now_unix_ms*/) {
  // last_seen_unix_ms keeps the last real sighting: a coordinator restart
  // saw none of these workers, so the restart time is not recorded there.
  return db_->WriteSync([](sqlite3* db) -> absl::Status {
    Statement update(db, "UPDATE workers SET connected = 0 WHERE connected != 0");
    return update.Run();
  });
}

}  // namespace paradnn::db
