// The CLI's commands against a coordinator (Coordinator service, sync stubs,
// every unary call and result query under a deadline) and the exit statuses
// they return. CoordinatorClient is implemented in coordinator_client.cc,
// the commands in commands.cc.
#ifndef PARADNN_CLIENT_COMMANDS_H_
#define PARADNN_CLIENT_COMMANDS_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/interrupt.h"
#include "client/output_format.h"
#include "common/auth.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::client {

// Exit statuses of every command.
inline constexpr int kExitOk = 0;
// The sweep finished but some job has no result (failed or cancelled), or
// an unexpected error.
inline constexpr int kExitFailed = 1;
// Bad input: a sweep file, a flag, an unknown sweep, a request the
// coordinator refused (a missing or wrong token included).
inline constexpr int kExitUsage = 2;
// The coordinator could not be reached, or the connection broke.
inline constexpr int kExitUnavailable = 3;
// Stopped by SIGINT/SIGTERM (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

// The exit status for a failed call: 2 for request errors (InvalidArgument,
// NotFound, FailedPrecondition, AlreadyExists, OutOfRange, Unauthenticated,
// PermissionDenied), 3 for
// Unavailable and DeadlineExceeded, 130 for Cancelled, else 1.
int ExitCodeFor(const absl::Status& status);

absl::Status FromGrpc(const grpc::Status& status);

// The TLS settings and token of every CoordinatorClient built without
// explicit ones (default: plaintext, no token). main sets it once, before
// any client exists; not thread-safe.
void SetDefaultClientSecurity(common::ClientSecurity security);

// A sync client of one coordinator. Thread-compatible: one call at a time,
// except that the interrupt handler may cancel the call in flight.
class CoordinatorClient {
 public:
  // `address` as common::ResolveCoordinatorAddress returns it. Connects
  // with the default security (SetDefaultClientSecurity) or `security`.
  CoordinatorClient(std::string address, double timeout_seconds);
  CoordinatorClient(std::string address, double timeout_seconds,
                    const common::ClientSecurity& security);

  const std::string& address() const { return address_; }

  absl::StatusOr<v1::SubmitSweepResponse> SubmitSweep(const v1::SweepSpec& spec, int64_t max_jobs);
  absl::StatusOr<v1::SweepStatus> GetSweep(int64_t sweep_id);
  absl::StatusOr<std::vector<v1::SweepStatus>> ListSweeps();
  absl::StatusOr<v1::SweepStatus> CancelSweep(int64_t sweep_id);
  absl::StatusOr<std::vector<v1::ResultRow>> QueryResults(int64_t sweep_id, bool samples,
                                                          InterruptWatcher* interrupts);
  absl::StatusOr<std::vector<v1::WorkerInfo>> ListWorkers();
  absl::StatusOr<v1::AnalyzeResponse> Analyze(const v1::AnalyzeRequest& request);
  absl::StatusOr<v1::FleetGoodputResponse> FleetGoodput(const v1::FleetGoodputRequest& request);
  absl::StatusOr<v1::PredictResponse> Predict(const v1::PredictRequest& request);
  // Streams the batches `next` fills (until it returns false) as one
  // IngestFleetEvents call, without the unary deadline (a file of millions
  // of lines takes what it takes); Cancelled when interrupted.
  absl::StatusOr<v1::IngestFleetEventsResponse> IngestFleetEvents(
      const std::function<bool(v1::FleetEventLines*)>& next, InterruptWatcher* interrupts);
  absl::StatusOr<v1::FleetReportResponse> FleetReport(const v1::FleetReportRequest& request);

  // Follows WatchSweep until the sweep is no longer running and returns its
  // final status. `on_tick(latest, elapsed_seconds)` runs on the calling
  // thread at every update and at least once a second in between; elapsed
  // keeps counting between updates. `health` (may be empty) runs on each
  // tick; an error from it ends the watch with that error. Unavailable when
  // the stream ends before the sweep does; Cancelled when interrupted.
  absl::StatusOr<v1::SweepStatus> Watch(
      int64_t sweep_id, InterruptWatcher* interrupts,
      const std::function<void(const v1::SweepStatus&, double)>& on_tick,
      const std::function<absl::Status()>& health);

 private:
  void SetDeadline(grpc::ClientContext* context) const;
  absl::Status Annotate(const grpc::Status& status) const;
  // A unary method of the stub, such as &v1::Coordinator::Stub::GetSweep.
  template <typename Request, typename Response>
  using UnaryMethod = grpc::Status (v1::Coordinator::Stub::*)(grpc::ClientContext*, const Request&,
                                                              Response*);
  // One call of `method` under the deadline: its response, or its status
  // through Annotate.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Unary(UnaryMethod<Request, Response> method, const Request& request);

  std::string address_;
  double timeout_seconds_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// What every command needs: where the coordinator is, the RPC deadline,
// where to write, and the signal watcher (may be null).
struct CommandContext {
  std::string address;
  double timeout_seconds = 30;
  InterruptWatcher* interrupts = nullptr;
  std::ostream* out = nullptr;   // results (stdout)
  std::ostream* err = nullptr;   // diagnostics and progress (stderr)
  bool err_is_terminal = false;  // draw the progress line in place
};

// Follows a sweep with a progress line on ctx.err; returns the exit status
// as for `paradnn watch`. `health` as for CoordinatorClient::Watch.
int WatchWithProgress(const CommandContext& ctx, CoordinatorClient& client, int64_t sweep_id,
                      const std::function<absl::Status()>& health = {});

// Exit status of a finished sweep: 0 when every job has a result, else 1.
int ExitCodeForSweep(const v1::SweepStatus& status);

// Prints a failed call's error on ctx.err ("paradnn: ...") and returns its
// exit status.
int ReportError(const CommandContext& ctx, const absl::Status& status);

// Which table `paradnn results` prints.
struct ResultsView {
  // kAuto: one row per configuration with the spread across repeats when the
  // sweep has repeats (result_views.h), else one row per job.
  enum Kind { kAuto, kJobs, kOps } kind = kAuto;
  bool samples = false;  // per-step seconds (job rows only)
  size_t top_ops = 10;   // kOps: operators per job, 0 = all
  bool wide = false;     // table: every column (FormatHumanTable), not FormatNarrowTable
};

// Writes the results of `rows` in `format` to ctx.out, as `view` says.
void PrintResults(const CommandContext& ctx, const std::vector<v1::ResultRow>& rows,
                  OutputFormat format, const ResultsView& view);

// Where a sweep comes from: a sweep file (FILE, "-" for standard input) or
// an embedded preset (--preset NAME), exactly one of them.
struct SweepSource {
  std::string file;
  std::string preset;
  // --run-predicted-oom: run configurations whose memory estimate exceeds a
  // worker's memory anyway (a file may also say run_predicted_oom: true).
  bool run_predicted_oom = false;
  // --budget: a budgeted sweep (docs/prediction.md); 0 keeps the file's.
  double budget_seconds = 0;
  // --fresh: measure every configuration even where an earlier sweep has a
  // reusable result (RunSettings.fresh); false keeps the file's.
  bool fresh = false;
  // --target-interval: repeat until each configuration's mean is within
  // +- this fraction (RunSettings.target_interval); 0 keeps the file's.
  double target_interval = 0;
};

// Reads and validates the sweep `source` names (client/sweep_file.h,
// client/presets.h) with a cap of `max_jobs` configurations.
absl::StatusOr<v1::SweepSpec> LoadSweep(const SweepSource& source, int64_t max_jobs);

// What `paradnn submit` prints for an accepted sweep: its id, name, job
// count and the coordinator's estimates, e.g.
//   submitted sweep 3 (paper-fc): 9720 jobs
//     model FLOPs per step, all jobs: 1.23 P; parameters 170k .. 520M;
//     largest memory estimate 31.2 GiB
std::string FormatSubmitted(const std::string& name, const v1::SubmitSweepResponse& response);

// `paradnn submit FILE|--preset NAME [-q] [--max-jobs N] [--run-predicted-oom]`.
int RunSubmit(const CommandContext& ctx, const SweepSource& source, bool quiet, int64_t max_jobs);
// `paradnn presets`: every preset with its family, job count and
// description. Needs no coordinator.
int RunPresets(const CommandContext& ctx);
// `paradnn watch SWEEP`.
int RunWatch(const CommandContext& ctx, int64_t sweep_id);
// `paradnn status [SWEEP]`.
int RunStatus(const CommandContext& ctx, std::optional<int64_t> sweep_id,
              OutputFormat format = OutputFormat::kTable);
// The warning `submit` prints when no connected worker has `device`,
// naming what is connected; "" when one has.
std::string NoWorkerForDevice(const std::string& device,
                              const std::vector<v1::WorkerInfo>& workers);

// `paradnn results SWEEP... [--format F] [--samples] [--jobs | --ops [--top N]]
// [--db FILE]`: the rows of every sweep given, in one table, from the
// coordinator or (`db_path` non-empty) the SQLite file read-only.
int RunResults(const CommandContext& ctx, const std::vector<int64_t>& sweep_ids,
               OutputFormat format, const ResultsView& view, const std::string& db_path = "");
// `paradnn workers`.
int RunWorkers(const CommandContext& ctx, OutputFormat format = OutputFormat::kTable);
// `paradnn fleet [--sweep ID] [--window S] [--format table|json]`: fleet
// goodput per device kind (docs/observability.md).
int RunFleet(const CommandContext& ctx, int64_t sweep_id, double window_seconds,
             const std::string& format);
// The `paradnn fleet` table: one row per device kind and a total.
std::string FormatFleetGoodput(const v1::FleetGoodputResponse& goodput);
// `paradnn cancel SWEEP`.
int RunCancel(const CommandContext& ctx, int64_t sweep_id);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_COMMANDS_H_
