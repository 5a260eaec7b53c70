// paradnn-bench-load: the coordinator under a fleet of simulated workers.
//
// Starts the real paradnn-coordinator on a fresh SQLite file (Unix socket)
// and connects --workers simulated workers from this one process, each with
// its own WorkerGateway.Connect stream (gRPC callback reactors, no thread per
// worker), spread over --channels channels that do not share a connection.
// A worker says hello with a Platform, heartbeats at the HelloAck interval,
// and answers every JobAssignment with JobStarted and a JobResult at once:
// the OK result the runner gives a job of the harness family `noop`
// (model/families/noop.h); with --job-ms it holds each job that long
// first, to offer a chosen load instead of saturating the coordinator. Noop
// sweeps are submitted through the Coordinator service so that 1..2 sweeps'
// worth of jobs are always pending. docs/operations.md has the figures.
//
// Measures, beside the targets (after a warm-up of --warmup-fraction
// of the run):
//   results stored per second     acks received (the coordinator acks after
//                                 commit), target >= 2,000/s (5,000
//                                 saturated workers: >= 5,000/s)
//   assignment latency p50/p99    from a worker sending its result (or its
//                                 hello) to its next assignment, target p99
//                                 <= 50 ms
//   coordinator RSS               VmRSS each second: max (target <= 300 MB;
//                                 5,000 workers: <= 500 MB),
//                                 median of the steady part's first vs last
//                                 minute (flat), least-squares slope
//   coordinator CPU               utime + stime each second
// and, after the run (no result in flight, coordinator stopped), that the
// database holds exactly as many results as were acknowledged.
//
// --budget S instead submits one budgeted FC sweep of about --sweep-jobs
// configurations (run.budget_seconds S), whose results carry a synthetic
// step time (SyntheticStepSeconds): the budget planner fits its models and
// chooses every job. Targets there: p99 gap between a worker's result (or hello) and its
// next assignment <= 1 s, from the first assignment on, and coordinator
// RSS <= 500 MB (100,000 configurations).
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "bench/load_sim_fleet.h"
#include "bench/proc_sample.h"
#include "common/mutex_checks.h"
#include "common/subprocess.h"
#include "db/database.h"
#include "paradnn/v1/coordinator.grpc.pb.h"

namespace {

using namespace paradnn;  // NOLINT(build/namespaces): main only
using bench::Fleet;
using bench::LoadAverage1;
using bench::ProcSample;
using bench::ReadProc;
using bench::ResultTimer;
using bench::SecondsBetween;
using bench::SimWorker;
using bench::SteadyClock;

struct Sample {
  double t = 0;  // seconds since the workers started
  int64_t acked = 0;
  ProcSample coordinator;
  ProcSample bench;
  double load1 = 0;
};

absl::StatusOr<int64_t> CountRows(const std::string& db_path, const char* sql) {
  absl::StatusOr<std::unique_ptr<db::Database>> database = db::Database::Open(db_path);
  if (!database.ok()) return database.status();
  int64_t count = 0;
  absl::Status status = (*database)->Read([&](sqlite3* conn) -> absl::Status {
    db::Statement stmt(conn, sql);
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    count = stmt.ColumnInt(0);
    return absl::OkStatus();
  });
  return status.ok() ? absl::StatusOr<int64_t>(count) : status;
}

// The median of `field` over the samples in [begin, end): RSS at the start
// and the end of the steady part, robust to the transient tens of MB each
// sweep submit allocates (one sample taken during a submit would otherwise
// read as growth).
double MedianOver(const std::vector<Sample>& samples, size_t begin, size_t end,
                  double ProcSample::*field) {
  std::vector<double> values;
  for (size_t i = begin; i < end && i < samples.size(); ++i) {
    values.push_back(samples[i].coordinator.*field);
  }
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

void PrintRow(const std::string& figure, const std::string& value, const std::string& target,
              const std::string& ratio) {
  std::cout << absl::StrFormat("%-34s %14s %12s %10s\n", figure, value, target, ratio);
}

struct LoadOptions {
  int workers = 1000;
  double seconds = 600;
  int channels = 0;
  int64_t sweep_jobs = 50'000;
  double warmup_fraction = 0.1;
  int job_ms = 0;
  double budget = 0;
  std::string bin_dir;
  std::string db_path;
  bool keep_db = false;
  std::string coordinator_metrics;
};

void AddFlags(CLI::App& app, LoadOptions* o) {
  app.add_option("--workers", o->workers, "Simulated workers, one stream each")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--seconds", o->seconds, "Length of the run")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app.add_option("--channels", o->channels,
                 "gRPC channels (connections) the streams share "
                 "(default: one per 100 workers)");
  app.add_option("--sweep-jobs", o->sweep_jobs, "Jobs per submitted noop sweep")
      ->check(CLI::Range(int64_t{100}, int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--warmup-fraction", o->warmup_fraction,
                 "Share of the run before the steady-state figures start")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  app.add_option("--job-ms", o->job_ms,
                 "Each worker holds each job this long before its result (0: at once); "
                 "paces the offered load at workers * 1000 / job-ms results/s")
      ->check(CLI::Range(0, 3'600'000))
      ->capture_default_str();
  app.add_option("--budget", o->budget,
                 "Submit one budgeted FC sweep of about --sweep-jobs configurations with this "
                 "budget (s) instead of keeping sweeps pending: the budget planner under load")
      ->check(CLI::Range(1.0, 31'536'000.0));
  app.add_option("--db", o->db_path, "SQLite file (default: a fresh one under /tmp)");
  app.add_flag("--keep-db", o->keep_db, "Keep the database file after the run");
  app.add_option("--coordinator-metrics", o->coordinator_metrics,
                 "Give the coordinator --metrics-listen HOST:PORT, to watch /metrics during a run");
  app.add_option("--bin-dir", o->bin_dir,
                 "Folder of paradnn-coordinator (default: this program's)");
}

// What the database holds after the run.
struct StoredCounts {
  absl::StatusOr<int64_t> results = 0;
  absl::StatusOr<int64_t> distinct_jobs = 0;
  absl::StatusOr<int64_t> done_jobs = 0;
};

// The steady-state figures of a run's samples.
struct SteadyFigures {
  double rate = 0;  // results acked per second
  double rss_max = 0;
  double slope = 0;  // least-squares RSS slope, MB per minute
  double cpu = 0;    // coordinator, % of one core
  double bench_cpu = 0;
  double load_mean = 0;
  size_t window = 1;  // samples in the first/last medians
  double rss_first = 0, rss_last = 0;
  double anon_first = 0, anon_last = 0;
  double file_first = 0, file_last = 0;
};

// One run of the bench: the coordinator process, the simulated fleet and
// the threads that feed it, in the order they start and stop.
class LoadRun {
 public:
  explicit LoadRun(LoadOptions options) : o_(std::move(options)) {}

  // Starts the coordinator and submits the first sweep.
  bool StartCoordinator();
  // Connects the simulated workers and the heartbeat, feeder and timer
  // threads.
  void StartFleet();
  // Samples the coordinator once a second until the run's length; false if
  // the coordinator died or nothing was sampled.
  bool Measure();
  // No new work; every result in flight acknowledged, streams closed, the
  // coordinator stopped; counts what the database holds.
  void Drain();
  // Prints the figures beside their targets; the exit status.
  int Report() const;
  // Stops the threads and streams and the coordinator after a failure.
  void Abort();

 private:
  bool Submit();
  void StopThreads();
  SteadyFigures Figures() const;

  const LoadOptions o_;
  pid_t coordinator_ = -1;
  std::string address_;
  std::unique_ptr<v1::Coordinator::Stub> coordinator_stub_;
  std::atomic<int64_t> submitted_{0};
  std::atomic<int> sweeps_{0};
  std::atomic<double> max_submit_seconds_{0};

  std::vector<std::shared_ptr<grpc::Channel>> worker_channels_;
  std::vector<std::unique_ptr<v1::WorkerGateway::Stub>> stubs_;
  Fleet fleet_;
  ResultTimer timer_;
  std::thread timer_thread_;
  std::vector<std::unique_ptr<SimWorker>> fleet_workers_;
  std::atomic<bool> stop_threads_{false};
  std::atomic<bool> submit_failed_{false};
  std::thread heartbeats_;
  std::thread feeder_;

  SteadyClock::time_point start_;
  SteadyClock::time_point end_;
  SteadyClock::time_point warmup_at_;
  std::vector<Sample> samples_;
  size_t warmup_index_ = 0;
  int64_t acked_at_warmup_ = 0;
  int64_t acked_at_end_ = 0;
  int64_t unacked_left_ = 0;
  int coordinator_status_ = 0;
  StoredCounts stored_;
};

bool LoadRun::StartCoordinator() {
  const std::string socket = absl::StrCat("/tmp/paradnn-bench-load-", getpid(), ".sock");
  address_ = "unix:" + socket;
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  if (!o_.coordinator_metrics.empty()) {
    environment.push_back("PARADNN_METRICS_LISTEN=" + o_.coordinator_metrics);
  }
  common::SpawnOptions spawn;
  spawn.stdin_fd = STDIN_FILENO;
  spawn.stdout_fd = STDOUT_FILENO;
  spawn.stderr_fd = STDERR_FILENO;
  spawn.environment = &environment;
  absl::StatusOr<common::SpawnedChild> spawned = common::SpawnChild(
      {o_.bin_dir + "/paradnn-coordinator", "--db", o_.db_path, "--listen", address_, "--max-jobs",
       absl::StrCat(std::max<int64_t>(o_.sweep_jobs, 100000)), "--log-level", "warn"},
      spawn);
  if (!spawned.ok()) {
    std::cerr << spawned.status() << "\n";
    return false;
  }
  coordinator_ = spawned->pid;
  for (int i = 0; i < 200 && !std::filesystem::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  coordinator_stub_ =
      v1::Coordinator::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  if (!Submit()) return false;
  std::cerr << absl::StrFormat("first sweep of %d %s jobs submitted in %.2f s\n", o_.sweep_jobs,
                               o_.budget > 0 ? "fc" : "noop", max_submit_seconds_.load());
  return true;
}

bool LoadRun::Submit() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::SubmitSweepRequest request;
  *request.mutable_spec() = bench::LoadSweep(sweeps_.load(), o_.sweep_jobs, o_.budget);
  v1::SubmitSweepResponse response;
  const auto start = SteadyClock::now();
  grpc::Status status = coordinator_stub_->SubmitSweep(&context, request, &response);
  const double took = SecondsBetween(start, SteadyClock::now());
  if (!status.ok()) {
    std::cerr << "SubmitSweep: " << status.error_message() << "\n";
    return false;
  }
  if (took > max_submit_seconds_.load()) max_submit_seconds_.store(took);
  submitted_.fetch_add(response.jobs());
  sweeps_.fetch_add(1);
  return true;
}

void LoadRun::StartFleet() {
  // Channels that do not share a connection: a distinct argument each, and
  // no global subchannel pool.
  for (int c = 0; c < o_.channels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("paradnn.bench_channel", c);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
    worker_channels_.push_back(
        grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args));
    stubs_.push_back(v1::WorkerGateway::NewStub(worker_channels_.back()));
  }
  fleet_.job_ms = o_.job_ms;
  fleet_.timed_results = o_.budget > 0;
  timer_thread_ = std::thread([this] {
    timer_.Run([this](SimWorker* worker, const v1::JobAssignment& assignment) {
      if (!fleet_.draining.load()) worker->SendResult(assignment);
    });
  });
  start_ = SteadyClock::now();
  warmup_at_ = start_;
  for (int i = 0; i < o_.workers; ++i) {
    fleet_workers_.push_back(std::make_unique<SimWorker>(
        i, stubs_[static_cast<size_t>(i % o_.channels)].get(), &fleet_, &timer_));
    fleet_workers_.back()->Start();
  }
  heartbeats_ = std::thread([this] {
    while (!stop_threads_.load()) {
      const auto now = SteadyClock::now();
      for (auto& worker : fleet_workers_) worker->MaybeHeartbeat(now);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  // Keeps between one and two sweeps' worth of jobs pending (a budgeted
  // run has its one sweep).
  feeder_ = std::thread([this] {
    while (o_.budget == 0 && !stop_threads_.load() && !fleet_.draining.load()) {
      if (submitted_.load() - fleet_.results_sent.load() < o_.sweep_jobs) {
        if (!Submit()) {
          submit_failed_ = true;
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
}

bool LoadRun::Measure() {
  const double warmup_seconds = o_.seconds * o_.warmup_fraction;
  for (int tick = 1; !submit_failed_.load(); ++tick) {
    std::this_thread::sleep_until(start_ + std::chrono::seconds(tick));
    Sample s;
    s.t = SecondsBetween(start_, SteadyClock::now());
    s.acked = fleet_.acked.load();
    s.coordinator = ReadProc(coordinator_);
    s.bench = ReadProc(getpid());
    s.load1 = LoadAverage1();
    samples_.push_back(s);
    if (!fleet_.steady.load() && s.t >= warmup_seconds) {
      fleet_.steady = true;
      warmup_index_ = samples_.size() - 1;
      acked_at_warmup_ = s.acked;
      warmup_at_ = SteadyClock::now();
    }
    if (tick % 10 == 0 && samples_.size() > 10) {
      const Sample& before = samples_[samples_.size() - 11];
      const double cpu =
          (s.coordinator.cpu_seconds - before.coordinator.cpu_seconds) / (s.t - before.t) * 100;
      std::cerr << absl::StrFormat(
          "t=%4.0f s  streams %d/%d  acked %d (%.0f/s)  p99 %.1f ms  RSS %.1f MB (anon %.1f, file "
          "%.1f)  CPU %.0f %%  load %.2f  sweeps %d\n",
          s.t, fleet_.hello_acks.load(), o_.workers, s.acked,
          static_cast<double>(s.acked - before.acked) / (s.t - before.t),
          fleet_.latency_all.QuantileMs(0.99), s.coordinator.rss_mb, s.coordinator.rss_anon_mb,
          s.coordinator.rss_file_mb, cpu, s.load1, sweeps_.load());
    }
    if (s.t >= o_.seconds) break;
    if (waitpid(coordinator_, nullptr, WNOHANG) == coordinator_) {
      std::cerr << "the coordinator exited during the run\n";
      coordinator_ = -1;
      return false;
    }
  }
  end_ = SteadyClock::now();
  acked_at_end_ = fleet_.acked.load();
  return !samples_.empty();
}

void LoadRun::StopThreads() {
  stop_threads_ = true;
  if (heartbeats_.joinable()) heartbeats_.join();
  if (feeder_.joinable()) feeder_.join();
  timer_.Stop();
  if (timer_thread_.joinable()) timer_thread_.join();
}

void LoadRun::Abort() {
  StopThreads();
  for (auto& worker : fleet_workers_) worker->Cancel();
  if (coordinator_ > 0) {
    kill(coordinator_, SIGTERM);
    waitpid(coordinator_, nullptr, 0);
  }
}

void LoadRun::Drain() {
  fleet_.draining = true;
  fleet_.Wait([&] { return fleet_.unacked.load() == 0; }, absl::Seconds(60));
  unacked_left_ = fleet_.unacked.load();
  StopThreads();
  for (auto& worker : fleet_workers_) worker->Close();
  const auto every_stream_done = [&] { return fleet_.streams_done.load() == o_.workers; };
  if (!fleet_.Wait(every_stream_done, absl::Seconds(30))) {
    for (auto& worker : fleet_workers_) worker->Cancel();
    fleet_.Wait(every_stream_done, absl::InfiniteDuration());
  }
  kill(coordinator_, SIGTERM);
  waitpid(coordinator_, &coordinator_status_, 0);
  stored_.results = CountRows(o_.db_path, "SELECT COUNT(*) FROM results");
  stored_.distinct_jobs = CountRows(o_.db_path, "SELECT COUNT(DISTINCT job_id) FROM results");
  stored_.done_jobs = CountRows(o_.db_path, "SELECT COUNT(*) FROM jobs WHERE state = 3");
  if (!o_.keep_db) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o_.db_path + suffix);
  }
}

SteadyFigures LoadRun::Figures() const {
  SteadyFigures f;
  const Sample& warm = samples_[warmup_index_];
  const Sample& last = samples_.back();
  f.rate = static_cast<double>(acked_at_end_ - acked_at_warmup_) / SecondsBetween(warmup_at_, end_);
  for (const Sample& sample : samples_) f.rss_max = std::max(f.rss_max, sample.coordinator.rss_mb);
  double n = 0, st = 0, sr = 0, stt = 0, str = 0;
  for (size_t i = warmup_index_; i < samples_.size(); ++i) {
    const double t = samples_[i].t, r = samples_[i].coordinator.rss_mb;
    n += 1, st += t, sr += r, stt += t * t, str += t * r;
  }
  if (n > 1 && n * stt - st * st > 0) f.slope = (n * str - st * sr) / (n * stt - st * st) * 60;
  f.cpu = (last.coordinator.cpu_seconds - warm.coordinator.cpu_seconds) / (last.t - warm.t) * 100;
  f.bench_cpu = (last.bench.cpu_seconds - warm.bench.cpu_seconds) / (last.t - warm.t) * 100;
  double load_sum = 0;
  for (size_t i = warmup_index_; i < samples_.size(); ++i) load_sum += samples_[i].load1;
  f.load_mean = load_sum / static_cast<double>(samples_.size() - warmup_index_);
  // RSS flat: the median of the steady part's first and last minute (a
  // quarter of it in shorter runs).
  f.window = std::max<size_t>(1, std::min<size_t>(60, (samples_.size() - warmup_index_) / 4));
  const size_t last_begin = samples_.size() - f.window;
  auto first = [&](double ProcSample::*field) {
    return MedianOver(samples_, warmup_index_, warmup_index_ + f.window, field);
  };
  auto later = [&](double ProcSample::*field) {
    return MedianOver(samples_, last_begin, samples_.size(), field);
  };
  f.rss_first = first(&ProcSample::rss_mb);
  f.rss_last = later(&ProcSample::rss_mb);
  f.anon_first = first(&ProcSample::rss_anon_mb);
  f.anon_last = later(&ProcSample::rss_anon_mb);
  f.file_first = first(&ProcSample::rss_file_mb);
  f.file_last = later(&ProcSample::rss_file_mb);
  return f;
}

// NOLINTNEXTLINE(readability-function-size): one printed row per figure, in the report's order.
int LoadRun::Report() const {
  const SteadyFigures f = Figures();
  const double p50 = fleet_.latency_steady.QuantileMs(0.50);
  const double p99 = fleet_.latency_steady.QuantileMs(0.99);
  const double growth = f.rss_last - f.rss_first;
  std::cout << absl::StrFormat(
      "\n%d simulated workers on %d channels, results %s, %.0f s (steady: the last %.0f s after a "
      "%.0f s "
      "warm-up), %d %s sweeps of %d jobs%s\nhost: %d CPUs, load average %.2f over the steady "
      "part (this bench and the coordinator share them)\n\n",
      o_.workers, o_.channels,
      o_.job_ms > 0 ? absl::StrCat(o_.job_ms, " ms after each assignment") : std::string("at once"),
      SecondsBetween(start_, end_), SecondsBetween(warmup_at_, end_),
      o_.seconds * o_.warmup_fraction, sweeps_.load(), o_.budget > 0 ? "fc" : "noop", o_.sweep_jobs,
      o_.budget > 0 ? absl::StrFormat(", budgeted (%.0f s), synthetic step times", o_.budget)
                    : std::string(),
      static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), f.load_mean);
  // The targets of the fleet size asked for: 1,000 workers (issue 6) or
  // 5,000 (issue 17). Saturated, the latency is the queue (workers ÷
  // throughput, docs/operations.md): its target is for paced runs.
  const bool large_fleet = o_.workers >= 5000;
  const bool budgeted = o_.budget > 0;
  const double rate_target = large_fleet && o_.job_ms == 0 ? 5000 : 2000;
  const double rss_target = large_fleet || budgeted ? 500 : 300;
  PrintRow("figure", "value", "target", "ratio");
  if (budgeted) {
    // Paced by the workers; every gap counts, the first (the design) too.
    const double gap = fleet_.latency_all.QuantileMs(0.99);
    PrintRow("results stored/s (acked, steady)", absl::StrFormat("%.0f", f.rate), "", "");
    PrintRow("gap result -> next assignment p99", absl::StrFormat("%.1f ms", gap), "<= 1000 ms",
             absl::StrFormat("%.2fx%s", gap / 1000, gap <= 1000 ? "" : "  over"));
    PrintRow("gap result -> next assignment max",
             absl::StrFormat("%.1f ms", fleet_.latency_all.max_ms()), "", "");
  } else {
    PrintRow(
        "results stored/s (acked, steady)", absl::StrFormat("%.0f", f.rate),
        absl::StrFormat(">= %.0f", rate_target),
        absl::StrFormat("%.2fx%s", f.rate / rate_target, f.rate >= rate_target ? "" : "  under"));
  }
  PrintRow("assignment latency p50 (ms)", absl::StrFormat("%.2f", p50), "", "");
  if (o_.job_ms > 0) {
    PrintRow("assignment latency p99 (ms)", absl::StrFormat("%.2f", p99), "<= 50",
             absl::StrFormat("%.2fx%s", p99 / 50, p99 <= 50 ? "" : "  over"));
  } else {
    PrintRow("assignment latency p99 (ms)", absl::StrFormat("%.2f", p99), "(queue)",
             absl::StrFormat("%.0f ms = workers / rate", o_.workers / f.rate * 1000));
  }
  PrintRow("assignment latency max (ms)", absl::StrFormat("%.1f", fleet_.latency_steady.max_ms()),
           "", "");
  PrintRow("result -> ack p50 / p99 (ms)",
           absl::StrFormat("%.2f / %.2f", fleet_.ack_steady.QuantileMs(0.5),
                           fleet_.ack_steady.QuantileMs(0.99)),
           "", "");
  PrintRow(
      "coordinator RSS max (MB)", absl::StrFormat("%.1f", f.rss_max),
      absl::StrFormat("<= %.0f", rss_target),
      absl::StrFormat("%.2fx%s", f.rss_max / rss_target, f.rss_max <= rss_target ? "" : "  over"));
  PrintRow(absl::StrFormat("coordinator RSS, first %zu s (MB)", f.window),
           absl::StrFormat("%.1f", f.rss_first), "", "");
  PrintRow(absl::StrFormat("coordinator RSS, last %zu s (MB)", f.window),
           absl::StrFormat("%.1f", f.rss_last), "flat",
           absl::StrFormat("%+.1f%%", growth / f.rss_first * 100));
  PrintRow("  of which anonymous, first/last",
           absl::StrFormat("%.1f / %.1f", f.anon_first, f.anon_last), "", "");
  PrintRow("  of which file-backed, first/last",
           absl::StrFormat("%.1f / %.1f", f.file_first, f.file_last), "", "");
  PrintRow("coordinator RSS slope (MB/min)", absl::StrFormat("%+.2f", f.slope), "", "");
  PrintRow("coordinator CPU (% of one core)", absl::StrFormat("%.0f", f.cpu), "", "");
  PrintRow("this bench's CPU (% of one core)", absl::StrFormat("%.0f", f.bench_cpu), "", "");
  PrintRow("submit of one sweep, max (s)", absl::StrFormat("%.2f", max_submit_seconds_.load()), "",
           "");

  const int64_t acked_total = fleet_.acked.load();
  const std::string first_error = fleet_.FirstError();
  std::cout << absl::StrFormat(
      "\nassignments %d, results sent %d, acked %d (unacked at close: %d), streams failed %d%s\n",
      fleet_.assignments.load(), fleet_.results_sent.load(), acked_total, unacked_left_,
      fleet_.streams_failed.load(),
      first_error.empty() ? "" : absl::StrCat(" (first: ", first_error, ")"));
  bool exactly_once = false;
  if (stored_.results.ok() && stored_.distinct_jobs.ok() && stored_.done_jobs.ok()) {
    exactly_once = *stored_.results == acked_total && *stored_.distinct_jobs == *stored_.results &&
                   *stored_.done_jobs == *stored_.results && unacked_left_ == 0;
    std::cout << absl::StrFormat(
        "database: %d results for %d distinct jobs, %d jobs done; acked %d -> %s\n",
        *stored_.results, *stored_.distinct_jobs, *stored_.done_jobs, acked_total,
        exactly_once ? "exactly once" : "MISMATCH");
  } else {
    std::cout << "database: cannot count results: "
              << (stored_.results.ok() ? stored_.distinct_jobs.ok() ? stored_.done_jobs.status()
                                                                    : stored_.distinct_jobs.status()
                                       : stored_.results.status())
              << "\n";
  }
  std::cout << absl::StrFormat("coordinator exit status %d\n",
                               WIFEXITED(coordinator_status_)
                                   ? WEXITSTATUS(coordinator_status_)
                                   : 128 + WTERMSIG(coordinator_status_));
  return exactly_once && fleet_.streams_failed.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  paradnn::common::UseReleaseMutexChecks();  // as the binaries it drives
  LoadOptions options;
  CLI::App app("Drives paradnn-coordinator with simulated workers running family noop",
               "paradnn-bench-load");
  AddFlags(app, &options);
  CLI11_PARSE(app, argc, argv);
  if (options.bin_dir.empty()) {
    options.bin_dir = std::filesystem::canonical("/proc/self/exe").parent_path();
  }
  if (options.channels <= 0) options.channels = std::max(1, (options.workers + 99) / 100);
  if (options.db_path.empty()) {
    options.db_path = absl::StrCat("/tmp/paradnn-bench-load-", getpid(), ".db");
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(options.db_path + suffix);

  LoadRun run(std::move(options));
  if (!run.StartCoordinator()) {
    run.Abort();
    return 1;
  }
  run.StartFleet();
  if (!run.Measure()) {
    run.Abort();
    return 1;
  }
  run.Drain();
  return run.Report();
}
