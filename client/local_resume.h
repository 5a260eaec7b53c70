// What `paradnn local` reads and writes in its --db file itself, while no
// coordinator runs on it and under the file's lock (db::DatabaseFileLock,
// the one the coordinator takes): which sweep a run continues, and marking
// a sweep interrupted after Ctrl-C, so that it waits (its jobs not leased)
// instead of being "running" forever or finished behind a new full sweep.
// Also what a run says of it: the sweep continued or submitted, and the
// sweep left interrupted.
#ifndef PARADNN_CLIENT_LOCAL_RESUME_H_
#define PARADNN_CLIENT_LOCAL_RESUME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "paradnn/v1/coordinator.pb.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// The sweep to continue instead of submitting `spec`, marked running again:
// the newest sweep of the file that is interrupted, or running (its run was
// killed before it could say so), and whose spec is `spec`. nullopt when
// there is none or no file yet. With `spec` null, the newest interrupted or
// running sweep whatever its spec (`paradnn local --resume`); NotFound when
// there is none. FailedPrecondition naming the holder when another process
// (a paradnn local or a coordinator) holds the file.
absl::StatusOr<std::optional<v1::SweepStatus>> ClaimSweepToResume(const std::string& db_path,
                                                                  const v1::SweepSpec* spec);

// Marks `sweep_id` interrupted if it is running; its status after.
absl::StatusOr<v1::SweepStatus> MarkInterrupted(const std::string& db_path, int64_t sweep_id);

// The sweep a run follows on the private coordinator `client`: `resumed`
// (ClaimSweepToResume) when set, else `spec` submitted; says which on
// ctx.err, with `workers` ("2 local workers") and `db_path`.
absl::StatusOr<v1::SweepStatus> ContinueOrSubmit(const CommandContext& ctx,
                                                 CoordinatorClient& client,
                                                 const std::optional<v1::SweepStatus>& resumed,
                                                 const std::optional<v1::SweepSpec>& spec,
                                                 const std::string& workers,
                                                 const std::string& db_path, int64_t max_jobs);

// Marks `sweep_id` interrupted (MarkInterrupted), so that no later run
// mistakes it for running, and says how to continue it on ctx.err.
void MarkAndSayInterrupted(const CommandContext& ctx, const std::string& db_path, int64_t sweep_id);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_LOCAL_RESUME_H_
