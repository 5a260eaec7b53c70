#include "client/commands.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/coordinator_source.h"
#include "client/listing_format.h"
#include "client/presets.h"
#include "client/progress.h"
#include "client/result_views.h"
#include "client/sweep_file.h"
#include "common/clock.h"
#include "common/human_units.h"
#include "common/state_names.h"
#include "model/sweep.h"

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

absl::StatusOr<v1::SubmitSweepResponse> CoordinatorClient::SubmitSweep(const v1::SweepSpec& spec,
                                                                       int64_t max_jobs) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::SubmitSweepRequest request;
  *request.mutable_spec() = spec;
  request.set_max_jobs(max_jobs);
  v1::SubmitSweepResponse response;
  if (grpc::Status s = stub_->SubmitSweep(&context, request, &response); !s.ok()) {
    return Annotate(s);
  }
  return response;
}

absl::StatusOr<v1::SweepStatus> CoordinatorClient::GetSweep(int64_t sweep_id) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  v1::SweepStatus response;
  if (grpc::Status s = stub_->GetSweep(&context, request, &response); !s.ok()) return Annotate(s);
  return response;
}

absl::StatusOr<std::vector<v1::SweepStatus>> CoordinatorClient::ListSweeps() {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ListSweepsResponse response;
  if (grpc::Status s = stub_->ListSweeps(&context, v1::ListSweepsRequest(), &response); !s.ok()) {
    return Annotate(s);
  }
  return std::vector<v1::SweepStatus>(response.sweeps().begin(), response.sweeps().end());
}

absl::StatusOr<v1::SweepStatus> CoordinatorClient::CancelSweep(int64_t sweep_id) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::CancelSweepRequest request;
  request.set_sweep_id(sweep_id);
  v1::SweepStatus response;
  if (grpc::Status s = stub_->CancelSweep(&context, request, &response); !s.ok()) {
    return Annotate(s);
  }
  return response;
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
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ListWorkersResponse response;
  if (grpc::Status s = stub_->ListWorkers(&context, v1::ListWorkersRequest(), &response); !s.ok()) {
    return Annotate(s);
  }
  return std::vector<v1::WorkerInfo>(response.workers().begin(), response.workers().end());
}

absl::StatusOr<v1::FleetGoodputResponse> CoordinatorClient::FleetGoodput(
    const v1::FleetGoodputRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::FleetGoodputResponse response;
  if (grpc::Status s = stub_->FleetGoodput(&context, request, &response); !s.ok()) {
    return Annotate(s);
  }
  return response;
}

absl::StatusOr<v1::PredictResponse> CoordinatorClient::Predict(const v1::PredictRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::PredictResponse response;
  if (grpc::Status s = stub_->Predict(&context, request, &response); !s.ok()) return Annotate(s);
  return response;
}

absl::StatusOr<v1::AnalyzeResponse> CoordinatorClient::Analyze(const v1::AnalyzeRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::AnalyzeResponse response;
  if (grpc::Status s = stub_->Analyze(&context, request, &response); !s.ok()) return Annotate(s);
  return response;
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

int ExitCodeForSweep(const v1::SweepStatus& status) {
  // A budgeted sweep is complete when every job is measured or predicted.
  const bool complete = status.state() != v1::SWEEP_RUNNING &&
                        status.done_jobs() + status.predicted_jobs() == status.total_jobs();
  return complete ? kExitOk : kExitFailed;
}

int ReportError(const CommandContext& ctx, const absl::Status& status) {
  *ctx.err << "paradnn: " << status.message() << "\n" << std::flush;
  return ExitCodeFor(status);
}

void PrintResults(const CommandContext& ctx, const std::vector<v1::ResultRow>& rows,
                  OutputFormat format, const ResultsView& view) {
  ResultTable table;
  bool samples = false;
  if (view.kind == ResultsView::kOps) {
    table = BuildOpsTable(rows, view.top_ops);
    if (table.rows.empty() && format == OutputFormat::kTable) {
      *ctx.out << "no profiled results in this sweep; profile with `profile: true` in the sweep "
                  "file (or paradnn-runner --profile)\n"
               << std::flush;
      return;
    }
  } else if (view.kind == ResultsView::kAuto && HasRepeats(rows) && !view.samples) {
    table = BuildRepeatsTable(rows);
  } else {
    table = BuildResultTable(rows);
    samples = view.samples;
  }
  switch (format) {
    case OutputFormat::kCsv:
      *ctx.out << FormatCsv(table, samples);
      break;
    case OutputFormat::kJson:
      *ctx.out << FormatJson(table, samples);
      break;
    case OutputFormat::kTable:
      *ctx.out << (view.wide ? FormatHumanTable(table) : FormatNarrowTable(table));
      break;
  }
  ctx.out->flush();
}

absl::StatusOr<v1::SweepSpec> LoadSweep(const SweepSource& source, int64_t max_jobs) {
  if (source.file.empty() == source.preset.empty()) {
    return absl::InvalidArgumentError(
        "give a sweep file or --preset NAME (one of them; paradnn presets lists the presets)");
  }
  absl::StatusOr<v1::SweepSpec> spec = source.preset.empty() ? ReadSweepFile(source.file, max_jobs)
                                                             : LoadPreset(source.preset, max_jobs);
  if (spec.ok() && source.run_predicted_oom) spec->set_run_predicted_oom(true);
  if (spec.ok() && source.fresh) spec->mutable_run()->set_fresh(true);
  if (spec.ok() && (source.budget_seconds > 0 || source.target_interval > 0)) {
    if (source.budget_seconds > 0) spec->mutable_run()->set_budget_seconds(source.budget_seconds);
    if (source.target_interval > 0) {
      spec->mutable_run()->set_target_interval(source.target_interval);
    }
    if (absl::Status s = model::ValidateSweep(*spec, max_jobs); !s.ok()) return s;
  }
  return spec;
}

std::string FormatSubmitted(const std::string& name, const v1::SubmitSweepResponse& response) {
  std::string text = absl::StrCat("submitted sweep ", response.sweep_id(), " (", name,
                                  "): ", response.jobs(), " jobs\n");
  if (response.jobs() == 0) return text;
  const std::string params =
      response.min_params() == response.max_params()
          ? HumanCount(static_cast<double>(response.max_params()))
          : absl::StrCat(HumanCount(static_cast<double>(response.min_params())), " .. ",
                         HumanCount(static_cast<double>(response.max_params())));
  absl::StrAppend(&text,
                  "  model FLOPs per step, all jobs: ", HumanCount(response.total_model_flops()),
                  "; parameters ", params, "; largest memory estimate ",
                  common::HumanBytes(response.max_peak_memory_estimate_bytes()), "\n");
  return text;
}

std::string NoWorkerForDevice(const std::string& device,
                              const std::vector<v1::WorkerInfo>& workers) {
  std::map<std::string, int> connected;
  for (const v1::WorkerInfo& worker : workers) {
    if (worker.connected()) ++connected[worker.device_kind()];
  }
  if (connected.count(device) > 0) return "";
  std::vector<std::string> kinds;
  kinds.reserve(connected.size());
  for (const auto& [kind, count] : connected) kinds.push_back(absl::StrCat(kind, " x", count));
  return absl::StrCat("no connected worker has device '", device,
                      "' (connected: ", kinds.empty() ? "none" : absl::StrJoin(kinds, ", "),
                      "); its jobs wait until one connects: paradnn-worker --device ", device);
}

int RunSubmit(const CommandContext& ctx, const SweepSource& source, bool quiet, int64_t max_jobs) {
  absl::StatusOr<v1::SweepSpec> spec = LoadSweep(source, max_jobs);
  if (!spec.ok()) return ReportError(ctx, spec.status());
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::SubmitSweepResponse> response = client.SubmitSweep(*spec, max_jobs);
  if (!response.ok()) return ReportError(ctx, response.status());
  if (quiet) {
    *ctx.out << response->sweep_id() << "\n";
  } else {
    *ctx.out << FormatSubmitted(spec->name(), *response);
  }
  ctx.out->flush();
  // A sweep nobody can run is a common slip (device: cuda on a CPU fleet).
  if (absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers(); workers.ok()) {
    const std::string device = spec->device().empty() ? "cpu" : spec->device();
    if (std::string warning = NoWorkerForDevice(device, *workers); !warning.empty()) {
      *ctx.err << "paradnn: warning: " << warning << "\n" << std::flush;
    }
  }
  return kExitOk;
}

int RunPresets(const CommandContext& ctx) {
  const std::vector<std::string> header = {"PRESET", "FAMILY", "JOBS", "DESCRIPTION"};
  std::vector<std::vector<std::string>> rows;
  for (const Preset& preset : Presets()) {
    // No cap here: the listing shows what each preset expands to.
    absl::StatusOr<v1::SweepSpec> spec =
        LoadPreset(preset.name, std::numeric_limits<int64_t>::max());
    if (!spec.ok()) return ReportError(ctx, spec.status());  // a broken build; tests catch it
    rows.push_back({std::string(preset.name), spec->family(),
                    absl::StrCat(model::CountConfigurations(*spec)), PresetSummary(preset)});
  }
  *ctx.out << AlignColumns(header, rows, {false, false, true, false})
           << "\nsubmit one with: paradnn submit --preset NAME (or paradnn local --preset NAME)\n"
           << std::flush;
  return kExitOk;
}

int RunWatch(const CommandContext& ctx, int64_t sweep_id) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  return WatchWithProgress(ctx, client, sweep_id);
}

int RunStatus(const CommandContext& ctx, std::optional<int64_t> sweep_id, OutputFormat format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  if (sweep_id.has_value()) {
    absl::StatusOr<v1::SweepStatus> status = client.GetSweep(*sweep_id);
    if (!status.ok()) return ReportError(ctx, status.status());
    *ctx.out << (format == OutputFormat::kTable ? FormatSweepDetail(*status)
                                                : FormatSweeps({*status}, format))
             << std::flush;
    return kExitOk;
  }
  absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = client.ListSweeps();
  if (!sweeps.ok()) return ReportError(ctx, sweeps.status());
  if (format != OutputFormat::kTable) {
    *ctx.out << FormatSweeps(*sweeps, format) << std::flush;
    return kExitOk;
  }
  if (sweeps->empty()) {
    *ctx.out << "no sweeps yet; submit one with: paradnn submit FILE.yaml\n" << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatSweepList(*sweeps) << std::flush;
  return kExitOk;
}

int RunResults(const CommandContext& ctx, const std::vector<int64_t>& sweep_ids,
               OutputFormat format, const ResultsView& view, const std::string& db_path) {
  absl::StatusOr<std::unique_ptr<CoordinatorSource>> source = CoordinatorSource::Open(ctx, db_path);
  if (!source.ok()) return ReportError(ctx, source.status());
  CoordinatorClient& client = (*source)->client();
  std::vector<v1::ResultRow> all;
  for (int64_t sweep_id : sweep_ids) {
    absl::StatusOr<std::vector<v1::ResultRow>> rows =
        client.QueryResults(sweep_id, view.samples, ctx.interrupts);
    if (!rows.ok()) return ReportError(ctx, rows.status());
    all.insert(all.end(), std::make_move_iterator(rows->begin()),
               std::make_move_iterator(rows->end()));
  }
  PrintResults(ctx, all, format, view);
  return kExitOk;
}

int RunWorkers(const CommandContext& ctx, OutputFormat format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers();
  if (!workers.ok()) return ReportError(ctx, workers.status());
  if (format != OutputFormat::kTable) {
    *ctx.out << FormatWorkerList(*workers, format) << std::flush;
    return kExitOk;
  }
  if (workers->empty()) {
    *ctx.out << "no workers have connected; start one with: paradnn-worker --coordinator "
             << ctx.address << "\n"
             << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatWorkers(*workers, common::SystemClock().NowUnixMs()) << std::flush;
  return kExitOk;
}

int RunCancel(const CommandContext& ctx, int64_t sweep_id) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::SweepStatus> status = client.CancelSweep(sweep_id);
  if (!status.ok()) return ReportError(ctx, status.status());
  *ctx.out << FormatSweepDetail(*status) << std::flush;
  return kExitOk;
}

std::string FormatFleetGoodput(const v1::FleetGoodputResponse& goodput) {
  std::string out = absl::StrFormat("%-8s %7s %10s %10s %7s %5s %10s %10s %8s %7s %7s\n", "device",
                                    "workers", "connected", "busy", "sched", "jobs", "job wall",
                                    "timed", "runtime", "program", "goodput");
  auto row = [&out](const v1::Goodput& g, const std::string& name) {
    out += absl::StrFormat(
        "%-8s %7d %9.1fs %9.1fs %6.1f%% %5d %9.1fs %9.1fs %7.1f%% %6.1f%% %6.2f%%\n", name,
        g.workers(), g.connected_seconds(), g.busy_seconds(), g.scheduling() * 100, g.jobs(),
        g.job_wall_seconds(), g.timed_seconds(), g.runtime() * 100, g.program() * 100,
        g.goodput() * 100);
  };
  for (const v1::Goodput& g : goodput.device_kinds()) row(g, g.device_kind());
  if (goodput.device_kinds_size() > 1) row(goodput.total(), "all");
  out += absl::StrFormat(
      "window %.1f s. sched = busy / connected worker time; runtime = timed steps / job wall "
      "(lease .. result stored);\nprogram = HFU (executed FLOP/s / calibrated roof) weighted by "
      "timed seconds over %d OK results; goodput = sched x runtime x program\n",
      static_cast<double>(goodput.to_unix_ms() - goodput.from_unix_ms()) / 1000.0,
      goodput.total().utilization_results());
  return out;
}

namespace {

// One field of a goodput row as CSV text (raw numbers, as json prints them).
std::string GoodputField(const v1::Goodput& row, const google::protobuf::FieldDescriptor* field) {
  const google::protobuf::Reflection* reflection = row.GetReflection();
  switch (field->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
      return reflection->GetString(row, field);
    case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(reflection->GetInt32(row, field));
    case google::protobuf::FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(reflection->GetInt64(row, field));
    case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrCat(reflection->GetDouble(row, field));
    default:
      return "";
  }
}

// A row per device kind and the total (device_kind "total"), a column per
// Goodput field under its proto name, so it loads as the json does.
std::string FleetCsv(const v1::FleetGoodputResponse& goodput) {
  const google::protobuf::Descriptor* descriptor = v1::Goodput::descriptor();
  std::vector<std::string> header;
  header.reserve(descriptor->field_count());
  for (int i = 0; i < descriptor->field_count(); ++i) {
    header.push_back(descriptor->field(i)->name());
  }
  std::string out = CsvLine(header);
  std::vector<v1::Goodput> rows(goodput.device_kinds().begin(), goodput.device_kinds().end());
  rows.push_back(goodput.total());
  rows.back().set_device_kind("total");
  for (const v1::Goodput& row : rows) {
    std::vector<std::string> fields;
    fields.reserve(descriptor->field_count());
    for (int i = 0; i < descriptor->field_count(); ++i) {
      fields.push_back(GoodputField(row, descriptor->field(i)));
    }
    absl::StrAppend(&out, CsvLine(fields));
  }
  return out;
}

}  // namespace

int RunFleet(const CommandContext& ctx, int64_t sweep_id, double window_seconds,
             const std::string& format) {
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  v1::FleetGoodputRequest request;
  request.set_sweep_id(sweep_id);
  request.set_window_seconds(window_seconds);
  absl::StatusOr<v1::FleetGoodputResponse> goodput = client.FleetGoodput(request);
  if (!goodput.ok()) return ReportError(ctx, goodput.status());
  if (format == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(*goodput, &json, options).ok()) {
      return ReportError(ctx, absl::InternalError("could not print the goodput as JSON"));
    }
    *ctx.out << json << "\n" << std::flush;
    return kExitOk;
  }
  if (format == "csv") {
    *ctx.out << FleetCsv(*goodput) << std::flush;
    return kExitOk;
  }
  if (goodput->device_kinds_size() == 0) {
    *ctx.out << "no worker time and no finished job in the window\n" << std::flush;
    return kExitOk;
  }
  *ctx.out << FormatFleetGoodput(*goodput) << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
