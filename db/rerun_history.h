// The measured results of one platform as the re-run model reads them
// (server/analysis/rerun_model.h): which configuration each measured, its
// step time, its own interval and the host-speed sentinel around it.
#ifndef PARADNN_DB_RERUN_HISTORY_H_
#define PARADNN_DB_RERUN_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/database.h"

namespace paradnn::db {

struct StoredRun {
  // Runs with equal groups measured the same thing: the configuration,
  // precision, optimizer, thread counts and the stack settings in effect.
  std::string group;
  double step_s = 0;      // median step seconds
  double within_rel = 0;  // StepStats.ci95_rel
  double sentinel = 0;    // the readings the job took itself (common::OwnHostSpeed); 0 = none
  int64_t job_id = 0;
};

// The OK results measured on platform `fingerprint` (platforms.fingerprint,
// domain suffix included), newest first, at most `limit`. Reused results
// are copies, not re-runs, and are left out. Reads on the caller's thread.
absl::StatusOr<std::vector<StoredRun>> LoadStoredRuns(const Database& database,
                                                      const std::string& fingerprint, size_t limit);

}  // namespace paradnn::db

#endif  // PARADNN_DB_RERUN_HISTORY_H_
