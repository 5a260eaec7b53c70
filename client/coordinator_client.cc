// CoordinatorClient (client/commands.h): the Coordinator service's calls
// under a deadline, the watch of a sweep, and the exit statuses of failed
// calls. The commands that use it are in commands.cc.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/commands.h"
#include "common/auth.h"

namespace paradnn::client {
namespace {

// Results with per-step samples can exceed gRPC's 4 MiB default.
constexpr int kMaxReceiveBytes = 256 << 20;

using SteadyClock = std::chrono::steady_clock;

common::ClientSecurity& DefaultClientSecurity() {
  static common::ClientSecurity* security = new common::ClientSecurity();
  return *security;
}

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kCancelled:
      return kExitInterrupted;
    default:
      return kExitFailed;
  }
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void SetDefaultClientSecurity(common::ClientSecurity security) {
  DefaultClientSecurity() = std::move(security);
}

CoordinatorClient::CoordinatorClient(std::string address, double timeout_seconds)
    : CoordinatorClient(std::move(address), timeout_seconds, DefaultClientSecurity()) {}

CoordinatorClient::CoordinatorClient(std::string address, double timeout_seconds,
                                     const common::ClientSecurity& security)
    : address_(std::move(address)), timeout_seconds_(timeout_seconds) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  channel_ = common::CreateSecureChannel(address_, security, args);
  stub_ = v1::Coordinator::NewStub(channel_);
}

void CoordinatorClient::SetDeadline(grpc::ClientContext* context) const {
  // gRPC converts only system_clock time points.
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds_)));
}

absl::Status CoordinatorClient::Annotate(const grpc::Status& status) const {
  absl::Status s = FromGrpc(status);
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
      return absl::UnavailableError(
          absl::StrCat("cannot reach the coordinator at ", address_, ": ", s.message()));
    case absl::StatusCode::kDeadlineExceeded:
      return absl::DeadlineExceededError(absl::StrCat("the coordinator at ", address_,
                                                      " did not answer within ", timeout_seconds_,
                                                      " s (--timeout)"));
    case absl::StatusCode::kCancelled:
      return absl::CancelledError("interrupted");
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return absl::Status(
          s.code(),
          absl::StrCat("the coordinator at ", address_, " refused the call: ", s.message(),
                       " (give a client token with --token-file or $", common::kTokenEnv, ")"));
    default:
      return s;
  }
}

template <typename Request, typename Response>
absl::StatusOr<Response> CoordinatorClient::Unary(UnaryMethod<Request, Response> method,
                                                  const Request& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  Response response;
  if (grpc::Status s = (stub_.get()->*method)(&context, request, &response); !s.ok()) {
    return Annotate(s);
  }
  return response;
}

absl::StatusOr<v1::SubmitSweepResponse> CoordinatorClient::SubmitSweep(const v1::SweepSpec& spec,
                                                                       int64_t max_jobs) {
  v1::SubmitSweepRequest request;
  *request.mutable_spec() = spec;
  request.set_max_jobs(max_jobs);
  return Unary(&v1::Coordinator::Stub::SubmitSweep, request);
}

absl::StatusOr<v1::SweepStatus> CoordinatorClient::GetSweep(int64_t sweep_id) {
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  return Unary(&v1::Coordinator::Stub::GetSweep, request);
}

absl::StatusOr<std::vector<v1::SweepStatus>> CoordinatorClient::ListSweeps() {
  absl::StatusOr<v1::ListSweepsResponse> response =
      Unary(&v1::Coordinator::Stub::ListSweeps, v1::ListSweepsRequest());
  if (!response.ok()) return response.status();
  return std::vector<v1::SweepStatus>(response->sweeps().begin(), response->sweeps().end());
}

absl::StatusOr<v1::SweepStatus> CoordinatorClient::CancelSweep(int64_t sweep_id) {
  v1::CancelSweepRequest request;
  request.set_sweep_id(sweep_id);
  return Unary(&v1::Coordinator::Stub::CancelSweep, request);
}

absl::StatusOr<std::vector<v1::ResultRow>> CoordinatorClient::QueryResults(
    int64_t sweep_id, bool samples, InterruptWatcher* interrupts) {
  grpc::ClientContext context;
  SetDeadline(&context);
  ScopedInterruptHandler cancel(interrupts, [&context] { context.TryCancel(); });
  v1::QueryResultsRequest request;
  request.set_sweep_id(sweep_id);
  request.set_include_samples(samples);
  std::unique_ptr<grpc::ClientReader<v1::ResultRow>> reader =
      stub_->QueryResults(&context, request);
  std::vector<v1::ResultRow> rows;
  v1::ResultRow row;
  while (reader->Read(&row)) rows.push_back(std::move(row));
  if (grpc::Status s = reader->Finish(); !s.ok()) return Annotate(s);
  return rows;
}

absl::StatusOr<std::vector<v1::WorkerInfo>> CoordinatorClient::ListWorkers() {
  absl::StatusOr<v1::ListWorkersResponse> response =
      Unary(&v1::Coordinator::Stub::ListWorkers, v1::ListWorkersRequest());
  if (!response.ok()) return response.status();
  return std::vector<v1::WorkerInfo>(response->workers().begin(), response->workers().end());
}

absl::StatusOr<v1::FleetGoodputResponse> CoordinatorClient::FleetGoodput(
    const v1::FleetGoodputRequest& request) {
  return Unary(&v1::Coordinator::Stub::FleetGoodput, request);
}

absl::StatusOr<v1::FleetReportResponse> CoordinatorClient::FleetReport(
    const v1::FleetReportRequest& request) {
  return Unary(&v1::Coordinator::Stub::FleetReport, request);
}

absl::StatusOr<v1::IngestFleetEventsResponse> CoordinatorClient::IngestFleetEvents(
    const std::function<bool(v1::FleetEventLines*)>& next, InterruptWatcher* interrupts) {
  grpc::ClientContext context;
  v1::IngestFleetEventsResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::FleetEventLines>> writer =
      stub_->IngestFleetEvents(&context, &response);
  for (v1::FleetEventLines batch; next(&batch); batch.Clear()) {
    if (interrupts != nullptr && interrupts->interrupted()) {
      context.TryCancel();
      break;
    }
    if (!writer->Write(batch)) break;  // the call ended: Finish says why
  }
  writer->WritesDone();
  if (grpc::Status s = writer->Finish(); !s.ok()) return Annotate(s);
  return response;
}

absl::StatusOr<v1::PredictResponse> CoordinatorClient::Predict(const v1::PredictRequest& request) {
  return Unary(&v1::Coordinator::Stub::Predict, request);
}

absl::StatusOr<v1::AnalyzeResponse> CoordinatorClient::Analyze(const v1::AnalyzeRequest& request) {
  return Unary(&v1::Coordinator::Stub::Analyze, request);
}

absl::StatusOr<v1::SweepStatus> CoordinatorClient::Watch(
    int64_t sweep_id, InterruptWatcher* interrupts,
    const std::function<void(const v1::SweepStatus&, double)>& on_tick,
    const std::function<absl::Status()>& health) {
  // A unary call first, under the deadline: an unknown sweep or an
  // unreachable coordinator fails fast instead of hanging on the stream.
  absl::StatusOr<v1::SweepStatus> first = GetSweep(sweep_id);
  if (!first.ok()) return first.status();

  // The stream itself has no deadline: a sweep may run for days.
  grpc::ClientContext context;
  v1::WatchSweepRequest request;
  request.set_sweep_id(sweep_id);
  std::unique_ptr<grpc::ClientReader<v1::SweepStatus>> reader =
      stub_->WatchSweep(&context, request);

  struct Shared {
    explicit Shared(v1::SweepStatus first) : latest(std::move(first)) {}
    absl::Mutex mu;
    absl::CondVar cv;  // fresh or ended set
    v1::SweepStatus latest ABSL_GUARDED_BY(mu);
    SteadyClock::time_point received ABSL_GUARDED_BY(mu) = SteadyClock::now();
    bool fresh ABSL_GUARDED_BY(mu) = false;
    bool ended ABSL_GUARDED_BY(mu) = false;
    grpc::Status final_status ABSL_GUARDED_BY(mu);
  } shared(*first);

  // Read() blocks; a reader thread hands updates to this thread, which also
  // redraws once a second so that elapsed time keeps moving.
  std::thread reader_thread([&] {
    v1::SweepStatus update;
    while (reader->Read(&update)) {
      absl::MutexLock lock(&shared.mu);
      shared.latest = update;
      shared.received = SteadyClock::now();
      shared.fresh = true;
      shared.cv.SignalAll();
    }
    grpc::Status status = reader->Finish();
    absl::MutexLock lock(&shared.mu);
    shared.final_status = std::move(status);
    shared.ended = true;
    shared.cv.SignalAll();
  });

  absl::Status abort_reason;
  {
    ScopedInterruptHandler cancel(interrupts, [&context] { context.TryCancel(); });
    absl::MutexLock lock(&shared.mu);
    while (true) {
      const absl::Time deadline = absl::Now() + absl::Seconds(1);
      while (!shared.fresh && !shared.ended && !shared.cv.WaitWithDeadline(&shared.mu, deadline)) {
      }
      shared.fresh = false;
      double elapsed = shared.latest.elapsed_seconds();
      if (shared.latest.state() == v1::SWEEP_RUNNING) elapsed += SecondsSince(shared.received);
      if (on_tick) on_tick(shared.latest, elapsed);
      if (shared.ended) break;
      if (health && abort_reason.ok()) {
        shared.mu.Unlock();
        absl::Status healthy = health();
        shared.mu.Lock();
        if (!healthy.ok()) {
          abort_reason = healthy;
          context.TryCancel();
        }
      }
    }
  }
  reader_thread.join();

  absl::MutexLock lock(&shared.mu);  // uncontended: the reader has joined
  if (!abort_reason.ok()) return abort_reason;
  if (!shared.final_status.ok()) return Annotate(shared.final_status);
  if (shared.latest.state() == v1::SWEEP_RUNNING) {
    return absl::UnavailableError(absl::StrCat(
        "the coordinator at ", address_, " ended the watch before sweep ", sweep_id, " finished"));
  }
  return shared.latest;
}

}  // namespace paradnn::client
