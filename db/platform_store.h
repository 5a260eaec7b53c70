// Platforms (fingerprinted hosts and devices, with their roofs), each
// described by its first reporter.
// Every mutating method goes through Database::Write (the writer thread) and
// has an async form taking a callback that runs after commit, plus a
// blocking *Sync form for tests and start-up. Reads run on the caller's
// thread. Thread-safe.
#ifndef PARADNN_DB_PLATFORM_STORE_H_
#define PARADNN_DB_PLATFORM_STORE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "db/database.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::db {

// The platform stored as `platform_id`; NotFound for an unknown id.
absl::StatusOr<v1::Platform> ReadPlatform(const Database& database, int64_t platform_id);
// The platform stored under `fingerprint` (as ResultRow.platform_fingerprint
// names it); NotFound when none is.
absl::StatusOr<v1::Platform> ReadPlatformByFingerprint(const Database& database,
                                                       const std::string& fingerprint);

// Who reports a platform: a worker and its trust domain
// (common::TrustDomainOf; "" = the operator's own fleet).
struct PlatformReporter {
  std::string worker_id;
  std::string trust_domain;
};

// The fingerprint a report is stored under: its own for the fleet's domain,
// "<fingerprint>@<trust domain>" for another, so that which domain reports
// first changes nothing (docs/security.md, "Whose results are reused").
std::string PlatformFingerprintOf(const std::string& fingerprint, const PlatformReporter& reporter);

class PlatformStore {
 public:
  explicit PlatformStore(Database* db) : db_(db) {}
  // Inserts the platform under PlatformFingerprintOf if that is new; returns
  // its id either way (the first report's facts are kept). The reporter's
  // trust domain owns the row: any of its workers, and no other, replaces
  // the roofs with a newer calibration. A report whose facts (device, cores,
  // libraries, ISA, stack settings) differ from the stored ones under the
  // same fingerprint is kept apart, under "<fingerprint>~<worker id>", and
  // never replaces the first. InvalidArgument for an empty fingerprint, a
  // calibration time more than a day ahead of the coordinator's clock, or a
  // report with the facts of a stored fingerprint (the fleet's or its
  // domain's) whose calibrated roof is more than 4x from the stored one.
  void Upsert(const v1::Platform& platform, Callback<int64_t> done,
              const PlatformReporter& reporter = {});
  absl::StatusOr<int64_t> UpsertSync(const v1::Platform& platform,
                                     const PlatformReporter& reporter = {});
  // NotFound for an unknown id.
  absl::StatusOr<v1::Platform> Get(int64_t platform_id) const {
    return ReadPlatform(*db_, platform_id);
  }

 private:
  Database* db_;
};

}  // namespace paradnn::db

#endif  // PARADNN_DB_PLATFORM_STORE_H_
