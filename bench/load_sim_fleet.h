// The simulated workers of paradnn-bench-load (bench/load_bench.cc): many
// WorkerGateway.Connect streams in one process, gRPC callback reactors and
// no thread per worker, each answering its assignments with the result
// paradnn-runner gives a `noop` job, and the figures they report into.
#ifndef PARADNN_BENCH_LOAD_SIM_FLEET_H_
#define PARADNN_BENCH_LOAD_SIM_FLEET_H_

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace paradnn::bench {

using SteadyClock = std::chrono::steady_clock;

inline double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Latencies in 20 us buckets up to 5 s (the last bucket holds the rest).
// Add is lock-free; readers run after the writers have stopped or accept a
// slightly torn view.
class LatencyHistogram {
 public:
  LatencyHistogram() : buckets_(kBuckets) {}

  void Add(double seconds) {
    const int64_t bucket =
        std::clamp<int64_t>(static_cast<int64_t>(seconds * 1e6 / kBucketUs), 0, kBuckets - 1);
    buckets_[static_cast<size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    int64_t us = static_cast<int64_t>(seconds * 1e6);
    int64_t seen = max_us_.load(std::memory_order_relaxed);
    while (us > seen && !max_us_.compare_exchange_weak(seen, us)) {
    }
  }
  int64_t count() const { return count_.load(); }
  double max_ms() const { return static_cast<double>(max_us_.load()) / 1e3; }
  // The upper edge of the bucket holding quantile `q`, in ms.
  double QuantileMs(double q) const {
    const int64_t total = count();
    if (total == 0) return 0;
    const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(q * total)));
    int64_t seen = 0;
    for (int64_t i = 0; i < kBuckets; ++i) {
      seen += buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
      if (seen >= rank) return static_cast<double>((i + 1) * kBucketUs) / 1e3;
    }
    return max_ms();
  }

 private:
  static constexpr int64_t kBucketUs = 20;
  static constexpr int64_t kBuckets = 5'000'000 / kBucketUs;
  std::vector<std::atomic<int64_t>> buckets_;
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> max_us_{0};
};

// What every simulated worker reports into.
struct Fleet {
  std::atomic<bool> steady{false};    // past the warm-up
  std::atomic<bool> draining{false};  // run over: assignments are left alone
  std::atomic<int64_t> hello_acks{0};
  std::atomic<int64_t> assignments{0};
  std::atomic<int64_t> results_sent{0};
  std::atomic<int64_t> acked{0};
  std::atomic<int64_t> unacked{0};              // results sent, not yet acknowledged
  std::atomic<int64_t> ignored_assignments{0};  // arrived while draining
  std::atomic<int64_t> streams_done{0};
  std::atomic<int64_t> streams_failed{0};  // ended with a non-OK status
  LatencyHistogram latency_all;
  LatencyHistogram latency_steady;
  LatencyHistogram ack_steady;  // result sent -> its ack
  mutable absl::Mutex mu;
  absl::CondVar cv;  // streams_done / unacked changed (Changed)
  std::string first_error ABSL_GUARDED_BY(mu);
  // --job-ms: how long a worker "runs" each job before its result; 0 = the
  // result goes out at once, from the reactor.
  int job_ms = 0;
  // --budget: each result a synthetic timed measurement of its FC job
  // (SyntheticStepSeconds) instead of a noop one, so that the planner fits
  // and chooses as on a real sweep (a noop result has no step time: no
  // model is ever fitted from it).
  bool timed_results = false;

  // After streams_done or unacked changed: wakes Wait. Under mu, so that
  // the wake-up cannot fall between a waiter's check and its sleep and be
  // lost.
  void Changed() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    cv.SignalAll();
  }
  // Waits until `done()` (a test of the counters) or `timeout`; returns
  // done().
  template <typename Done>
  bool Wait(Done done, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + timeout;
    while (!done() && !cv.WaitWithDeadline(&mu, deadline)) {
    }
    return done();
  }
  std::string FirstError() const ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    return first_error;
  }
};

// The step time a simulated worker reports for `config` with
// Fleet.timed_results: its model FLOPs at 20 GFLOP/s plus 0.2 ms a layer,
// times a deterministic +-3 % by `job_id` (a smooth world with noise, as the
// planner meets on a host). 0 for a configuration that does not parse.
double SyntheticStepSeconds(const v1::ModelConfig& config, int64_t job_id);

// The `index`-th sweep the bench submits: `jobs` noop jobs (index values of
// their own), or with `budget_seconds` > 0 a budgeted FC grid of about
// `jobs` configurations whose results Fleet.timed_results makes timed.
v1::SweepSpec LoadSweep(int index, int64_t jobs, double budget_seconds);

class SimWorker;

// Results due later (--job-ms > 0), sent by one thread in due order.
class ResultTimer {
 public:
  void Add(SteadyClock::time_point due, SimWorker* worker, v1::JobAssignment assignment)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    queue_.push(Item{due, worker, std::move(assignment)});
    cv_.Signal();
  }
  // Runs until Stop(); `send` is called without the lock held.
  template <typename Send>
  void Run(Send send) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    while (!stop_) {
      if (queue_.empty()) {
        cv_.Wait(&mu_);
        continue;
      }
      const SteadyClock::time_point due = queue_.top().due;
      if (SteadyClock::now() < due) {
        cv_.WaitWithTimeout(&mu_, absl::FromChrono(due - SteadyClock::now()));
        continue;
      }
      Item item = queue_.top();
      queue_.pop();
      mu_.Unlock();
      send(item.worker, item.assignment);
      mu_.Lock();
    }
  }
  void Stop() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }

 private:
  struct Item {
    SteadyClock::time_point due;
    SimWorker* worker;
    v1::JobAssignment assignment;
    bool operator<(const Item& other) const { return due > other.due; }  // earliest on top
  };
  absl::Mutex mu_;
  absl::CondVar cv_;  // an item added, or stopping
  std::priority_queue<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
};

// One simulated worker: one stream, one job at a time, never a thread.
class SimWorker final : public grpc::ClientBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage> {
 public:
  SimWorker(int index, v1::WorkerGateway::Stub* stub, Fleet* fleet, ResultTimer* timer)
      : index_(index), stub_(stub), fleet_(fleet), timer_(timer) {}

  // Opens the stream and says hello.
  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // From the heartbeat thread.
  void MaybeHeartbeat(SteadyClock::time_point now) ABSL_LOCKS_EXCLUDED(mu_);
  // Half-closes the stream once queued writes are out; the coordinator then
  // ends it.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);
  void Cancel() { context_.TryCancel(); }
  // The result paradnn-runner gives a noop job (trainer.cc RunJob); from the
  // reactor, or from the ResultTimer with --job-ms.
  void SendResult(const v1::JobAssignment& assignment) ABSL_LOCKS_EXCLUDED(mu_);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void OnAssignment(const v1::JobAssignment& assignment, SteadyClock::time_point now)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Enqueue(v1::WorkerMessage message) ABSL_LOCKS_EXCLUDED(mu_);
  void StartCall() ABSL_LOCKS_EXCLUDED(mu_);

  const int index_;
  v1::WorkerGateway::Stub* const stub_;
  Fleet* const fleet_;
  ResultTimer* const timer_;
  grpc::ClientContext context_;
  v1::CoordinatorMessage incoming_;

  absl::Mutex mu_;
  std::deque<v1::WorkerMessage> outbox_ ABSL_GUARDED_BY(mu_);  // front is being written
  bool started_call_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  int64_t heartbeat_ms_ ABSL_GUARDED_BY(mu_) = 0;  // 0 until the hello_ack
  SteadyClock::time_point next_heartbeat_ ABSL_GUARDED_BY(mu_);
  bool waiting_ ABSL_GUARDED_BY(mu_) = false;  // for an assignment, since waiting_since_
  SteadyClock::time_point waiting_since_ ABSL_GUARDED_BY(mu_);
  SteadyClock::time_point result_sent_ ABSL_GUARDED_BY(mu_);
  int64_t running_job_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t running_attempt_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t unacked_attempt_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace paradnn::bench

#endif  // PARADNN_BENCH_LOAD_SIM_FLEET_H_
