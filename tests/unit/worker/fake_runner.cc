// A stand-in for paradnn-runner that speaks its protocol (docs/contracts.md)
// without LibTorch, for worker tests.
//
//   fake_runner --job-stdin         reads one framed RunnerJob and behaves as
//                                   config.options["behavior"] says
//   fake_runner --platform --framed writes one framed Platform
//   fake_runner --zygote            serves the worker's zygote protocol, each
//                                   job process as --job-stdin (exits 2 with
//                                   FAKE_RUNNER_ZYGOTE=off, as if it had none)
//   fake_runner --calibrate --framed writes it with one fake roof (float32,
//                                   1e11 FLOP/s at 1024^3) and one copy point
//
// Behaviors: ok (3 steps if stream_steps, then an OK result with
// examples_per_sec 123), slow_ok (0.3 s, then as ok), crash (abort),
// exit3 (a stderr line, exit 3), hang (sleep forever), garbage (non-frame
// bytes on stdout, then sleep forever), sigkill (SIGKILL itself, like the
// OOM killer), silent_exit (exit 0 without a result), ok_then_hang (an OK
// result, then sleep forever), log_ok (a log event and stderr lines, then
// as ok), steps_then_hang (3 steps, then sleep forever), gang_broken (a
// GANG_BROKEN result whose error echoes the job's gang role and cpus, as
// GangEcho writes them).
// With FAKE_RUNNER_PLATFORM=hang in the environment, --platform hangs;
// FAKE_RUNNER_DELAY_MS=N makes "ok" take N ms; FAKE_RUNNER_BEHAVIOR_BY_NODE=
// "9=crash,10=hang" gives jobs with params.node 9 and 10 those behaviors;
// FAKE_RUNNER_ROOFLINE=1 makes "ok" results' step times follow a known
// roofline of the FC configuration (RooflineStepSeconds); with it,
// FAKE_RUNNER_DRIFT=FILE makes the host drift on a schedule (job n, counted
// in FILE, runs HostFactor(n) times slower, and its sentinel says so) and
// FAKE_RUNNER_EFFECT=X makes every step X times slower (a known change);
// FAKE_RUNNER_GUILTY="SETTING=VALUE:FACTOR[;...]" makes the steps of a job
// whose SETTING has VALUE FACTOR times slower (a guilty setting for
// `paradnn bisect`): env.NAME is looked up in this process's environment
// (as the worker set it), a stack setting (blas_core) in config.stack,
// anything else in config.params (intra_op_threads=1). With it, results
// record env.NAME settings in Measurement.stack as the real runner does.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "common/framing.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/zygote_server.h"

namespace {

using paradnn::common::WriteFrame;
namespace v1 = paradnn::v1;

[[noreturn]] void SleepForever() {
  for (;;) ::pause();
}

void Emit(const v1::RunnerEvent& event) {
  if (!WriteFrame(STDOUT_FILENO, event).ok()) std::_Exit(5);
}

int64_t Param(const v1::RunnerJob& job, const char* key, int64_t otherwise) {
  const auto it = job.config().params().find(key);
  return it == job.config().params().end() ? otherwise : it->second;
}

// FAKE_RUNNER_ROOFLINE: a known world for budgeted-sweep tests. An FC
// step takes its training FLOPs at 1e11 FLOP/s (the fake roof) plus 0.1 ms.
double RooflineStepSeconds(const v1::RunnerJob& job) {
  const double layer = Param(job, "layer", 1), node = Param(job, "node", 1);
  const double input = Param(job, "input", 1), output = Param(job, "output", 1);
  const double batch = Param(job, "batch", 1);
  const double macs = input * node + (layer - 1) * node * node + node * output;
  return 6 * macs * batch / 1e11 + 1e-4;
}

// The drift of job n: a slow swing of +-10 % with a faster ripple, as a
// shared host wanders over minutes.
double HostFactor(int n) { return std::exp(0.08 * std::sin(0.9 * n) + 0.04 * std::sin(2.7 * n)); }

// The next job's number from the counter file `path` (0 first), advanced.
int NextJobNumber(const char* path) {
  int n = 0;
  std::ifstream(path) >> n;
  std::ofstream(path, std::ios::trunc) << n + 1;
  return n;
}

// SETTING's value for this job, as FAKE_RUNNER_GUILTY reads it; nullopt
// when it has none.
std::optional<std::string> SettingValue(const v1::RunnerJob& job, const std::string& setting) {
  if (setting.rfind("env.", 0) == 0) {
    const char* value = std::getenv(setting.substr(4).c_str());
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  }
  if (const auto it = job.config().stack().find(setting); it != job.config().stack().end()) {
    return it->second;
  }
  if (const auto it = job.config().params().find(setting); it != job.config().params().end()) {
    return std::to_string(it->second);
  }
  return std::nullopt;
}

// The product of the FAKE_RUNNER_GUILTY factors whose setting has its value.
double GuiltyFactor(const v1::RunnerJob& job) {
  const char* rules = std::getenv("FAKE_RUNNER_GUILTY");
  if (rules == nullptr) return 1;
  double factor = 1;
  std::stringstream list(rules);
  for (std::string rule; std::getline(list, rule, ';');) {
    const size_t equals = rule.find('='), colon = rule.rfind(':');
    if (equals == std::string::npos || colon == std::string::npos || colon < equals) continue;
    if (SettingValue(job, rule.substr(0, equals)) == rule.substr(equals + 1, colon - equals - 1)) {
      factor *= std::atof(rule.c_str() + colon + 1);
    }
  }
  return factor;
}

void EmitRooflineOk(const v1::RunnerJob& job) {
  double t = RooflineStepSeconds(job) * GuiltyFactor(job);
  const char* drift = std::getenv("FAKE_RUNNER_DRIFT");
  const double host = drift != nullptr ? HostFactor(NextJobNumber(drift)) : 1;
  if (const char* effect = std::getenv("FAKE_RUNNER_EFFECT"); effect != nullptr) {
    t *= std::atof(effect);
  }
  t *= host;
  v1::RunnerEvent event;
  v1::Measurement* m = event.mutable_result();
  m->set_outcome(v1::OK);
  *m->mutable_config() = job.config();
  for (const auto& [key, requested] : job.config().stack()) {
    if (key.rfind("env.", 0) == 0) (*m->mutable_stack())[key] = SettingValue(job, key).value_or("");
  }
  m->set_device(job.device());
  for (int i = 0; i < 3; ++i) m->add_step_seconds(t);
  m->set_examples_per_sec(static_cast<double>(Param(job, "batch", 1)) / t);
  v1::StepStats* stats = m->mutable_stats();
  stats->set_steps(3);
  stats->set_mean_s(t);
  stats->set_median_s(t);
  stats->set_p10_s(t);
  stats->set_p90_s(t);
  m->set_timed_seconds(3 * t);
  m->set_build_seconds(0.01);
  if (drift != nullptr) {
    m->mutable_sentinel()->set_compute_before(1 / host);
    m->mutable_sentinel()->set_compute_after(1 / host);
  }
  Emit(event);
}

void EmitOk(const v1::RunnerJob& job) {
  if (std::getenv("FAKE_RUNNER_ROOFLINE") != nullptr) {
    EmitRooflineOk(job);
    return;
  }
  if (job.stream_steps()) {
    for (int i = 1; i <= 3; ++i) {
      v1::RunnerEvent event;
      event.mutable_step()->set_step(i);
      event.mutable_step()->set_seconds(0.01 * i);
      event.mutable_step()->set_loss(1.0 / i);
      Emit(event);
    }
  }
  v1::RunnerEvent event;
  v1::Measurement* m = event.mutable_result();
  m->set_outcome(v1::OK);
  *m->mutable_config() = job.config();
  m->set_examples_per_sec(123);
  m->set_device(job.device());
  m->add_step_seconds(0.01);
  m->add_step_seconds(0.02);
  m->add_step_seconds(0.03);
  Emit(event);
}

// What the runner was given of a gang and CPUs, for tests to compare.
std::string GangEcho(const v1::RunnerJob& job) {
  const v1::GangRole& gang = job.gang();
  std::ostringstream echo;
  echo << "gang rank " << gang.host_rank() << " of " << gang.hosts() << " x "
       << gang.devices_per_host() << " at " << gang.rendezvous_host() << ":"
       << gang.rendezvous_port() << " tag '" << gang.gang_tag() << "' secret '" << gang.secret()
       << "' timeout " << gang.collective_timeout_s() << " peers " << gang.worker_ids_size()
       << "; cpus '" << job.cpus() << "'";
  return echo.str();
}

void EmitGangBroken(const v1::RunnerJob& job) {
  v1::RunnerEvent event;
  v1::Measurement* m = event.mutable_result();
  m->set_outcome(v1::GANG_BROKEN);
  m->set_error(GangEcho(job));
  *m->mutable_config() = job.config();
  m->set_device(job.device());
  Emit(event);
}

v1::Platform FakePlatform() {
  v1::Platform platform;
  platform.set_fingerprint("fake-fingerprint");
  platform.set_device_kind("cpu");
  platform.set_device_name("Fake CPU");
  platform.set_cores(2);
  platform.set_logical_cpus(4);
  platform.set_blas_backend("FakeBLAS 1.0");
  platform.set_libtorch_version("0.0.0-fake");
  return platform;
}

int Calibrate() {
  v1::Platform platform = FakePlatform();
  v1::MatmulRoof* roof = platform.add_matmul_roofs();
  roof->set_dtype("float32");
  roof->set_flops_per_sec(1e11);
  roof->set_m(1024);
  roof->set_n(1024);
  roof->set_k(1024);
  v1::BandwidthPoint* point = platform.add_bandwidth();
  point->set_kernel("copy");
  point->set_bytes(1 << 20);
  point->set_bytes_per_sec(1e10);
  platform.set_calibrated_unix_ms(1'700'000'000'000);
  platform.set_probe_flops_per_sec(5e10);
  platform.set_probe_threads(4);
  platform.set_latency_probe_seconds(1e-4);
  return WriteFrame(STDOUT_FILENO, platform).ok() ? 0 : 1;
}

int Platform() {
  if (const char* mode = std::getenv("FAKE_RUNNER_PLATFORM");
      mode != nullptr && std::string(mode) == "hang") {
    SleepForever();
  }
  return WriteFrame(STDOUT_FILENO, FakePlatform()).ok() ? 0 : 1;
}

}  // namespace

int RunJobFromStdin();

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--zygote") == 0) {
    if (const char* zygote = std::getenv("FAKE_RUNNER_ZYGOTE");
        zygote != nullptr && std::string(zygote) == "off") {
      return 2;  // like a runner without the mode
    }
    return paradnn::worker::ServeZygote(STDIN_FILENO, [] { return RunJobFromStdin(); });
  }
  if (argc >= 2 && std::strcmp(argv[1], "--platform") == 0) return Platform();
  if (argc >= 2 && std::strcmp(argv[1], "--calibrate") == 0) return Calibrate();
  if (argc < 2 || std::strcmp(argv[1], "--job-stdin") != 0) {
    std::fprintf(stderr, "usage: fake_runner --job-stdin | --platform --framed | --zygote\n");
    return 2;
  }
  return RunJobFromStdin();
}

int RunJobFromStdin() {
  v1::RunnerJob job;
  auto read = paradnn::common::ReadFrame(STDIN_FILENO, &job);
  if (!read.ok() || !*read) {
    std::fprintf(stderr, "fake runner: no job on stdin\n");
    return 4;
  }
  const auto it = job.config().options().find("behavior");
  std::string behavior = it == job.config().options().end() ? "ok" : it->second;
  // Sweep files cannot set a "behavior" option (families refuse unknown
  // options), so process-level tests pick behaviors by node count instead.
  if (const char* by_node = std::getenv("FAKE_RUNNER_BEHAVIOR_BY_NODE");
      by_node != nullptr && it == job.config().options().end()) {
    const auto node = job.config().params().find("node");
    const std::string wanted =
        node == job.config().params().end() ? "" : std::to_string(node->second) + "=";
    std::string rules = by_node;
    for (size_t start = 0; !wanted.empty() && start < rules.size();) {
      size_t end = rules.find(',', start);
      if (end == std::string::npos) end = rules.size();
      const std::string rule = rules.substr(start, end - start);
      if (rule.compare(0, wanted.size(), wanted) == 0) behavior = rule.substr(wanted.size());
      start = end + 1;
    }
  }

  if (behavior == "ok") {
    // Fault tests make every job take a while so that kills land mid-job.
    if (const char* delay = std::getenv("FAKE_RUNNER_DELAY_MS"); delay != nullptr) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(delay)));
    }
    EmitOk(job);
  } else if (behavior == "slow_ok") {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EmitOk(job);
  } else if (behavior == "log_ok") {
    v1::RunnerEvent log;
    log.set_log("building model");
    Emit(log);
    std::fprintf(stderr, "fake runner: first stderr line\nfake runner: second stderr line\n");
    EmitOk(job);
  } else if (behavior == "crash") {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // no core file for a deliberate abort
    std::fprintf(stderr, "fake runner: about to abort\n");
    std::abort();
  } else if (behavior == "exit3") {
    std::fprintf(stderr, "fake runner: out of cheese\n");
    return 3;
  } else if (behavior == "hang") {
    SleepForever();
  } else if (behavior == "garbage") {
    const char garbage[] = "this is not a frame\n";
    if (::write(STDOUT_FILENO, garbage, sizeof(garbage) - 1) < 0) return 5;
    SleepForever();
  } else if (behavior == "sigkill") {
    ::raise(SIGKILL);
  } else if (behavior == "silent_exit") {
    return 0;
  } else if (behavior == "steps_then_hang") {
    for (int i = 1; i <= 3; ++i) {
      v1::RunnerEvent event;
      event.mutable_step()->set_step(i);
      event.mutable_step()->set_seconds(0.01);
      Emit(event);
    }
    SleepForever();
  } else if (behavior == "gang_broken") {
    EmitGangBroken(job);
  } else if (behavior == "ok_then_hang") {
    EmitOk(job);
    SleepForever();
  } else {
    std::fprintf(stderr, "fake runner: unknown behavior '%s'\n", behavior.c_str());
    return 2;
  }
  return 0;
}
