#include "server/coordinator_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/state_names.h"
#include "model/sweep.h"
#include "server/analysis/rerun_intervals.h"
#include "server/fleet_intake.h"
#include "server/grpc_status.h"
#include "server/repeat_rounds.h"
#include "server/sweep_predictor.h"
#include "server/torchscript_archive.h"

namespace paradnn::server {
namespace {

// A write the database refused (read-only file, full disk, I/O error):
// INTERNAL with the database's own words, never UNAVAILABLE, which clients
// read as "cannot reach the coordinator".
grpc::Status StorageFailure(absl::string_view what, const absl::Status& status) {
  return grpc::Status(
      grpc::StatusCode::INTERNAL,
      absl::StrCat(what, " failed: the coordinator's database: ", status.message()));
}

// An interrupted sweep ends a watch too: nothing runs it until resumed.
bool IsFinished(const v1::SweepStatus& status) {
  return status.state() == v1::SWEEP_DONE || status.state() == v1::SWEEP_CANCELLED ||
         status.state() == v1::SWEEP_INTERRUPTED;
}

// Family torchscript: the uploaded model is stored once by its SHA-256 and
// referred to by hash. Moves the bytes out of `spec` (which keeps the hash,
// inputs, loss and target) and returns them; empty when the client named a
// model the coordinator already stores by its sha256 alone.
absl::StatusOr<std::string> TakeTorchScriptContent(v1::SweepSpec* spec, int64_t max_model_bytes,
                                                   const db::ModelStore& models) {
  v1::TorchScriptModel* model = spec->mutable_torchscript();
  std::string content = std::move(*model->mutable_content());
  model->clear_content();
  if (content.empty()) {
    absl::StatusOr<db::StoredModel> stored = models.Find(model->sha256());
    if (stored.status().code() == absl::StatusCode::kNotFound) {
      return absl::InvalidArgumentError(absl::StrCat(
          "torchscript.sha256: ", model->sha256(),
          " is not a model this coordinator stores; upload the file (torchscript.file)"));
    }
    if (!stored.ok()) return absl::UnavailableError(stored.status().message());
    if (model->file_name().empty()) model->set_file_name(stored->file_name);
    return content;
  }
  if (static_cast<int64_t>(content.size()) > max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.content: ", content.size(),
                                                   " bytes; this coordinator accepts "
                                                   "models of at most ",
                                                   max_model_bytes, " bytes (--max-model-bytes)"));
  }
  // What every runner would load: a TorchScript archive, bounded once
  // inflated by the same limit as the upload.
  if (absl::Status s = CheckTorchScriptArchive(content, max_model_bytes); !s.ok()) return s;
  const std::string sha256 = db::Sha256Hex(content);
  if (!model->sha256().empty() && model->sha256() != sha256) {
    return absl::InvalidArgumentError(absl::StrCat("torchscript.sha256: ", model->sha256(),
                                                   " does not match the uploaded file's SHA-256 ",
                                                   sha256));
  }
  model->set_sha256(sha256);
  return content;
}

}  // namespace

// Streams a sweep's status: now, on every change (at most one write in
// flight; changes during a write are coalesced), and finishes after sending
// a finished status.
class SweepWatch final : public grpc::ServerWriteReactor<v1::SweepStatus> {
 public:
  SweepWatch(CoordinatorService* service, int64_t sweep_id)
      : service_(service), sweep_id_(sweep_id) {
    absl::StatusOr<v1::SweepStatus> status = service_->SweepStatusOf(sweep_id_);
    if (!status.ok()) {
      Finish(ToGrpc(status.status()));
      return;
    }
    service_->AddWatch(this);
    registered_ = true;
    Poke();
  }

  // Called from the notifier thread (under the service's watch lock, so the
  // reactor is not deleted meanwhile) and from OnWriteDone.
  void Poke() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::ReleasableMutexLock lock(&mu_);
    if (done_) return;
    if (writing_) {
      dirty_ = true;
      return;
    }
    absl::StatusOr<v1::SweepStatus> status = service_->SweepStatusOf(sweep_id_);
    if (!status.ok()) {
      done_ = true;
      lock.Release();
      Finish(ToGrpc(status.status()));
      return;
    }
    // Elapsed time alone is no change worth a message.
    v1::SweepStatus comparable = *status;
    comparable.set_elapsed_seconds(0);
    const std::string key = comparable.SerializeAsString();
    if (key == last_sent_) return;
    last_sent_ = key;
    current_ = *status;
    final_ = IsFinished(current_);
    writing_ = true;
    lock.Release();  // current_ is not touched again until OnWriteDone
    StartWrite(&current_);
  }

  void OnWriteDone(bool ok) override {
    {
      absl::ReleasableMutexLock lock(&mu_);
      writing_ = false;
      if (!ok || final_) {
        done_ = true;
        lock.Release();
        Finish(ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::CANCELLED, "watch closed"));
        return;
      }
      if (!dirty_) return;
      dirty_ = false;
    }
    Poke();
  }

  void OnCancel() override {
    absl::ReleasableMutexLock lock(&mu_);
    if (done_ || writing_) return;  // a pending write reports !ok instead
    done_ = true;
    lock.Release();
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }

  void OnDone() override {
    if (registered_) service_->RemoveWatch(this);
    delete this;
  }

 private:
  CoordinatorService* const service_;
  const int64_t sweep_id_;
  bool registered_ = false;  // set by the constructor, read by OnDone
  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool dirty_ ABSL_GUARDED_BY(mu_) = false;
  bool final_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_sent_ ABSL_GUARDED_BY(mu_);
  // Set under mu_; gRPC reads it while writing_ (StartWrite's message).
  v1::SweepStatus current_ ABSL_GUARDED_BY(mu_);
};

namespace {

// Writes rows read elsewhere one at a time: Start hands them over (from
// any thread; the reactor lives until it has finished).
class ResultRowsWriter final : public grpc::ServerWriteReactor<v1::ResultRow> {
 public:
  void Start(absl::StatusOr<std::vector<v1::ResultRow>> rows) {
    if (!rows.ok()) {
      Finish(ToGrpc(rows.status()));
      return;
    }
    rows_ = std::move(*rows);
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (next_ == rows_.size()) {
      Finish(grpc::Status::OK);
      return;
    }
    StartWrite(&rows_[next_++]);
  }
  std::vector<v1::ResultRow> rows_;
  size_t next_ = 0;
};

}  // namespace

CoordinatorService::CoordinatorService(db::Database* database, Scheduler* scheduler,
                                       const common::Clock* clock, CoordinatorOptions options)
    : database_(database),
      scheduler_(scheduler),
      clock_(clock),
      options_(options),
      sweeps_(database),
      results_(database),
      workers_(database),
      models_(database),
      analyzer_(database),
      notifier_([this] { NotifierLoop(); }),
      planning_(std::make_unique<common::WorkPool>(1, "sweep-planning")),
      analyses_(std::make_unique<common::WorkPool>(std::max(1, options.max_concurrent_analyses),
                                                   "analyses")),
      queries_(std::make_unique<common::WorkPool>(2, "queries")) {}

CoordinatorService::~CoordinatorService() {
  // Planned sweeps, analyses and queries finish first: they answer calls
  // and notify watchers.
  planning_.reset();
  analyses_.reset();
  queries_.reset();
  {
    absl::MutexLock lock(&watch_mu_);
    stopping_ = true;
  }
  watch_cv_.SignalAll();
  notifier_.join();
}

void CoordinatorService::NotifyWatchers() {
  {
    absl::MutexLock lock(&watch_mu_);
    change_pending_ = true;
  }
  watch_cv_.Signal();
}

void CoordinatorService::AddWatch(SweepWatch* watch) {
  absl::MutexLock lock(&watch_mu_);
  watches_.insert(watch);
}

void CoordinatorService::RemoveWatch(SweepWatch* watch) {
  absl::MutexLock lock(&watch_mu_);
  watches_.erase(watch);
}

void CoordinatorService::NotifierLoop() {
  absl::MutexLock lock(&watch_mu_);
  while (true) {
    while (!change_pending_ && !stopping_) watch_cv_.Wait(&watch_mu_);
    if (stopping_) return;
    change_pending_ = false;
    for (SweepWatch* watch : watches_) watch->Poke();
    // Coalesce bursts (a batch of results) into one push per interval.
    const absl::Time until = absl::Now() + absl::Milliseconds(options_.watch_min_interval_ms);
    while (!stopping_ && !watch_cv_.WaitWithDeadline(&watch_mu_, until)) {
    }
  }
}

grpc::Status CoordinatorService::AuthorizeClient(const grpc::CallbackServerContext& context) const {
  if (options_.authorizer == nullptr) return grpc::Status::OK;
  grpc::Status status = options_.authorizer->Authorize(context, CallerRole::kClient);
  if (!status.ok())
    spdlog::warn("refused a call from {}: {}", context.peer(), status.error_message());
  return status;
}

template <typename Body>
grpc::ServerUnaryReactor* CoordinatorService::StartUnary(grpc::CallbackServerContext* context,
                                                         Body body) const {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = AuthorizeClient(*context); !auth.ok()) {
    reactor->Finish(auth);
  } else {
    body(reactor);
  }
  return reactor;
}

template <typename Reactor, typename Start>
Reactor* CoordinatorService::StartStream(grpc::CallbackServerContext* context, Start start) const {
  if (grpc::Status auth = AuthorizeClient(*context); !auth.ok()) {
    return new RefusedCall<Reactor>(auth);
  }
  return start();
}

// For calls that read much of the database (fleet goodput, reports, fits).
template <typename Response, typename Compute>
grpc::ServerUnaryReactor* CoordinatorService::AnswerOnQueryThread(
    grpc::CallbackServerContext* context, Response* response, Compute compute) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    queries_->Run([reactor, response, compute = std::move(compute)] {
      absl::StatusOr<Response> answer = compute();
      const absl::Status status = answer.status();
      if (answer.ok()) *response = *std::move(answer);
      reactor->Finish(ToGrpc(status));
    });
  });
}

grpc::ServerUnaryReactor* CoordinatorService::SubmitSweep(grpc::CallbackServerContext* context,
                                                          const v1::SubmitSweepRequest* request,
                                                          v1::SubmitSweepResponse* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    int64_t max_jobs = options_.max_jobs_per_sweep;
    if (request->max_jobs() < 0) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   "max_jobs: must be >= 0 (0 = the coordinator's limit)"));
      return;
    }
    if (request->max_jobs() > 0 && request->max_jobs() < max_jobs) max_jobs = request->max_jobs();
    // Validating, hashing an uploaded model and expanding up to max_jobs jobs
    // take from microseconds to seconds: on the planning thread, in
    // submission order, never on a callback thread.
    planning_->Run([this, request, response, max_jobs, reactor] {
      PlanAndStoreSweep(*request, max_jobs, response, reactor);
    });
  });
}

void CoordinatorService::PlanAndStoreSweep(const v1::SubmitSweepRequest& request, int64_t max_jobs,
                                           v1::SubmitSweepResponse* response,
                                           grpc::ServerUnaryReactor* reactor) {
  const v1::SweepSpec& spec = request.spec();
  if (absl::Status valid = model::ValidateSweep(spec, max_jobs); !valid.ok()) {
    spdlog::info("refused sweep '{}': {}", spec.name(), std::string(valid.message()));
    reactor->Finish(ToGrpc(valid));
    return;
  }
  v1::SweepSpec stored = spec;
  std::string model_content;
  if (stored.has_torchscript()) {
    absl::StatusOr<std::string> content =
        TakeTorchScriptContent(&stored, options_.max_model_bytes, models_);
    if (!content.ok()) {
      spdlog::info("refused sweep '{}': {}", spec.name(), std::string(content.status().message()));
      reactor->Finish(ToGrpc(content.status()));
      return;
    }
    model_content = std::move(*content);
  }
  const int64_t now = clock_->NowUnixMs();
  const uint64_t seed = spec.run().seed() != 0 ? spec.run().seed() : static_cast<uint64_t>(now);
  absl::StatusOr<PlannedSweep> plan = PlanSweep(stored, max_jobs, seed);
  if (!plan.ok()) {
    spdlog::info("refused sweep '{}': {}", spec.name(), std::string(plan.status().message()));
    reactor->Finish(ToGrpc(plan.status()));
    return;
  }
  v1::SubmitSweepResponse estimates;
  estimates.set_jobs(static_cast<int64_t>(plan->jobs.size()));
  estimates.set_total_model_flops(plan->total_model_flops);
  estimates.set_max_peak_memory_estimate_bytes(plan->max_peak_memory_estimate_bytes);
  estimates.set_min_params(plan->min_params);
  estimates.set_max_params(plan->max_params);
  if (stored.device().empty()) stored.set_device("cpu");
  const std::string file_name = stored.torchscript().file_name();
  auto create = [this, reactor, response, estimates, now, stored = std::move(stored),
                 jobs = std::make_shared<std::vector<db::NewJob>>(std::move(plan->jobs))]() {
    sweeps_.Create(
        stored, std::move(*jobs), now,
        [this, reactor, response, estimates, name = stored.name()](absl::StatusOr<int64_t> id) {
          if (!id.ok()) {
            spdlog::error("storing sweep '{}': {}", name, id.status().ToString());
            reactor->Finish(StorageFailure("storing the sweep", id.status()));
            return;
          }
          spdlog::info(
              "sweep {} '{}' submitted: {} jobs, {:.3g} model FLOPs per step in all, "
              "largest memory estimate {:.3g} bytes",
              *id, name, estimates.jobs(), estimates.total_model_flops(),
              estimates.max_peak_memory_estimate_bytes());
          *response = estimates;
          response->set_sweep_id(*id);
          reactor->Finish(grpc::Status::OK);
          scheduler_->OfferPendingJobs();
          NotifyWatchers();
        });
  };
  if (model_content.empty()) {
    create();
    return;
  }
  // The model commits before (or with) the sweep that refers to it.
  models_.Put(std::move(model_content), file_name, now,
              [reactor, create](const absl::StatusOr<std::string>& sha256) {
                if (!sha256.ok()) {
                  reactor->Finish(StorageFailure("storing the model", sha256.status()));
                  return;
                }
                create();
              });
}

grpc::ServerUnaryReactor* CoordinatorService::GetSweep(grpc::CallbackServerContext* context,
                                                       const v1::GetSweepRequest* request,
                                                       v1::SweepStatus* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    queries_->Run([this, reactor, request, response] {
      absl::StatusOr<v1::SweepStatus> status = SweepStatusOf(request->sweep_id());
      const absl::Status result = status.status();
      if (status.ok()) *response = *std::move(status);
      reactor->Finish(ToGrpc(result));
    });
  });
}

grpc::ServerUnaryReactor* CoordinatorService::ListSweeps(grpc::CallbackServerContext* context,
                                                         const v1::ListSweepsRequest* /*request*/,
                                                         v1::ListSweepsResponse* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    queries_->Run([this, reactor, response] {
      absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = sweeps_.List(clock_->NowUnixMs());
      if (sweeps.ok()) {
        for (v1::SweepStatus& sweep : *sweeps) {
          if (seconds_left_ && sweep.state() == v1::SWEEP_RUNNING) {
            if (std::optional<double> left = seconds_left_(sweep.sweep_id())) {
              sweep.set_model_seconds_left(*left);
            }
          }
          *response->add_sweeps() = std::move(sweep);
        }
      }
      reactor->Finish(ToGrpc(sweeps.status()));
    });
  });
}

absl::StatusOr<v1::SweepStatus> CoordinatorService::SweepStatusOf(int64_t sweep_id) const {
  absl::StatusOr<v1::SweepStatus> status = sweeps_.Get(sweep_id, clock_->NowUnixMs());
  if (status.ok() && seconds_left_ && status->state() == v1::SWEEP_RUNNING) {
    if (std::optional<double> left = seconds_left_(sweep_id)) status->set_model_seconds_left(*left);
  }
  if (status.ok() && scheduler_ != nullptr && status->state() == v1::SWEEP_RUNNING) {
    for (std::string& line : scheduler_->WaitingLines(sweep_id))
      status->add_waiting(std::move(line));
  }
  return status;
}

grpc::ServerUnaryReactor* CoordinatorService::CancelSweep(grpc::CallbackServerContext* context,
                                                          const v1::CancelSweepRequest* request,
                                                          v1::SweepStatus* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    const int64_t sweep_id = request->sweep_id();
    sweeps_.Cancel(
        sweep_id, clock_->NowUnixMs(),
        [this, reactor, response,
         sweep_id](absl::StatusOr<std::vector<db::SweepStore::LiveAttempt>> live) {
          if (!live.ok()) {
            const absl::StatusCode code = live.status().code();
            reactor->Finish(code == absl::StatusCode::kNotFound ||
                                    code == absl::StatusCode::kInvalidArgument
                                ? ToGrpc(live.status())
                                : StorageFailure("cancelling the sweep", live.status()));
            return;
          }
          spdlog::info("sweep {} cancelled; stopping {} running job(s)", sweep_id, live->size());
          scheduler_->CancelAttempts(*live);
          NotifyWatchers();
          // The cancelled sweep's status is read off the writer thread.
          queries_->Run([this, reactor, response, sweep_id] {
            absl::StatusOr<v1::SweepStatus> status = sweeps_.Get(sweep_id, clock_->NowUnixMs());
            const absl::Status result = status.status();
            if (status.ok()) *response = *std::move(status);
            reactor->Finish(ToGrpc(result));
          });
        });
  });
}

grpc::ServerWriteReactor<v1::SweepStatus>* CoordinatorService::WatchSweep(
    grpc::CallbackServerContext* context, const v1::WatchSweepRequest* request) {
  return StartStream<grpc::ServerWriteReactor<v1::SweepStatus>>(
      context, [&] { return new SweepWatch(this, request->sweep_id()); });
}

grpc::ServerWriteReactor<v1::ResultRow>* CoordinatorService::QueryResults(
    grpc::CallbackServerContext* context, const v1::QueryResultsRequest* request) {
  return StartStream<grpc::ServerWriteReactor<v1::ResultRow>>(context, [&] {
    // A sweep's rows (up to every result it has) are read on a query thread.
    auto* writer = new ResultRowsWriter();
    queries_->Run([this, writer, sweep_id = request->sweep_id(),
                   include_samples = request->include_samples()] {
      absl::StatusOr<v1::SweepStatus> sweep = sweeps_.Get(sweep_id, clock_->NowUnixMs());
      absl::StatusOr<std::vector<v1::ResultRow>> rows =
          sweep.ok() ? results_.Query(sweep_id, include_samples)
                     : absl::StatusOr<std::vector<v1::ResultRow>>(sweep.status());
      if (rows.ok()) {
        if (absl::Status s = analysis::FillRerunIntervals(*database_, &*rows); !s.ok()) {
          rows = s;
        } else {
          FillRepeatIntervals(sweep->spec(), sweep->state() == v1::SWEEP_RUNNING, &*rows);
        }
      }
      writer->Start(std::move(rows));
    });
    return writer;
  });
}

grpc::ServerUnaryReactor* CoordinatorService::ListWorkers(grpc::CallbackServerContext* context,
                                                          const v1::ListWorkersRequest* /*request*/,
                                                          v1::ListWorkersResponse* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    queries_->Run([this, reactor, response] { ListWorkersNow(response, reactor); });
  });
}

void CoordinatorService::ListWorkersNow(v1::ListWorkersResponse* response,
                                        grpc::ServerUnaryReactor* reactor) {
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = workers_.List();
  if (workers.ok()) {
    const std::map<std::string, LiveWorker> live = scheduler_->Snapshot();
    for (v1::WorkerInfo& worker : *workers) {
      auto it = live.find(worker.worker_id());
      if (it != live.end()) {
        worker.set_worker_state(it->second.state);
        worker.set_current_job_id(it->second.current_job_id);
        worker.set_waiting(it->second.waiting);
        worker.set_cpus(it->second.cpus);
      } else {
        worker.set_worker_state(v1::WORKER_DISCONNECTED);
      }
      worker.set_state(common::WorkerStateName(worker.worker_state()));
      worker.set_connected(worker.worker_state() != v1::WORKER_DISCONNECTED);
      *response->add_workers() = std::move(worker);
    }
  }
  reactor->Finish(ToGrpc(workers.status()));
}

grpc::ServerUnaryReactor* CoordinatorService::Analyze(grpc::CallbackServerContext* context,
                                                      const v1::AnalyzeRequest* request,
                                                      v1::AnalyzeResponse* response) {
  return StartUnary(context, [&](grpc::ServerUnaryReactor* reactor) {
    // An analysis reads up to every stored result: too long for a callback
    // thread, which must never block.
    const bool started = analyses_->TryRun([this, reactor, request, response] {
      absl::StatusOr<v1::AnalyzeResponse> analysis = analyzer_.Analyze(*request);
      const absl::Status status = analysis.status();
      if (analysis.ok()) *response = *std::move(analysis);
      reactor->Finish(ToGrpc(status));
    });
    if (!started) {
      reactor->Finish(ToGrpc(absl::ResourceExhaustedError(
          absl::StrCat(analyses_->threads(),
                       " analyses are running, the most this coordinator computes at once; "
                       "retry when one has finished"))));
    }
  });
}

grpc::ServerUnaryReactor* CoordinatorService::FleetGoodput(grpc::CallbackServerContext* context,
                                                           const v1::FleetGoodputRequest* request,
                                                           v1::FleetGoodputResponse* response) {
  return AnswerOnQueryThread(context, response, [this, request] {
    return ReadFleetGoodput(*database_, options_.ledger, *request, clock_->NowUnixMs());
  });
}

grpc::ServerReadReactor<v1::FleetEventLines>* CoordinatorService::IngestFleetEvents(
    grpc::CallbackServerContext* context, v1::IngestFleetEventsResponse* response) {
  return StartStream<grpc::ServerReadReactor<v1::FleetEventLines>>(
      context, [&] { return new FleetIngestReactor(database_, response); });
}

grpc::ServerUnaryReactor* CoordinatorService::FleetReport(grpc::CallbackServerContext* context,
                                                          const v1::FleetReportRequest* request,
                                                          v1::FleetReportResponse* response) {
  return AnswerOnQueryThread(context, response,
                             [this, request] { return BuildFleetReport(*database_, *request); });
}

grpc::ServerUnaryReactor* CoordinatorService::Predict(grpc::CallbackServerContext* context,
                                                      const v1::PredictRequest* request,
                                                      v1::PredictResponse* response) {
  // A fit's cost is bounded (one group, FitOptions' caps); a call whose client
  // gave up (its deadline passed while it waited) is not fitted.
  return AnswerOnQueryThread(
      context, response, [this, context, request]() -> absl::StatusOr<v1::PredictResponse> {
        if (context->IsCancelled()) {
          return absl::CancelledError("the call ended (its deadline passed) before the fit began");
        }
        return PredictFromSweep(database_, *request);
      });
}

}  // namespace paradnn::server
