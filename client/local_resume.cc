#include "client/local_resume.h"

#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/database.h"
#include "db/sweep_store.h"

namespace paradnn::client {
namespace {

// The file, opened under its lock (released with the object).
struct LockedDatabase {
  std::optional<db::DatabaseFileLock> lock;
  std::unique_ptr<db::Database> database;
};

absl::StatusOr<LockedDatabase> OpenLocked(const std::string& db_path) {
  LockedDatabase opened;
  absl::StatusOr<db::DatabaseFileLock> lock = db::DatabaseFileLock::Acquire(db_path);
  if (!lock.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--db ", db_path, " is in use: ", lock.status().message(),
                     " (one paradnn local or coordinator per database file)"));
  }
  opened.lock.emplace(*std::move(lock));
  absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(db_path);
  if (!database.ok()) return database.status();
  opened.database = *std::move(database);
  return opened;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Unfinished(const v1::SweepStatus& sweep) {
  return sweep.state() == v1::SWEEP_INTERRUPTED || sweep.state() == v1::SWEEP_RUNNING;
}

}  // namespace

absl::StatusOr<std::optional<v1::SweepStatus>> ClaimSweepToResume(const std::string& db_path,
                                                                  const v1::SweepSpec* spec) {
  if (::access(db_path.c_str(), F_OK) != 0) {
    if (spec == nullptr) {
      return absl::NotFoundError(absl::StrCat("--resume: no database ", db_path));
    }
    return std::nullopt;
  }
  absl::StatusOr<LockedDatabase> opened = OpenLocked(db_path);
  if (!opened.ok()) return opened.status();
  db::SweepStore sweeps(opened->database.get());
  absl::StatusOr<std::vector<v1::SweepStatus>> listed = sweeps.List(NowUnixMs());
  if (!listed.ok()) return listed.status();
  const v1::SweepStatus* chosen = nullptr;
  for (const v1::SweepStatus& sweep : *listed) {
    if (!Unfinished(sweep)) continue;
    if (spec != nullptr &&
        !google::protobuf::util::MessageDifferencer::Equals(sweep.spec(), *spec)) {
      continue;
    }
    if (chosen == nullptr || sweep.sweep_id() > chosen->sweep_id()) chosen = &sweep;
  }
  if (chosen == nullptr) {
    if (spec == nullptr) {
      return absl::NotFoundError(absl::StrCat("--resume: no interrupted sweep in ", db_path,
                                              "; give a sweep file to start one"));
    }
    return std::nullopt;
  }
  absl::StatusOr<bool> moved =
      sweeps.MoveStateSync(chosen->sweep_id(), v1::SWEEP_INTERRUPTED, v1::SWEEP_RUNNING);
  if (!moved.ok()) return moved.status();
  absl::StatusOr<v1::SweepStatus> status = sweeps.Get(chosen->sweep_id(), NowUnixMs());
  if (!status.ok()) return status.status();
  return std::optional<v1::SweepStatus>(*std::move(status));
}

absl::StatusOr<v1::SweepStatus> MarkInterrupted(const std::string& db_path, int64_t sweep_id) {
  absl::StatusOr<LockedDatabase> opened = OpenLocked(db_path);
  if (!opened.ok()) return opened.status();
  db::SweepStore sweeps(opened->database.get());
  absl::StatusOr<bool> moved =
      sweeps.MoveStateSync(sweep_id, v1::SWEEP_RUNNING, v1::SWEEP_INTERRUPTED);
  if (!moved.ok()) return moved.status();
  return sweeps.Get(sweep_id, NowUnixMs());
}

absl::StatusOr<v1::SweepStatus> ContinueOrSubmit(const CommandContext& ctx,
                                                 CoordinatorClient& client,
                                                 const std::optional<v1::SweepStatus>& resumed,
                                                 const std::optional<v1::SweepSpec>& spec,
                                                 const std::string& workers,
                                                 const std::string& db_path, int64_t max_jobs) {
  if (resumed.has_value()) {
    *ctx.err << "sweep " << resumed->sweep_id() << " (" << resumed->name() << "): continuing, "
             << resumed->done_jobs() << " of " << resumed->total_jobs() << " jobs done, on "
             << workers << ", database " << db_path << "\n"
             << std::flush;
    return *resumed;
  }
  absl::StatusOr<v1::SubmitSweepResponse> submitted = client.SubmitSweep(*spec, max_jobs);
  if (!submitted.ok()) return submitted.status();
  *ctx.err << "sweep " << submitted->sweep_id() << " (" << spec->name()
           << "): " << submitted->jobs() << " jobs on " << workers << ", database " << db_path
           << "\n"
           << std::flush;
  v1::SweepStatus status;
  status.set_sweep_id(submitted->sweep_id());
  status.set_name(spec->name());
  return status;
}

void MarkAndSayInterrupted(const CommandContext& ctx, const std::string& db_path,
                           int64_t sweep_id) {
  absl::StatusOr<v1::SweepStatus> left = MarkInterrupted(db_path, sweep_id);
  if (!left.ok()) {
    *ctx.err << "paradnn: warning: could not mark sweep " << sweep_id
             << " interrupted: " << left.status().message() << "\n";
  } else if (left->state() == v1::SWEEP_INTERRUPTED) {
    *ctx.err << "paradnn: sweep " << sweep_id << " interrupted with " << left->done_jobs() << " of "
             << left->total_jobs() << " jobs done; `paradnn local --resume --db " << db_path
             << "` (or the same command again) continues it\n";
  }
  *ctx.err << std::flush;
}

}  // namespace paradnn::client
