// Workers: connections, last seen, the jobs each has done.
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. Thread-safe.
#ifndef PARADNN_DB_WORKER_STORE_H_
#define PARADNN_DB_WORKER_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.pb.h"

namespace paradnn::db {

class WorkerStore {
 public:
  explicit WorkerStore(Database* db) : db_(db) {}
  // Records a (re)connected worker, its timing harness and its trust domain
  // (common::TrustDomainOf; results it measures carry both). platform_id <=
  // 0, or one that is not stored, records no platform. These three writes
  // are fire-and-forget: failures are logged.
  void Connected(const std::string& worker_id, const std::string& device_kind,
                 const std::string& hostname, int64_t platform_id, const std::string& harness,
                 const std::string& trust_domain, int64_t now_unix_ms);
  void Disconnected(const std::string& worker_id, int64_t now_unix_ms);
  void Seen(const std::string& worker_id, int64_t now_unix_ms);
  // Every worker ever seen, with its platform and jobs_done (count of results).
  absl::StatusOr<std::vector<v1::WorkerInfo>> List() const;
  // Marks every worker disconnected (start-up: no stream survives a restart).
  absl::Status MarkAllDisconnectedSync(int64_t now_unix_ms);

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_WORKER_STORE_H_
