// WorkerStore: the fleet as the coordinator has seen it.
#include "db/worker_store.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/state_names.h"
#include "db/stores_internal.h"
#include "spdlog/spdlog.h"

namespace paradnn::db {

// ---- workers --------------------------------------------------------------

void WorkerStore::Connected(const std::string& worker_id, const std::string& device_kind,
                            const std::string& hostname, int64_t platform_id,
                            const std::string& harness, const std::string& trust_domain,
                            int64_t now_unix_ms) {
  db_->Write(
      [worker_id, device_kind, hostname, platform_id, harness, trust_domain,
       now_unix_ms](sqlite3* db) -> absl::Status {
        // An unknown platform id links no platform rather than losing the
        // worker's row: nobody waits on this write to hear about the error.
        Statement upsert(
            db,
            "INSERT INTO workers (id, device_kind, hostname, platform_id, connected, "
            "connected_unix_ms, last_seen_unix_ms, harness, trust_domain) VALUES "
            "(?1, ?2, ?3, (SELECT id FROM platforms WHERE id = ?4), 1, ?5, ?5, ?6, ?7) "
            "ON CONFLICT (id) DO UPDATE SET device_kind = excluded.device_kind, "
            "hostname = excluded.hostname, platform_id = excluded.platform_id, "
            "connected = 1, connected_unix_ms = excluded.connected_unix_ms, "
            "last_seen_unix_ms = excluded.last_seen_unix_ms, "
            "harness = excluded.harness, trust_domain = excluded.trust_domain");
        upsert.Bind(1, worker_id).Bind(2, device_kind).Bind(3, hostname);
        internal::BindOptionalId(upsert, 4, platform_id);
        upsert.Bind(5, now_unix_ms).Bind(6, harness).Bind(7, trust_domain);
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
    return list.ForEachRow([&]() -> absl::Status {
      v1::WorkerInfo& info = workers.emplace_back();
      info.set_worker_id(list.ColumnText(0));
      info.set_device_kind(list.ColumnText(1));
      info.set_hostname(list.ColumnText(2));
      info.set_connected(list.ColumnInt(3) != 0);
      // Busy is live state only the coordinator knows; it overlays it.
      info.set_worker_state(info.connected() ? v1::WORKER_IDLE : v1::WORKER_DISCONNECTED);
      info.set_state(common::WorkerStateName(info.worker_state()));
      info.set_connected_unix_ms(list.ColumnInt(4));
      info.set_last_seen_unix_ms(list.ColumnInt(5));
      info.set_jobs_done(list.ColumnInt(8));
      if (list.ColumnIsNull(6)) return absl::OkStatus();
      return internal::ParseBlob(list.ColumnBlob(7), info.mutable_platform(), "platforms",
                                 list.ColumnInt(6));
    });
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
