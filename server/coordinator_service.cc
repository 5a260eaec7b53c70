#include "server/coordinator_service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/run_settings.h"
#include "common/sweep_validation.h"

namespace paradnn::server {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

bool IsFinished(const v1::SweepStatus& status) {
  return status.state() == v1::SWEEP_DONE || status.state() == v1::SWEEP_CANCELLED;
}

// Turns a validated spec into the jobs to store: the cross product in a
// seeded shuffled order, each with the effective run settings.
absl::StatusOr<std::vector<db::NewJob>> PlanJobs(const v1::SweepSpec& spec, int64_t max_jobs,
                                                 uint64_t seed) {
  absl::StatusOr<std::vector<v1::ModelConfig>> configs = common::ExpandSweep(spec, max_jobs);
  if (!configs.ok()) return configs.status();
  const std::vector<int32_t> order = common::ShuffledOrder(configs->size(), seed);
  v1::RunSettings settings = common::WithRunDefaults(spec.run());
  if (settings.seed() == 0) settings.set_seed(seed);
  std::vector<db::NewJob> jobs(configs->size());
  for (size_t i = 0; i < configs->size(); ++i) {
    jobs[i].config = std::move((*configs)[i]);
    jobs[i].settings = settings;
    jobs[i].device = spec.device().empty() ? "cpu" : spec.device();
    jobs[i].ordinal = order[i];
  }
  return jobs;
}

}  // namespace

// Streams a sweep's status: now, on every change (at most one write in
// flight; changes during a write are coalesced), and finishes after sending
// a finished status.
class SweepWatch final : public grpc::ServerWriteReactor<v1::SweepStatus> {
 public:
  SweepWatch(CoordinatorService* service, int64_t sweep_id) : service_(service), sweep_id_(sweep_id) {
    absl::StatusOr<v1::SweepStatus> status =
        service_->sweeps().Get(sweep_id_, service_->clock().NowUnixMs());
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
  void Poke() {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_) return;
    if (writing_) {
      dirty_ = true;
      return;
    }
    absl::StatusOr<v1::SweepStatus> status =
        service_->sweeps().Get(sweep_id_, service_->clock().NowUnixMs());
    if (!status.ok()) {
      done_ = true;
      lock.unlock();
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
    lock.unlock();  // current_ is not touched again until OnWriteDone
    StartWrite(&current_);
  }

  void OnWriteDone(bool ok) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok || final_) {
        done_ = true;
        lock.unlock();
        Finish(ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::CANCELLED, "watch closed"));
        return;
      }
      if (!dirty_) return;
      dirty_ = false;
    }
    Poke();
  }

  void OnCancel() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_ || writing_) return;  // a pending write reports !ok instead
    done_ = true;
    lock.unlock();
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }

  void OnDone() override {
    if (registered_) service_->RemoveWatch(this);
    delete this;
  }

 private:
  CoordinatorService* const service_;
  const int64_t sweep_id_;
  bool registered_ = false;
  std::mutex mu_;
  bool writing_ = false;
  bool dirty_ = false;
  bool final_ = false;
  bool done_ = false;
  std::string last_sent_;
  v1::SweepStatus current_;
};

namespace {

// Writes pre-read rows one at a time.
class ResultRowsWriter final : public grpc::ServerWriteReactor<v1::ResultRow> {
 public:
  explicit ResultRowsWriter(absl::StatusOr<std::vector<v1::ResultRow>> rows) {
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
      notifier_([this] { NotifierLoop(); }) {}

CoordinatorService::~CoordinatorService() {
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  notifier_.join();
}

void CoordinatorService::NotifyWatchers() {
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    change_pending_ = true;
  }
  watch_cv_.notify_one();
}

void CoordinatorService::AddWatch(SweepWatch* watch) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  watches_.insert(watch);
}

void CoordinatorService::RemoveWatch(SweepWatch* watch) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  watches_.erase(watch);
}

void CoordinatorService::NotifierLoop() {
  std::unique_lock<std::mutex> lock(watch_mu_);
  while (true) {
    watch_cv_.wait(lock, [this] { return change_pending_ || stopping_; });
    if (stopping_) return;
    change_pending_ = false;
    for (SweepWatch* watch : watches_) watch->Poke();
    // Coalesce bursts (a batch of results) into one push per interval.
    watch_cv_.wait_for(lock, std::chrono::milliseconds(options_.watch_min_interval_ms),
                       [this] { return stopping_; });
  }
}

grpc::ServerUnaryReactor* CoordinatorService::SubmitSweep(grpc::CallbackServerContext* context,
                                                          const v1::SubmitSweepRequest* request,
                                                          v1::SubmitSweepResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  int64_t max_jobs = options_.max_jobs_per_sweep;
  if (request->max_jobs() < 0) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 "max_jobs: must be >= 0 (0 = the coordinator's limit)"));
    return reactor;
  }
  if (request->max_jobs() > 0 && request->max_jobs() < max_jobs) max_jobs = request->max_jobs();
  const v1::SweepSpec& spec = request->spec();
  if (absl::Status valid = common::ValidateSweep(spec, max_jobs); !valid.ok()) {
    spdlog::info("refused sweep '{}': {}", spec.name(), std::string(valid.message()));
    reactor->Finish(ToGrpc(valid));
    return reactor;
  }
  const int64_t now = clock_->NowUnixMs();
  const uint64_t seed = spec.run().seed() != 0 ? spec.run().seed() : static_cast<uint64_t>(now);
  absl::StatusOr<std::vector<db::NewJob>> jobs = PlanJobs(spec, max_jobs, seed);
  if (!jobs.ok()) {
    reactor->Finish(ToGrpc(jobs.status()));
    return reactor;
  }
  const int64_t job_count = static_cast<int64_t>(jobs->size());
  v1::SweepSpec stored = spec;
  if (stored.device().empty()) stored.set_device("cpu");
  sweeps_.Create(stored, std::move(*jobs), now,
                 [this, reactor, response, job_count, name = spec.name()](absl::StatusOr<int64_t> id) {
                   if (!id.ok()) {
                     spdlog::error("storing sweep '{}': {}", name, id.status().ToString());
                     reactor->Finish(ToGrpc(absl::UnavailableError(
                         absl::StrCat("storing the sweep failed: ", id.status().message()))));
                     return;
                   }
                   spdlog::info("sweep {} '{}' submitted: {} jobs", *id, name, job_count);
                   response->set_sweep_id(*id);
                   response->set_jobs(job_count);
                   reactor->Finish(grpc::Status::OK);
                   scheduler_->OfferPendingJobs();
                   NotifyWatchers();
                 });
  return reactor;
}

grpc::ServerUnaryReactor* CoordinatorService::GetSweep(grpc::CallbackServerContext* context,
                                                       const v1::GetSweepRequest* request,
                                                       v1::SweepStatus* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<v1::SweepStatus> status = sweeps_.Get(request->sweep_id(), clock_->NowUnixMs());
  if (status.ok()) *response = std::move(*status);
  reactor->Finish(ToGrpc(status.status()));
  return reactor;
}

grpc::ServerUnaryReactor* CoordinatorService::ListSweeps(grpc::CallbackServerContext* context,
                                                         const v1::ListSweepsRequest* /*request*/,
                                                         v1::ListSweepsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::vector<v1::SweepStatus>> sweeps = sweeps_.List(clock_->NowUnixMs());
  if (sweeps.ok()) {
    for (v1::SweepStatus& sweep : *sweeps) *response->add_sweeps() = std::move(sweep);
  }
  reactor->Finish(ToGrpc(sweeps.status()));
  return reactor;
}

grpc::ServerUnaryReactor* CoordinatorService::CancelSweep(grpc::CallbackServerContext* context,
                                                          const v1::CancelSweepRequest* request,
                                                          v1::SweepStatus* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const int64_t sweep_id = request->sweep_id();
  sweeps_.Cancel(sweep_id, clock_->NowUnixMs(),
                 [this, reactor, response, sweep_id](
                     absl::StatusOr<std::vector<db::SweepStore::LiveAttempt>> live) {
                   if (!live.ok()) {
                     reactor->Finish(ToGrpc(live.status()));
                     return;
                   }
                   spdlog::info("sweep {} cancelled; stopping {} running job(s)", sweep_id, live->size());
                   scheduler_->CancelAttempts(*live);
                   absl::StatusOr<v1::SweepStatus> status = sweeps_.Get(sweep_id, clock_->NowUnixMs());
                   if (status.ok()) *response = std::move(*status);
                   reactor->Finish(ToGrpc(status.status()));
                   NotifyWatchers();
                 });
  return reactor;
}

grpc::ServerWriteReactor<v1::SweepStatus>* CoordinatorService::WatchSweep(
    grpc::CallbackServerContext* /*context*/, const v1::WatchSweepRequest* request) {
  return new SweepWatch(this, request->sweep_id());
}

grpc::ServerWriteReactor<v1::ResultRow>* CoordinatorService::QueryResults(
    grpc::CallbackServerContext* /*context*/, const v1::QueryResultsRequest* request) {
  absl::StatusOr<v1::SweepStatus> sweep = sweeps_.Get(request->sweep_id(), clock_->NowUnixMs());
  if (!sweep.ok()) return new ResultRowsWriter(sweep.status());
  return new ResultRowsWriter(results_.Query(request->sweep_id(), request->include_samples()));
}

grpc::ServerUnaryReactor* CoordinatorService::ListWorkers(grpc::CallbackServerContext* context,
                                                          const v1::ListWorkersRequest* /*request*/,
                                                          v1::ListWorkersResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = workers_.List();
  if (workers.ok()) {
    const std::map<std::string, LiveWorker> live = scheduler_->Snapshot();
    for (v1::WorkerInfo& worker : *workers) {
      auto it = live.find(worker.worker_id());
      if (it != live.end()) {
        worker.set_state(it->second.state);
        worker.set_connected(it->second.state != "disconnected");
        worker.set_current_job_id(it->second.current_job_id);
      } else {
        worker.set_state("disconnected");
        worker.set_connected(false);
      }
      *response->add_workers() = std::move(worker);
    }
  }
  reactor->Finish(ToGrpc(workers.status()));
  return reactor;
}

}  // namespace paradnn::server
