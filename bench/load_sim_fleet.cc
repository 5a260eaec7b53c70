#include "bench/load_sim_fleet.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/families/noop.h"
#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::bench {

void SimWorker::Start() {
  stub_->async()->Connect(&context_, this);
  StartRead(&incoming_);
  v1::WorkerMessage hello;
  v1::WorkerHello* h = hello.mutable_hello();
  h->set_worker_id(absl::StrFormat("sim-%04d", index_));
  h->set_device_kind("cpu");
  h->set_version("bench-load");
  v1::Platform* p = h->mutable_platform();
  p->set_fingerprint("bench-load-simulated");
  p->set_device_kind("cpu");
  p->set_device_name("simulated worker (paradnn-bench-load)");
  p->set_hostname(absl::StrFormat("sim-%04d", index_));
  p->set_memory_bytes(int64_t{16} << 30);
  {
    absl::MutexLock lock(&mu_);
    waiting_ = true;
    waiting_since_ = SteadyClock::now();
  }
  Enqueue(std::move(hello));
  StartCall();
}

void SimWorker::MaybeHeartbeat(SteadyClock::time_point now) {
  v1::WorkerMessage beat;
  {
    absl::MutexLock lock(&mu_);
    if (heartbeat_ms_ <= 0 || closing_ || now < next_heartbeat_) return;
    next_heartbeat_ = now + std::chrono::milliseconds(heartbeat_ms_);
    beat.mutable_heartbeat()->set_running_job_id(running_job_);
    beat.mutable_heartbeat()->set_running_attempt_id(running_attempt_);
  }
  Enqueue(std::move(beat));
}

void SimWorker::Close() {
  absl::MutexLock lock(&mu_);
  if (closing_) return;
  closing_ = true;
  if (!writing_) StartWritesDone();
}

void SimWorker::OnReadDone(bool ok) {
  if (!ok) return;  // the stream is over; OnDone follows
  const auto now = SteadyClock::now();
  switch (incoming_.msg_case()) {
    case v1::CoordinatorMessage::kHelloAck: {
      absl::MutexLock lock(&mu_);
      heartbeat_ms_ = std::max<int64_t>(50, incoming_.hello_ack().heartbeat_interval_ms());
      next_heartbeat_ = now + std::chrono::milliseconds(heartbeat_ms_);
      fleet_->hello_acks.fetch_add(1);
      break;
    }
    case v1::CoordinatorMessage::kAssignment:
      OnAssignment(incoming_.assignment(), now);
      break;
    case v1::CoordinatorMessage::kAck: {
      bool mine = false;
      {
        absl::MutexLock lock(&mu_);
        mine = incoming_.ack().attempt_id() == unacked_attempt_;
        if (mine) {
          unacked_attempt_ = 0;
          if (fleet_->steady.load()) fleet_->ack_steady.Add(SecondsBetween(result_sent_, now));
        }
      }
      if (mine) {
        fleet_->acked.fetch_add(1);
        if (fleet_->unacked.fetch_sub(1) == 1) fleet_->Changed();
      }
      break;
    }
    case v1::CoordinatorMessage::kCancel:
    case v1::CoordinatorMessage::MSG_NOT_SET:
      break;
  }
  StartRead(&incoming_);
}

void SimWorker::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  outbox_.pop_front();
  if (!ok) {
    outbox_.clear();
    writing_ = false;
    return;
  }
  if (!outbox_.empty()) {
    StartWrite(&outbox_.front());
  } else {
    writing_ = false;
    if (closing_) StartWritesDone();
  }
}

void SimWorker::OnDone(const grpc::Status& status) {
  if (!status.ok()) {
    fleet_->streams_failed.fetch_add(1);
    absl::MutexLock lock(&fleet_->mu);
    if (fleet_->first_error.empty()) {
      fleet_->first_error = absl::StrCat("worker ", index_, ": ", status.error_message());
    }
  }
  {
    // A result the stream took with it was not acknowledged.
    absl::MutexLock lock(&mu_);
    if (unacked_attempt_ != 0) {
      unacked_attempt_ = 0;
      fleet_->unacked.fetch_sub(1);
    }
  }
  fleet_->streams_done.fetch_add(1);
  fleet_->Changed();
}

void SimWorker::OnAssignment(const v1::JobAssignment& assignment, SteadyClock::time_point now) {
  fleet_->assignments.fetch_add(1);
  if (fleet_->draining.load()) {
    fleet_->ignored_assignments.fetch_add(1);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (waiting_) {
      const double seconds = SecondsBetween(waiting_since_, now);
      fleet_->latency_all.Add(seconds);
      if (fleet_->steady.load()) fleet_->latency_steady.Add(seconds);
      waiting_ = false;
    }
  }
  v1::WorkerMessage started;
  started.mutable_started()->set_job_id(assignment.job_id());
  started.mutable_started()->set_attempt_id(assignment.attempt_id());
  if (fleet_->job_ms > 0) {
    {
      absl::MutexLock lock(&mu_);
      running_job_ = assignment.job_id();
      running_attempt_ = assignment.attempt_id();
    }
    Enqueue(std::move(started));
    timer_->Add(now + std::chrono::milliseconds(fleet_->job_ms), this, assignment);
    return;
  }
  Enqueue(std::move(started));
  SendResult(assignment);
}

double SyntheticStepSeconds(const v1::ModelConfig& config, int64_t job_id) {
  absl::StatusOr<model::ModelSpec> spec = model::ParseModelSpec(config, model::FieldStyle::kProto);
  if (!spec.ok()) return 0;
  const double flops = model::CountModel(*spec).model_flops();
  const double layers = static_cast<double>(spec->Param("layer"));
  // splitmix64's finalizer: a fixed, well-spread noise per job.
  uint64_t z = static_cast<uint64_t>(job_id) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const double noise = 1 + 0.03 * (2 * static_cast<double>(z >> 11) / 9007199254740992.0 - 1);
  return (flops / 20e9 + 2e-4 * layers) * noise;
}

void SimWorker::SendResult(const v1::JobAssignment& assignment) {
  v1::WorkerMessage result;
  v1::JobResult* r = result.mutable_result();
  r->set_job_id(assignment.job_id());
  r->set_attempt_id(assignment.attempt_id());
  v1::Measurement* m = r->mutable_measurement();
  m->set_device(assignment.job().device().empty() ? "cpu" : assignment.job().device());
  *m->mutable_config() = model::NormalizedConfig(assignment.job().config());
  if (const double step =
          fleet_->timed_results ? SyntheticStepSeconds(m->config(), assignment.job_id()) : 0;
      step > 0) {
    constexpr int kSteps = 5;
    m->set_outcome(v1::OK);
    for (int i = 0; i < kSteps; ++i) m->add_step_seconds(step);
    m->mutable_stats()->set_steps(kSteps);
    m->mutable_stats()->set_median_s(step);
    m->set_timed_seconds(kSteps * step);
    m->set_build_seconds(0.05);
    m->set_warmup_seconds(step);
  } else {
    model::FinishNoopMeasurement(m);
  }
  {
    absl::MutexLock lock(&mu_);
    running_job_ = 0;  // finished before the next heartbeat could say otherwise
    running_attempt_ = 0;
    unacked_attempt_ = assignment.attempt_id();
    waiting_ = true;
    waiting_since_ = result_sent_ = SteadyClock::now();
  }
  fleet_->unacked.fetch_add(1);
  fleet_->results_sent.fetch_add(1);
  Enqueue(std::move(result));
}

void SimWorker::Enqueue(v1::WorkerMessage message) {
  absl::MutexLock lock(&mu_);
  if (closing_) return;
  outbox_.push_back(std::move(message));
  if (!writing_ && started_call_) {
    writing_ = true;
    StartWrite(&outbox_.front());
  }
}

void SimWorker::StartCall() {
  {
    absl::MutexLock lock(&mu_);
    started_call_ = true;
    if (!outbox_.empty() && !writing_) {
      writing_ = true;
      StartWrite(&outbox_.front());
    }
  }
  grpc::ClientBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>::StartCall();
}

namespace {

// --budget: an FC grid of about `jobs` configurations (layer 1..L, node
// 64..6,400 by 64, batch 1..B), the shape of the paper's FC sweeps.
v1::SweepSpec BudgetedFcSweep(int64_t jobs, double budget_seconds) {
  v1::SweepSpec spec;
  spec.mutable_run()->set_budget_seconds(budget_seconds);
  spec.set_name("load-budgeted-fc");
  spec.set_family("fc");
  spec.set_device("cpu");
  constexpr int64_t kNodes = 100;
  const int64_t layers = std::clamp<int64_t>(jobs / kNodes, 1, 50);
  const int64_t batches = std::max<int64_t>(1, jobs / (kNodes * layers));
  auto& params = *spec.mutable_params();
  const auto set_range = [&](const char* name, int64_t min, int64_t max, int64_t add) {
    v1::IntRange* range = params[name].mutable_range();
    range->set_min(min);
    range->set_max(max);
    range->set_add(add);
  };
  set_range("layer", 1, layers, 1);
  set_range("node", 64, 64 * kNodes, 64);
  set_range("batch", 1, batches, 1);
  params["input"].set_value(1000);
  params["output"].set_value(100);
  return spec;
}

}  // namespace

v1::SweepSpec LoadSweep(int index, int64_t jobs, double budget_seconds) {
  if (budget_seconds > 0) return BudgetedFcSweep(jobs, budget_seconds);
  v1::SweepSpec spec;
  spec.set_name(absl::StrCat("load-", index));
  spec.set_family(model::kNoopFamilyName);
  spec.set_device("cpu");
  (*spec.mutable_params())["batch"].set_value(1);
  v1::IntRange* range = (*spec.mutable_params())["index"].mutable_range();
  range->set_min(static_cast<int64_t>(index) * jobs);
  range->set_max(static_cast<int64_t>(index + 1) * jobs - 1);
  range->set_add(1);
  return spec;
}

}  // namespace paradnn::bench
