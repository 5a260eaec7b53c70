// The allreduce family through the whole harness against a bare c10d Gloo
// loop, in one run (issue 39, item 4: "harness >= 0.95 of it"). Two ranks,
// two processes each, on 127.0.0.1, messages 4 KiB .. 64 MiB (x4), each
// rank pinned to a CPU of its own where the host has two:
//   harness: two real paradnn-runner processes run an `allreduce` job as a
//            gang of two (RunnerJob.gang on a free port, as the coordinator
//            assigns it); its figure is the job's median step (rank 0's
//            Measurement: sample by sample the slower rank's, then the
//            median), what a result stores;
//   bare:    two copies of this program (--bare-rank) join a TCPStore and a
//            ProcessGroupGloo and loop allreduce(...)->wait() on a zeroed
//            float32 tensor: the same warm-up, the same samples of the same
//            block of steps as the harness's job of that size took, the
//            same slower-rank-per-sample median.
// Rounds interleave the two (the harness first in even rounds, the bare
// loop first in odd ones, with the block the harness took last round, and
// again after it where the harness took another; this host's speed
// drifts); per size the table
// gives the median over rounds of each, algbw = bytes / step, busbw =
// algbw x 2(n-1)/n (x 1 for 2 ranks, nccl-tests), and harness / bare.
// PARADNN_GLOO_DEVICE_NICE=N in this program's environment reaches both
// sides (worker/runner/gloo_device_nice.h): the comparison without Gloo's
// tick stalls (docs/measurement.md "Stalls").
// Usage: paradnn-bench-allreduce-family [--rounds R] [--max-mib M]
//        [--sizes-kib K,K,...] [--max-seconds S] [--runner PATH]
//        [--variant-env NAME=VALUE ...]
#include <ATen/Parallel.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

// ProcessGroupGloo.hpp declares its class where USE_C10D_GLOO is defined,
// as LibTorch's CMake package does for every unit that links it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/address.h"
#include "common/cpu_list.h"
#include "common/framing.h"
#include "common/subprocess.h"
#include "hostfacts/host_facts.h"
#include "paradnn/v1/metrics.pb.h"
#include "worker/runner/gloo_device_nice.h"
#include "worker/runner/platform_torch.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace common = paradnn::common;
namespace v1 = paradnn::v1;

constexpr int kRanks = 2;
constexpr int kWarmupSteps = 3;
constexpr auto kTimeout = std::chrono::seconds(120);

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A loopback port nobody listens on now; -1 if none could be bound.
int FreePort() { return paradnn::common::FreeTcpPort("127.0.0.1").value_or(-1); }

// Rank r's CPU: the r-th this process may use, where there are two; none
// (-1) on a one-CPU host, where pinning both ranks to it would only add
// contention the harness does not have either.
int RankCpu(int rank) {
  const std::vector<int> cpus = common::AllowedCpus();
  return cpus.size() >= kRanks ? cpus[static_cast<size_t>(rank)] : -1;
}

// ---- the bare loop: one rank (--bare-rank) -----------------------------------

struct BareArgs {
  int rank = -1, port = 0, samples = 0, block = 1, cpu = -1;
  int64_t bytes = 0;
};

// Joins the group and prints "t1 t2 ..." (seconds per step of each sample).
int RunBareRank(const BareArgs& a) {
  if (a.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(a.cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  }
  at::set_num_threads(1);  // what the runner sets when confined to one CPU
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(a.port);
  store_options.isServer = a.rank == 0;
  store_options.waitWorkers = false;
  store_options.timeout = kTimeout;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", store_options);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = kTimeout;
  const std::vector<int> threads_before = paradnn::common::ThreadIds();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  // PARADNN_GLOO_DEVICE_NICE applies here as in the runner.
  (void)paradnn::runner::ReniceNewThreads(threads_before);
  auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, a.rank, kRanks, options);
  std::vector<at::Tensor> message{torch::zeros({a.bytes / 4}, torch::kFloat32)};
  for (int i = 0; i < kWarmupSteps; ++i) group->allreduce(message)->wait();
  std::vector<double> seconds(static_cast<size_t>(a.samples));
  for (double& s : seconds) {
    const auto t0 = Clock::now();
    for (int i = 0; i < a.block; ++i) group->allreduce(message)->wait();
    s = std::chrono::duration<double>(Clock::now() - t0).count() / a.block;
  }
  for (double s : seconds) std::printf("%.9g ", s);
  std::printf("\n");
  return 0;
}

// ---- children ----------------------------------------------------------------

// A child whose stdout is read whole on a thread (so that neither child
// blocks on a full pipe while we wait for the other).
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& input,
        const std::vector<std::string>* environment = nullptr) {
    common::SpawnOptions options;
    options.environment = environment;
    absl::StatusOr<common::ScopedFd> quiet = common::OpenForChild("/dev/null", O_WRONLY);
    if (quiet.ok()) options.stderr_fd = quiet->get();
    absl::StatusOr<common::SpawnedChild> child = common::SpawnChild(argv, options);
    if (!child.ok()) {
      std::fprintf(stderr, "%s\n", std::string(child.status().message()).c_str());
      return;
    }
    pid_ = child->pid;
    if (!input.empty() &&
        write(child->stdin_fd.get(), input.data(), input.size()) != ssize_t(input.size())) {
      std::fprintf(stderr, "could not write the job to %s\n", argv[0].c_str());
    }
    child->stdin_fd.Reset();
    reader_ = std::thread([this, fd = std::move(child->stdout_fd)] {
      char buffer[65536];
      for (ssize_t n; (n = read(fd.get(), buffer, sizeof(buffer))) > 0;) out_.append(buffer, n);
    });
  }
  // Waits for the child; returns its stdout.
  std::string Wait() {
    if (reader_.joinable()) reader_.join();
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return out_;
  }
  ~Child() { Wait(); }

 private:
  pid_t pid_ = -1;
  std::thread reader_;
  std::string out_;
};

std::vector<double> ParseSeconds(const std::string& text) {
  std::vector<double> values;
  std::istringstream in(text);
  for (double v; in >> v;) values.push_back(v);
  return values;
}

// Sample by sample the slower rank's, as the harness's gather does.
std::vector<double> Slowest(const std::vector<std::vector<double>>& ranks) {
  std::vector<double> out = ranks.front();
  for (const auto& r : ranks) {
    for (size_t i = 0; i < out.size() && i < r.size(); ++i) out[i] = std::max(out[i], r[i]);
  }
  return out;
}

struct Options {
  std::string self, runner;
  double max_seconds = 1;
  // --variant-env: the whole environment of a second harness run per round
  // (this process's plus NAME=VALUE entries); empty: none.
  std::vector<std::string> variant_environment;
};

// The median and the 10th percentile of a run's per-sample step times.
struct RunFigures {
  double median_s = 0, p10_s = 0;
};

RunFigures FiguresOf(std::vector<double> seconds) {
  RunFigures f;
  if (seconds.empty()) return f;
  f.median_s = Median(seconds);
  std::sort(seconds.begin(), seconds.end());
  f.p10_s = seconds[seconds.size() / 10];
  return f;
}

// The bare loop's figures for `samples` samples of `block` steps.
RunFigures RunBare(const Options& o, int64_t bytes, int samples, int block) {
  const int port = FreePort();
  std::vector<std::unique_ptr<Child>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::make_unique<Child>(
        std::vector<std::string>{o.self, "--bare-rank", absl::StrCat(r), "--port",
                                 absl::StrCat(port), "--bytes", absl::StrCat(bytes), "--samples",
                                 absl::StrCat(samples), "--block", absl::StrCat(block), "--cpu",
                                 absl::StrCat(RankCpu(r))},
        ""));
  }
  std::vector<std::vector<double>> seconds;
  for (auto& rank : ranks) seconds.push_back(ParseSeconds(rank->Wait()));
  if (seconds[0].empty() || seconds[1].empty()) return {};
  return FiguresOf(Slowest(seconds));
}

v1::RunnerJob HarnessJob(const Options& o, int64_t bytes, int rank, int port) {
  v1::RunnerJob job;
  job.mutable_config()->set_family("allreduce");
  (*job.mutable_config()->mutable_params())["bytes"] = bytes;
  (*job.mutable_config()->mutable_params())["hosts"] = kRanks;
  v1::RunSettings& s = *job.mutable_settings();
  s.set_warmup_steps(kWarmupSteps);
  s.set_min_steps(10);
  s.set_max_seconds(o.max_seconds);
  job.set_device("cpu");
  if (RankCpu(rank) >= 0) job.set_cpus(absl::StrCat(RankCpu(rank)));
  v1::GangRole& gang = *job.mutable_gang();
  gang.set_host_rank(rank);
  gang.set_hosts(kRanks);
  gang.set_devices_per_host(1);
  gang.set_rendezvous_host("127.0.0.1");
  gang.set_rendezvous_port(port);
  gang.set_secret("bench");
  gang.set_gang_tag("bench");
  gang.set_collective_timeout_s(120);
  for (int r = 0; r < kRanks; ++r) gang.add_worker_ids(absl::StrCat("bench", r));
  return job;
}

std::optional<v1::Measurement> ResultOf(const std::string& out) {
  common::FrameDecoder decoder;
  if (!decoder.Append(out.data(), out.size()).ok()) return std::nullopt;
  for (std::string payload; decoder.Next(&payload);) {
    v1::RunnerEvent event;
    if (event.ParseFromString(payload) && event.has_result()) return event.result();
  }
  return std::nullopt;
}

// Rank 0's Measurement of an allreduce job of `bytes` run by a gang of two
// paradnn-runner processes.
std::optional<v1::Measurement> RunHarness(const Options& o, int64_t bytes,
                                          const std::vector<std::string>* environment = nullptr) {
  const int port = FreePort();
  std::vector<std::unique_ptr<Child>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::make_unique<Child>(
        std::vector<std::string>{o.runner, "--job-stdin", "--log-level", "warn"},
        common::EncodeFrame(HarnessJob(o, bytes, r, port)), environment));
  }
  std::optional<v1::Measurement> m = ResultOf(ranks[0]->Wait());
  ranks[1]->Wait();
  if (!m || m->outcome() != v1::OK) {
    std::fprintf(stderr, "harness %lld bytes: %s\n", static_cast<long long>(bytes),
                 m ? m->error().c_str() : "no result");
    return std::nullopt;
  }
  return m;
}

struct SizeRuns {
  std::vector<double> harness_s, bare_s;          // each round's median
  std::vector<double> variant_s, variant_bare_s;  // --variant-env's, and its round's bare
  std::vector<double> harness_p10_s, bare_p10_s;  // and 10th percentile
  int samples = 0, block = 1;
};

// A distribution-free 95 % confidence interval of the median of `values`:
// the order statistics k and n + 1 - k with the largest k for which
// P(k <= Binomial(n, 1/2) <= n - k) >= 0.95 (Boost.Math's binomial CDF);
// {0, 0} below 6 values, where no such k exists.
std::pair<double, double> MedianCi95(std::vector<double> values) {
  const int n = static_cast<int>(values.size());
  if (n < 6) return {0, 0};
  std::sort(values.begin(), values.end());
  const boost::math::binomial_distribution<double> half(n, 0.5);
  int k = 0;
  while (k + 1 <= n / 2 && 1 - 2 * boost::math::cdf(half, k) >= 0.95) ++k;
  // k: the largest count with P(B <= k - 1) <= 2.5 %, order statistics k and
  // n + 1 - k, 1-based.
  return {values[static_cast<size_t>(k - 1)], values[static_cast<size_t>(n - k)]};
}

std::vector<double> Ratios(const std::vector<double>& bare, const std::vector<double>& harness) {
  std::vector<double> ratios;
  for (size_t i = 0; i < bare.size() && i < harness.size(); ++i) {
    ratios.push_back(bare[i] / harness[i]);
  }
  return ratios;
}

std::string Size(int64_t bytes) {
  return bytes >= (1 << 20) ? absl::StrCat(bytes >> 20, " MiB") : absl::StrCat(bytes >> 10, " KiB");
}

void PrintTable(const std::map<int64_t, SizeRuns>& runs) {
  std::printf("\n%8s %6s | %10s %10s | %10s %10s | %6s %6s %13s | %6s | %s\n", "size", "rounds",
              "bare us", "bare GB/s", "harn. us", "harn. GB/s", "ratio", "paired", "paired ci95",
              "floor", "paired ratio per round");
  for (const auto& [bytes, r] : runs) {
    const double bare = Median(r.bare_s), harness = Median(r.harness_s);
    const std::vector<double> ratios = Ratios(r.bare_s, r.harness_s);
    const std::pair<double, double> ci = MedianCi95(ratios);
    std::string per_round;
    for (double ratio : ratios) absl::StrAppend(&per_round, absl::StrFormat(" %.2f", ratio));
    std::printf("%8s %6zu | %10.1f %10.3f | %10.1f %10.3f | %6.3f %6.3f %13s | %6.3f |%s\n",
                Size(bytes).c_str(), r.harness_s.size(), bare * 1e6, bytes / bare / 1e9,
                harness * 1e6, bytes / harness / 1e9, bare / harness, Median(ratios),
                ci.first > 0 ? absl::StrFormat("%.2f-%.2f", ci.first, ci.second).c_str() : "-",
                Median(Ratios(r.bare_p10_s, r.harness_p10_s)), per_round.c_str());
    if (r.variant_s.empty()) continue;
    const std::vector<double> variant = Ratios(r.variant_bare_s, r.variant_s);
    const std::pair<double, double> vci = MedianCi95(variant);
    std::printf("%8s %6zu | --variant-env: paired %.3f %s\n", "", variant.size(), Median(variant),
                vci.first > 0 ? absl::StrFormat("%.2f-%.2f", vci.first, vci.second).c_str() : "-");
  }
  std::printf(
      "\nGB/s = 1e9 bytes/s of algbw (bytes / median step); busbw = algbw x 2(n-1)/n = algbw "
      "here (2 ranks).\nratio: harness bandwidth / bare bandwidth (target >= 0.95), of the "
      "medians over rounds. paired: the median of the per-round ratios (each round runs both "
      "back to back, so the host's drift between rounds cancels), with its distribution-free "
      "95 %% confidence interval. floor: the median over rounds of the ratio of the runs' 10th "
      "percentiles, the fast path without the host's slow wake-ups.\n");
}

void PrintHostFacts() {
  const paradnn::hostfacts::CpuTopology topology = paradnn::hostfacts::ReadCpuTopology();
  const std::map<std::string, std::string> stack = paradnn::runner::StackInEffect();
  const auto blas = stack.find("blas_core");
  std::printf(
      "host: %s, %d logical CPUs; BLAS core %s; intra-op threads 1 per rank; %d ranks "
      "(processes, Gloo, 127.0.0.1), %s\n",
      topology.model_name.c_str(), topology.logical_cpus,
      blas == stack.end() ? "-" : blas->second.c_str(), kRanks,
      RankCpu(1) >= 0 ? absl::StrCat("pinned to CPUs ", RankCpu(0), " and ", RankCpu(1)).c_str()
                      : "unpinned (fewer than 2 CPUs)");
}

// One round of every size; the order of harness and bare alternates.
void RunRound(const Options& o, int round, const std::vector<int64_t>& sizes,
              std::map<int64_t, SizeRuns>* runs) {
  for (int64_t bytes : sizes) {
    SizeRuns& r = (*runs)[bytes];
    const bool harness_first = round % 2 == 0 || r.samples == 0;
    const bool variant = !o.variant_environment.empty();
    // The variant runs before the pair in odd rounds and after it in even
    // ones, so that neither runs in the same place every round.
    std::optional<v1::Measurement> variant_m;
    if (variant && !harness_first) variant_m = RunHarness(o, bytes, &o.variant_environment);
    RunFigures bare;
    if (!harness_first) bare = RunBare(o, bytes, r.samples, r.block);
    std::optional<v1::Measurement> m = RunHarness(o, bytes);
    if (!m) continue;
    const int block_before = r.block;
    r.samples = m->stats().steps();
    r.block = std::max(1, m->stats().block_steps());
    // A sample of one step and a sample of a block are different statistics
    // where steps stall (docs/measurement.md): the bare loop that ran first
    // with last round's block runs again with this one's.
    if (harness_first || r.block != block_before) bare = RunBare(o, bytes, r.samples, r.block);
    if (bare.median_s <= 0) continue;
    const RunFigures harness =
        FiguresOf(std::vector<double>(m->step_seconds().begin(), m->step_seconds().end()));
    r.harness_s.push_back(harness.median_s);
    r.bare_s.push_back(bare.median_s);
    r.harness_p10_s.push_back(harness.p10_s);
    r.bare_p10_s.push_back(bare.p10_s);
    if (variant && harness_first) variant_m = RunHarness(o, bytes, &o.variant_environment);
    // Paired with this round's bare loop where it took the same block.
    if (variant_m && std::max(1, variant_m->stats().block_steps()) == r.block) {
      r.variant_s.push_back(FiguresOf(std::vector<double>(variant_m->step_seconds().begin(),
                                                          variant_m->step_seconds().end()))
                                .median_s);
      r.variant_bare_s.push_back(bare.median_s);
    }
    std::fprintf(stderr, "round %d %s: %d samples of %d steps: harness %.1f us, bare %.1f us\n",
                 round, Size(bytes).c_str(), r.samples, r.block, harness.median_s * 1e6,
                 bare.median_s * 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  BareArgs bare;
  Options o;
  int rounds = 3, max_mib = 64;
  std::vector<int64_t> sizes_kib;
  CLI::App app{"The allreduce family through paradnn-runner against a bare c10d Gloo loop"};
  app.add_option("--rounds", rounds, "Interleaved rounds of every size")->capture_default_str();
  app.add_option("--max-mib", max_mib, "Largest message, MiB (from 4 KiB, x4)")
      ->capture_default_str();
  app.add_option("--sizes-kib", sizes_kib,
                 "Only these message sizes, KiB (instead of the x4 series)")
      ->delimiter(',');
  app.add_option("--max-seconds", o.max_seconds, "The harness job's run.max_seconds")
      ->capture_default_str();
  app.add_option("--runner", o.runner, "paradnn-runner (default: beside this program)");
  std::vector<std::string> variant_env;
  app.add_option("--variant-env", variant_env,
                 "NAME=VALUE for a second harness run per round (e.g. PARADNN_RUNNER_MALLOC="
                 "as-installed), reported as its own paired ratio against the round's bare loop");
  app.add_option("--bare-rank", bare.rank, "(internal) run one rank of the bare loop");
  app.add_option("--port", bare.port, "(internal)");
  app.add_option("--bytes", bare.bytes, "(internal)");
  app.add_option("--samples", bare.samples, "(internal)");
  app.add_option("--block", bare.block, "(internal)");
  app.add_option("--cpu", bare.cpu, "(internal)");
  CLI11_PARSE(app, argc, argv);
  if (bare.rank >= 0) return RunBareRank(bare);

  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  o.self = std::string(self, n > 0 ? static_cast<size_t>(n) : 0);
  if (o.runner.empty()) o.runner = o.self.substr(0, o.self.rfind('/') + 1) + "paradnn-runner";
  if (!variant_env.empty()) {
    for (char** e = environ; *e != nullptr; ++e) o.variant_environment.emplace_back(*e);
    o.variant_environment.insert(o.variant_environment.end(), variant_env.begin(),
                                 variant_env.end());
  }
  common::IgnoreSigpipe();
  PrintHostFacts();
  std::vector<int64_t> sizes;
  for (int64_t bytes = 4 << 10; sizes_kib.empty() && bytes <= (int64_t{max_mib} << 20);
       bytes *= 4) {
    sizes.push_back(bytes);
  }
  for (int64_t kib : sizes_kib) sizes.push_back(kib << 10);
  std::map<int64_t, SizeRuns> runs;
  for (int round = 0; round < rounds; ++round) RunRound(o, round, sizes, &runs);
  PrintTable(runs);
  return 0;
}
