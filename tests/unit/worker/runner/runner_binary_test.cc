// Runs the built paradnn-runner (from $PARADNN_BIN_DIR) through its real
// command line and pipes, as the worker and a user do.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "common/cpu_places.h"
#include "common/framing.h"
#include "common/subprocess.h"
#include "model/thread_guideline.h"
#include "paradnn/v1/metrics.pb.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"
#include "worker/runner/stack_doctor.h"

namespace paradnn::runner {
namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

bool HostHasFlag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return (" " + line + " ").find(" " + flag + " ") != std::string::npos;
    }
  }
  return false;
}

std::string RunnerPath() {
  const char* dir = std::getenv("PARADNN_BIN_DIR");
  return std::string(dir != nullptr ? dir : "bin") + "/paradnn-runner";
}

// Runs the runner with `args`, feeding `input` on stdin; stdout through a
// pipe, stderr through a temporary file (so neither can block the other).
ProcessResult RunRunner(const std::vector<std::string>& args, const std::string& input = "",
                        const std::vector<std::string>* environment = nullptr) {
  ProcessResult result;
  char err_path[] = "/tmp/paradnn_runner_test_XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) return result;
  std::vector<std::string> argv = {RunnerPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  common::SpawnOptions options;
  options.stderr_fd = err_fd;
  options.environment = environment;
  absl::StatusOr<common::SpawnedChild> child = common::SpawnChild(argv, options);
  if (!child.ok()) {
    ADD_FAILURE() << child.status();
    return result;
  }
  const pid_t pid = child->pid;
  // Inputs are a few hundred bytes: they fit the pipe buffer.
  if (!input.empty()) {
    EXPECT_EQ(write(child->stdin_fd.get(), input.data(), input.size()),
              static_cast<ssize_t>(input.size()));
  }
  child->stdin_fd.Reset();
  char buffer[65536];
  for (ssize_t n; (n = read(child->stdout_fd.get(), buffer, sizeof(buffer))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.out.append(buffer, static_cast<size_t>(n));
  }
  child->stdout_fd.Reset();
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  close(err_fd);
  unlink(err_path);
  return result;
}

std::vector<v1::RunnerEvent> DecodeEvents(const std::string& bytes) {
  common::FrameDecoder decoder;
  EXPECT_TRUE(decoder.Append(bytes.data(), bytes.size()).ok());
  std::vector<v1::RunnerEvent> events;
  std::string payload;
  while (decoder.Next(&payload)) {
    v1::RunnerEvent event;
    EXPECT_TRUE(event.ParseFromString(payload));
    events.push_back(event);
  }
  EXPECT_EQ(decoder.buffered_bytes(), 0u) << "trailing bytes after the last frame";
  return events;
}

v1::RunnerJob TinyJob() {
  v1::RunnerJob job;
  v1::ModelConfig& config = *job.mutable_config();
  config.set_family("fc");
  (*config.mutable_params())["layer"] = 2;
  (*config.mutable_params())["node"] = 32;
  (*config.mutable_params())["input"] = 64;
  (*config.mutable_params())["output"] = 10;
  (*config.mutable_params())["batch"] = 16;
  v1::RunSettings& s = *job.mutable_settings();
  s.set_warmup_steps(2);
  s.set_max_steps(50);
  s.set_max_seconds(2);
  job.set_device("cpu");
  job.set_stream_steps(true);
  return job;
}

TEST(RunnerBinaryTest, JobStdinStreamsStepsThenOneResult) {
  const ProcessResult r = RunRunner({"--job-stdin"}, common::EncodeFrame(TinyJob()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<v1::RunnerEvent> events = DecodeEvents(r.out);
  ASSERT_FALSE(events.empty()) << r.err;
  int steps = 0, results = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].has_step()) ++steps;
    if (events[i].has_result()) {
      ++results;
      EXPECT_EQ(i, events.size() - 1) << "the result must be the last event";
    }
  }
  ASSERT_EQ(results, 1);
  const v1::Measurement& m = events.back().result();
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_GT(m.examples_per_sec(), 0);
  EXPECT_FALSE(m.step_seconds().empty());
  EXPECT_EQ(m.step_seconds_size(), m.stats().steps());
  EXPECT_EQ(steps, m.stats().warmup_steps() + m.stats().steps());
  EXPECT_EQ(m.config().params().at("node"), 32);
  EXPECT_EQ(m.config().precision(), "float32");
  EXPECT_FALSE(m.stats().stop_reason().empty());
}

// The measurement of TinyJob under the stack.threads `profile`, run in the
// environment the worker gives it (model::ThreadProfileEnvironment).
v1::Measurement MeasureWithThreads(const std::string& profile) {
  v1::RunnerJob job = TinyJob();
  job.set_stream_steps(false);
  (*job.mutable_config()->mutable_stack())["threads"] = profile;
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  for (const auto& [name, value] :
       model::ThreadProfileEnvironment(*platform::ParseThreadProfile(profile, "threads"))) {
    environment.push_back(name + "=" + value);
  }
  const ProcessResult r =
      RunRunner({"--job-stdin", "--log-level", "warn"}, common::EncodeFrame(job), &environment);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<v1::RunnerEvent> events = DecodeEvents(r.out);
  if (events.empty() || !events.back().has_result()) return {};
  return events.back().result();
}

TEST(RunnerBinaryTest, ThreadsProfilesSetThePoolsAndAreRecordedAsAsked) {
  v1::Measurement m = MeasureWithThreads("intra=1,inter=2,pin=on");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.intra_op_threads(), 1);
  EXPECT_EQ(m.inter_op_threads(), 2);
  EXPECT_TRUE(absl::StrContains(m.thread_pinning(), "pinned one per CPU (1 of 1 on CPUs"))
      << m.thread_pinning();
  EXPECT_EQ(m.stack().at("threads"), "intra=1,inter=2,pin=on");
  for (const std::string& suspect : m.suspect()) EXPECT_FALSE(absl::StartsWith(suspect, "stack"));

  m = MeasureWithThreads("libtorch");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_GE(m.intra_op_threads(), 1);  // what LibTorch picked
  EXPECT_TRUE(absl::StrContains(m.thread_pinning(), "threads not pinned (threads libtorch)"))
      << m.thread_pinning();
  EXPECT_EQ(m.stack().at("threads"), "libtorch");

  // Intel's: physical cores per socket, its OpenMP environment placing them.
  m = MeasureWithThreads("intel");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.intra_op_threads(), static_cast<int>(common::AllowedCpus().size()))
      << m.thread_pinning();
  EXPECT_EQ(m.inter_op_threads(), 1);

  // The guideline for a plain FC (width 1): one pool of every CPU.
  m = MeasureWithThreads("guideline");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.inter_op_threads(), 1);
  EXPECT_EQ(m.intra_op_threads(), static_cast<int>(common::AllowedCpus().size()));
}

TEST(RunnerBinaryTest, ThreadsReplicasRunTogetherOnDisjointCpusAndGiveTheHostsSteps) {
  const std::vector<int> cpus = common::AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: no two replicas on CPUs of their own";
  const v1::Measurement m = MeasureWithThreads("intra=1,inter=1,replicas=2");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  const v1::ConcurrentReplicas& c = m.concurrent_replicas();
  ASSERT_EQ(c.replicas(), 2);
  ASSERT_EQ(c.cpus_size(), 2);
  const std::vector<int> upper(cpus.begin() + static_cast<long>((cpus.size() + 1) / 2), cpus.end());
  EXPECT_EQ(c.cpus(1), common::FormatCpuList(upper));
  EXPECT_NE(c.cpus(0), c.cpus(1));
  ASSERT_EQ(c.median_step_s_size(), 2);
  ASSERT_GE(c.slowest_replica(), 0);
  ASSERT_LT(c.slowest_replica(), 2);
  const double slowest = c.median_step_s(c.slowest_replica());
  EXPECT_GE(slowest, c.median_step_s(1 - c.slowest_replica()));
  // The host finishes two steps of the batch in one replica step.
  EXPECT_DOUBLE_EQ(m.stats().median_s(), slowest / 2);
  EXPECT_NEAR(m.examples_per_sec(), 16 / m.stats().median_s(), 1e-6 * m.examples_per_sec());
  EXPECT_GT(c.timed_overlap(), 0);
  EXPECT_LE(c.timed_overlap(), 1);
  EXPECT_EQ(m.intra_op_threads(), 1);  // each replica's
  EXPECT_EQ(m.config().stack().at("threads"), "intra=1,inter=1,replicas=2");
  EXPECT_EQ(m.stack().at("threads"), "intra=1,inter=1,replicas=2");

  const v1::Measurement too_many =
      MeasureWithThreads(absl::StrCat("intra=1,inter=1,replicas=", cpus.size() + 1));
  EXPECT_EQ(too_many.outcome(), v1::UNSUPPORTED);
  EXPECT_TRUE(absl::StrContains(too_many.error(), "each replica needs one of its own"))
      << too_many.error();
}

// cores=physical and numa=on on this host's real topology (planning on
// made-up ones with hyper-threads and two sockets: cpu_places_test).
TEST(RunnerBinaryTest, ThreadsPlacementKeepsOffSiblingsAndBindsMemoryToTheNode) {
  const std::vector<int> cpus = common::AllowedCpus();
  const std::vector<common::CpuPlace> places = common::ReadCpuPlaces(cpus);
  const std::vector<int> physical = common::PhysicalCoreCpus(places);
  const std::vector<int> nodes = common::NodesOf(common::ReadCpuPlaces(physical));
  const std::string node_text =
      absl::StrCat(nodes.size() == 1 ? "NUMA node " : "NUMA nodes ", common::FormatCpuList(nodes));
  v1::Measurement m = MeasureWithThreads("intra=1,inter=1,cores=physical,numa=on");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_TRUE(absl::StrContains(
      m.thread_pinning(), absl::StrCat("physical cores: CPUs ", common::FormatCpuList(physical))))
      << m.thread_pinning();
  // Read back from the kernel (get_mempolicy), not what was asked.
  EXPECT_TRUE(absl::StrContains(m.thread_pinning(),
                                absl::StrCat("memory bound to ", node_text, " (MPOL_BIND)")))
      << m.thread_pinning();
  EXPECT_EQ(m.stack().at("threads"), "intra=1,inter=1,cores=physical,numa=on");

  // Without them: the first-touch default, nothing narrowed.
  m = MeasureWithThreads("intra=1,inter=1,cores=logical,numa=off");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_FALSE(absl::StrContains(m.thread_pinning(), "physical cores")) << m.thread_pinning();
  EXPECT_FALSE(absl::StrContains(m.thread_pinning(), "memory")) << m.thread_pinning();
  EXPECT_EQ(m.stack().at("threads"), "intra=1,inter=1,cores=logical,numa=off");

  // The guideline runs on physical cores.
  m = MeasureWithThreads("guideline");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_TRUE(absl::StrContains(m.thread_pinning(), "physical cores: CPUs")) << m.thread_pinning();

  if (physical.size() < 2) return;
  // One replica per share of a node, each bound to it.
  m = MeasureWithThreads("intra=1,inter=1,replicas=2,numa=on");
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.concurrent_replicas().replicas(), 2);
  EXPECT_TRUE(absl::StrContains(m.thread_pinning(), "memory bound to NUMA node"))
      << m.thread_pinning();
  const v1::Measurement too_many = MeasureWithThreads(
      absl::StrCat("intra=1,inter=1,cores=physical,replicas=", physical.size() + 1));
  EXPECT_EQ(too_many.outcome(), v1::UNSUPPORTED);
  EXPECT_TRUE(absl::StrContains(
      too_many.error(), absl::StrCat("the job may use ", physical.size(), " physical cores")))
      << too_many.error();
}

TEST(RunnerBinaryTest, JobStdinWithoutStreamingSendsNoSteps) {
  v1::RunnerJob job = TinyJob();
  job.set_stream_steps(false);
  const ProcessResult r =
      RunRunner({"--job-stdin", "--log-level", "warn"}, common::EncodeFrame(job));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const v1::RunnerEvent& e : DecodeEvents(r.out)) EXPECT_FALSE(e.has_step());
}

TEST(RunnerBinaryTest, JobStdinModelErrorsAreOutcomes) {
  v1::RunnerJob job = TinyJob();
  job.mutable_config()->set_family("no_such_family");
  ProcessResult r = RunRunner({"--job-stdin"}, common::EncodeFrame(job));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<v1::RunnerEvent> events = DecodeEvents(r.out);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_result());
  EXPECT_EQ(events.back().result().outcome(), v1::ERROR);
  EXPECT_TRUE(absl::StrContains(events.back().result().error(), "config.family"));

  job = TinyJob();
  job.mutable_config()->set_precision("float16");
  r = RunRunner({"--job-stdin"}, common::EncodeFrame(job));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  events = DecodeEvents(r.out);
  ASSERT_FALSE(events.empty());
  const v1::Outcome outcome = events.back().result().outcome();
  EXPECT_TRUE(outcome == v1::OK || outcome == v1::UNSUPPORTED) << v1::Outcome_Name(outcome);
}

TEST(RunnerBinaryTest, JobStdinGarbageGivesAnErrorResult) {
  const ProcessResult r = RunRunner({"--job-stdin"}, std::string("\x05\x00\x00\x00zzzzz", 9));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<v1::RunnerEvent> events = DecodeEvents(r.out);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].result().outcome(), v1::ERROR);
  EXPECT_TRUE(absl::StrContains(events[0].result().error(), "RunnerJob"));
}

TEST(RunnerBinaryTest, DescribePrintsCountsJson) {
  const ProcessResult r = RunRunner({"--family", "fc", "--layer", "4", "--node", "1024", "--input",
                                     "2000", "--output", "200", "--batch", "256", "--describe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("params").get<int64_t>(), 5402824);
  EXPECT_EQ(j.at("macs_per_example").get<int64_t>(), 5398528);
  EXPECT_DOUBLE_EQ(j.at("model_flops").get<double>(), 6.0 * 5398528 * 256);
  EXPECT_GT(j.at("bytes_per_step").get<double>(), 0);
  EXPECT_GT(j.at("peak_memory_estimate_bytes").get<double>(), 0);
  EXPECT_EQ(j.at("config").at("precision").get<std::string>(), "float32");
}

TEST(RunnerBinaryTest, StandaloneJson) {
  const ProcessResult r =
      RunRunner({"--family", "fc", "--layer", "1", "--node", "16", "--input", "16", "--output", "4",
                 "--batch", "4", "--max_seconds", "1", "--json", "--log-level", "warn"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("outcome").get<std::string>(), "OK");
  EXPECT_GT(j.at("examples_per_sec").get<double>(), 0);
  EXPECT_FALSE(j.at("step_seconds").empty());
}

// The harness family, as the worker runs it: one OK result at once, no
// steps streamed, no throughput claimed.
TEST(RunnerBinaryTest, JobStdinNoopReturnsOkWithoutSteps) {
  v1::RunnerJob job = TinyJob();
  v1::ModelConfig& config = *job.mutable_config();
  config.set_family("noop");
  config.clear_params();
  (*config.mutable_params())["batch"] = 1;
  (*config.mutable_params())["index"] = 12345;
  const ProcessResult r = RunRunner({"--job-stdin"}, common::EncodeFrame(job));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<v1::RunnerEvent> events = DecodeEvents(r.out);
  int steps = 0, results = 0;
  for (const v1::RunnerEvent& event : events) {
    steps += event.has_step() ? 1 : 0;
    results += event.has_result() ? 1 : 0;
  }
  EXPECT_EQ(steps, 0);
  ASSERT_EQ(results, 1);
  const v1::Measurement& m = events.back().result();
  ASSERT_EQ(m.outcome(), v1::OK) << m.error();
  EXPECT_EQ(m.examples_per_sec(), 0);
  EXPECT_EQ(m.stats().steps(), 0);
  EXPECT_EQ(m.stats().stop_reason(), "noop");
  EXPECT_EQ(m.counts().model_flops(), 0);
  EXPECT_EQ(m.config().params().at("index"), 12345);
}

TEST(RunnerBinaryTest, StandaloneNoopJson) {
  const ProcessResult r = RunRunner(
      {"--family", "noop", "--batch", "8", "--index", "3", "--json", "--log-level", "warn"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("outcome").get<std::string>(), "OK");
  EXPECT_EQ(j.at("stats").at("stop_reason").get<std::string>(), "noop");
  EXPECT_FALSE(j.contains("examples_per_sec") && j.at("examples_per_sec").get<double>() != 0);
}

TEST(RunnerBinaryTest, UsageErrorsExitTwoAndNameTheFlag) {
  ProcessResult r = RunRunner({"--family", "no_such_family", "--layer", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--family")) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = RunRunner({"--family", "fc", "--layer", "4", "--node", "8", "--input", "8", "--output", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--batch")) << r.err;
}

// A CUDA device's record needs the NVIDIA driver and a CUDA LibTorch; this
// host has neither, and the runner says which is missing instead of
// describing the CPU.
TEST(RunnerBinaryTest, CudaPlatformSaysWhatIsMissing) {
  for (const char* mode : {"--platform", "--calibrate"}) {
    const ProcessResult r = RunRunner({mode, "--device", "cuda:0"});
    EXPECT_EQ(r.exit_code, 1) << mode << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << mode;
    EXPECT_TRUE(absl::StrContains(r.err, "no NVIDIA driver") ||
                absl::StrContains(r.err, "has no CUDA"))
        << mode << ": " << r.err;
  }
  const ProcessResult bad = RunRunner({"--platform", "--device", "gpu0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err, "--device: 'gpu0' is not cpu, cuda or cuda:N")) << bad.err;
  const ProcessResult stdin_device = RunRunner({"--job-stdin", "--device", "cuda"});
  EXPECT_EQ(stdin_device.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(stdin_device.err, "--device: not used with --job-stdin"))
      << stdin_device.err;
}

// Runs `paradnn-runner --platform` with `flags`, expects exit 0, and parses
// the platform it prints into `platform`.
void ReadPlatform(const std::vector<std::string>& flags, nlohmann::json* platform) {
  std::vector<std::string> args = {"--platform"};
  args.insert(args.end(), flags.begin(), flags.end());
  const ProcessResult run = RunRunner(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  *platform = nlohmann::json::parse(run.out);
}

TEST(RunnerBinaryTest, PlatformJsonAndFrameAgree) {
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(ReadPlatform({}, &j));
  EXPECT_EQ(j.at("device_kind").get<std::string>(), "cpu");
  EXPECT_EQ(j.at("fingerprint").get<std::string>().size(), 16u);
  EXPECT_FALSE(j.at("blas_backend").get<std::string>().empty());
  EXPECT_FALSE(j.at("libtorch_version").get<std::string>().empty());
  EXPECT_GT(j.at("default_intra_op_threads").get<int>(), 0);
  // The stack beyond the CPU model: caches from sysfs, the oneDNN LibTorch
  // loaded, the kernels ATen and oneDNN dispatch to. Governor and boost are
  // "" where cpufreq is not exposed, so only their presence is checked.
  EXPECT_TRUE(absl::StrContains(j.at("cache_sizes").get<std::string>(), "L1")) << j.dump();
  EXPECT_FALSE(j.at("onednn_version").get<std::string>().empty()) << j.dump();
  const std::string isa = j.at("isa_paths").get<std::string>();
  EXPECT_TRUE(absl::StrContains(isa, "ATen ")) << isa;
  EXPECT_TRUE(absl::StrContains(isa, "AMX: ")) << isa;
  EXPECT_TRUE(j.contains("frequency_governor"));
  EXPECT_TRUE(j.contains("boost"));

  const ProcessResult framed = RunRunner({"--platform", "--framed"});
  ASSERT_EQ(framed.exit_code, 0) << framed.err;
  common::FrameDecoder decoder;
  ASSERT_TRUE(decoder.Append(framed.out.data(), framed.out.size()).ok());
  std::string payload;
  ASSERT_TRUE(decoder.Next(&payload));
  v1::Platform platform;
  ASSERT_TRUE(platform.ParseFromString(payload));
  EXPECT_EQ(platform.fingerprint(), j.at("fingerprint").get<std::string>());
  EXPECT_EQ(platform.isa_paths(), isa);
}

// PREDICTED_OOM is decided on the process estimate: it must not fall short
// of what a runner really holds (it did by up to 37 % before the runtime
// baseline and slack were counted).
TEST(RunnerBinaryTest, ProcessMemoryEstimateCoversThePeakRss) {
  const std::vector<std::vector<std::string>> jobs = {
      {"--family", "fc", "--layer", "4", "--node", "1024", "--input", "2000", "--output", "200",
       "--batch", "512"},
      {"--family", "rnn", "--cell", "lstm", "--layer", "2", "--embed", "256", "--length", "32",
       "--vocab", "1000", "--batch", "64"},
      {"--family", "cnn", "--block_fn", "bottleneck", "--block", "1", "--filter", "16", "--image",
       "224", "--output", "1000", "--batch", "8"},
  };
  for (std::vector<std::string> args : jobs) {
    args.insert(args.end(),
                {"--json", "--max-seconds", "0.5", "--min-steps", "2", "--warmup-steps", "1"});
    const ProcessResult run = RunRunner(args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json m = nlohmann::json::parse(run.out);
    const double estimate = m.at("counts").at("peak_memory_estimate_bytes").get<double>();
    const double rss = std::stod(m.at("peak_rss_bytes").get<std::string>());
    EXPECT_GE(platform::ProcessMemoryEstimateBytes(estimate), rss)
        << args[1] << " estimate " << estimate;
  }
}

TEST(RunnerBinaryTest, StackDoctorTriesCoresAndCapabilitiesAndKeepsCorrectOnes) {
  char state[] = "/tmp/paradnn_doctor_test_XXXXXX";
  ASSERT_NE(mkdtemp(state), nullptr);
  setenv("PARADNN_STATE_DIR", state, 1);
  const ProcessResult run = RunRunner({"--stack-doctor"});
  unsetenv("PARADNN_STATE_DIR");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_TRUE(j.contains("stack_findings")) << j.dump();
  // Per component: exactly one as-installed and one chosen finding, the
  // chosen one correct and the one the platform reports in effect.
  std::map<std::string, int> installed, chosen;
  for (const nlohmann::json& f : j.at("stack_findings")) {
    const std::string component = f.value("component", "");
    ASSERT_TRUE(component == "blas_core" || component == "aten_capability") << f.dump();
    installed[component] += f.value("as_installed", false) ? 1 : 0;
    if (f.value("chosen", false)) {
      ++chosen[component];
      EXPECT_TRUE(f.value("correct", false)) << f.dump();
      EXPECT_EQ(f.value("setting", ""), j.at(component).get<std::string>());
    }
    if (f.value("correct", false)) {
      EXPECT_GT(f.value("flops_per_sec", 0.0), 0) << f.dump();
      EXPECT_LE(f.value("max_relative_error", 1.0),
                component == "blas_core" ? kMaxGemmRelativeError : kMaxElementwiseRelativeError)
          << f.dump();
    }
  }
  std::vector<std::string> components;
  if (!j.value("blas_core", "").empty()) components.push_back("blas_core");
  if (HostHasFlag("avx2")) components.push_back("aten_capability");
  for (const std::string& component : components) {
    EXPECT_EQ(installed[component], 1) << component << ": " << j.dump();
    EXPECT_EQ(chosen[component], 1) << component << ": " << j.dump();
  }
  // The decisions are kept for the next runner on this host.
  std::set<std::string> cached;
  for (const auto& entry : std::filesystem::directory_iterator(state)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "blas-core-")) cached.insert("blas_core");
    if (absl::StartsWith(name, "aten-capability-")) cached.insert("aten_capability");
  }
  EXPECT_EQ(cached, std::set<std::string>(components.begin(), components.end()));
  std::filesystem::remove_all(state);
}

TEST(RunnerBinaryTest, ForcedAtenCapabilityIsReportedAndPartOfTheFingerprint) {
  if (!HostHasFlag("avx2")) GTEST_SKIP() << "needs an x86 CPU with AVX2";
  nlohmann::json base, j;
  ASSERT_NO_FATAL_FAILURE(ReadPlatform({"--aten-capability", "as-installed"}, &base));
  EXPECT_EQ(base.value("aten_capability_choice", ""), "as-installed");
  // default (no AVX) runs everywhere and is never what LibTorch picks on an
  // AVX2 CPU by itself.
  ASSERT_NO_FATAL_FAILURE(ReadPlatform({"--aten-capability", "default"}, &j));
  EXPECT_EQ(j.value("aten_capability", ""), "default") << j.dump();
  EXPECT_EQ(j.value("aten_capability_choice", ""), "forced");
  EXPECT_NE(j.value("fingerprint", ""), base.value("fingerprint", ""));
  const ProcessResult bad = RunRunner({"--platform", "--aten-capability", "avx1024"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err,
                                "--aten-capability: 'avx1024' is not auto, as-installed "
                                "or default, avx2 or avx512"))
      << bad.err;
}

TEST(RunnerBinaryTest, ForcedBlasCoreIsReportedAndPartOfTheFingerprint) {
  nlohmann::json base, j;
  ASSERT_NO_FATAL_FAILURE(ReadPlatform({"--blas-core", "as-installed"}, &base));
  if (base.value("blas_core", "").empty()) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  EXPECT_EQ(base.value("blas_core_choice", ""), "as-installed");
  // Prescott (SSE3) runs on every x86-64 CPU.
  ASSERT_NO_FATAL_FAILURE(ReadPlatform({"--blas-core", "Prescott"}, &j));
  EXPECT_EQ(j.value("blas_core", ""), "Prescott") << j.dump();
  EXPECT_EQ(j.value("blas_core_choice", ""), "forced");
  EXPECT_TRUE(absl::StrContains(j.value("blas_backend", ""), "Prescott")) << j.dump();
  EXPECT_NE(j.value("fingerprint", ""), base.value("fingerprint", ""));
  EXPECT_EQ(j.value("flush_denormal", ""), "on");
  EXPECT_TRUE(absl::StrContains(j.value("allocator", ""), "mmap_threshold 32 MiB")) << j.dump();
  const ProcessResult bad = RunRunner({"--platform", "--blas-core", "no;such"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err, "--blas-core")) << bad.err;
}

}  // namespace
}  // namespace paradnn::runner
