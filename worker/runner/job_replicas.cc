#include "worker/runner/job_replicas.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"
#include "common/cpu_places.h"
#include "common/framing.h"
#include "common/subprocess.h"
#include "model/families/allreduce.h"
#include "platform/thread_profile.h"
#include "worker/runner/gang_training.h"
#include "worker/runner/step_stats.h"
#include "worker/runner/thread_pinning.h"

namespace paradnn::runner {
namespace {

constexpr double kMinTimedOverlap = 0.9;
constexpr double kNeverReachedCi = 1e-12;

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

v1::Measurement Unsupported(const v1::RunnerJob& job, const std::string& why) {
  v1::Measurement m;
  m.set_device("cpu");
  *m.mutable_config() = job.config();
  m.set_outcome(v1::UNSUPPORTED);
  m.set_error(why);
  return m;
}

// What each replica's child runs: the job on its share of the CPUs, with
// the profile's counts and no replicas.
v1::RunnerJob ReplicaJob(const v1::RunnerJob& job, const std::vector<int>& cpus) {
  v1::RunnerJob one = job;
  one.set_cpus(common::FormatCpuList(cpus));
  one.set_stream_steps(false);
  // Every replica times for run.max_seconds: the CI rule would stop each
  // at its own moment, and the rest would then run without the others'
  // contention.
  one.mutable_settings()->set_ci(kNeverReachedCi);
  auto& stack = *one.mutable_config()->mutable_stack();
  platform::ThreadProfile profile =
      *platform::ParseThreadProfile(stack.at(platform::kThreadsStackKey), "stack.threads");
  profile.replicas = 1;
  stack[platform::kThreadsStackKey] = platform::ThreadProfileValue(profile);
  return one;
}

// A replica child's observer: waits at BeforeWarmup until every replica has
// built its model (a byte to the parent on `ready_fd`, then one back on
// `go_fd`); its log lines go to stderr, tagged.
class ReplicaObserver : public JobObserver {
 public:
  ReplicaObserver(int replica, int ready_fd, int go_fd)
      : replica_(replica), ready_fd_(ready_fd), go_fd_(go_fd) {}
  void OnStep(const v1::StepMetric&) override {}
  void OnLog(const std::string& line) override {
    const std::string tagged = absl::StrCat("replica ", replica_, ": ", line, "\n");
    (void)!write(STDERR_FILENO, tagged.data(), tagged.size());
  }
  void BeforeWarmup() override {
    char byte = 'r';
    (void)!write(ready_fd_, &byte, 1);
    while (read(go_fd_, &byte, 1) < 0 && errno == EINTR) {
    }
    go_ns_ = SteadyNowNs();
  }
  int64_t go_ns() const { return go_ns_; }

 private:
  const int replica_, ready_fd_, go_fd_;
  int64_t go_ns_ = 0;
};

// The child's side: runs the job, writes its timed span (two int64) and the
// Measurement's frame to `result_fd`, and leaves without LibTorch's
// teardown.
[[noreturn]] void RunReplicaChild(const v1::RunnerJob& job, int replica, int ready_fd, int go_fd,
                                  int result_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed runner takes its replicas along
  ReplicaObserver observer(replica, ready_fd, go_fd);
  const v1::Measurement m = RunJob(job, &observer);
  std::array<int64_t, 2> span{};
  if (observer.go_ns() > 0) {
    span[0] = observer.go_ns() + static_cast<int64_t>(m.warmup_seconds() * 1e9);
    span[1] = span[0] + static_cast<int64_t>(m.timed_seconds() * 1e9);
  }
  const std::string out = std::string(reinterpret_cast<const char*>(span.data()), sizeof(span)) +
                          common::EncodeFrame(m);
  for (size_t done = 0; done < out.size();) {
    const ssize_t n = write(result_fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);
    done += static_cast<size_t>(n);
  }
  _exit(0);
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

struct ReplicaChild {
  pid_t pid = -1;
  int ready_fd = -1, go_fd = -1, result_fd = -1;  // the parent's ends
};

// Forks replica `r`; the parent's ends of its pipes in `child`. False when
// a pipe or the fork failed.
bool StartReplica(const v1::RunnerJob& one, int r, ReplicaChild* child) {
  int ready[2], go[2], result[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return false;
  if (pipe2(go, O_CLOEXEC) != 0) return false;
  if (pipe2(result, O_CLOEXEC) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    close(result[0]);
    RunReplicaChild(one, r, ready[1], go[0], result[1]);
  }
  close(ready[1]);
  close(go[0]);
  close(result[1]);
  *child = {pid, ready[0], go[1], result[0]};
  return true;
}

// The parent's side of a child's result: its run, or an ERROR naming the
// replica when it left none.
ReplicaRun CollectReplica(const ReplicaChild& child, int r, int replicas, const std::string& cpus) {
  ReplicaRun run;
  run.cpus = cpus;
  const std::string out = ReadAll(child.result_fd);
  close(child.result_fd);
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  common::FrameDecoder decoder;
  std::string payload;
  if (out.size() > 2 * sizeof(int64_t) &&
      decoder.Append(out.data() + 2 * sizeof(int64_t), out.size() - 2 * sizeof(int64_t)).ok() &&
      decoder.Next(&payload) && run.measurement.ParseFromString(payload)) {
    std::memcpy(&run.timed_from_ns, out.data(), sizeof(int64_t));
    std::memcpy(&run.timed_to_ns, out.data() + sizeof(int64_t), sizeof(int64_t));
    return run;
  }
  run.measurement.set_device("cpu");
  run.measurement.set_outcome(v1::ERROR);
  run.measurement.set_error(absl::StrFormat("replica %d of %d (CPUs %s) %s without a result", r,
                                            replicas, cpus, common::DescribeWaitStatus(status)));
  return run;
}

// Share of the slowest run's timed span during which every run was timing.
double TimedOverlap(const std::vector<ReplicaRun>& runs, size_t slowest) {
  int64_t from = runs[0].timed_from_ns, to = runs[0].timed_to_ns;
  for (const ReplicaRun& run : runs) {
    from = std::max(from, run.timed_from_ns);
    to = std::min(to, run.timed_to_ns);
  }
  const int64_t span = runs[slowest].timed_to_ns - runs[slowest].timed_from_ns;
  return span > 0 ? std::clamp(static_cast<double>(to - from) / span, 0.0, 1.0) : 0.0;
}

// The CPUs of each replica: the job's (RunnerJob.cpus, else this
// process's), one per physical core under cores=physical, cut along NUMA
// nodes under numa=on (each child then binds its memory to its node),
// else in contiguous shares.
absl::StatusOr<std::vector<std::vector<int>>> ReplicaShares(const v1::RunnerJob& job) {
  const platform::ThreadProfile profile = *platform::ParseThreadProfile(
      job.config().stack().at(platform::kThreadsStackKey), "stack.threads");
  absl::StatusOr<std::vector<int>> job_cpus = JobCpus(job.cpus());
  if (!job_cpus.ok()) return job_cpus.status();
  std::vector<int> cpus = *std::move(job_cpus);
  std::vector<common::CpuPlace> places = common::ReadCpuPlaces(cpus);
  if (profile.physical_cores) {
    cpus = common::PhysicalCoreCpus(places);
    places = common::ReadCpuPlaces(cpus);
  }
  const std::string cores = profile.physical_cores ? " physical cores" : " CPUs";
  if (cpus.size() < static_cast<size_t>(profile.replicas)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stack.threads replicas=%d: the job may use %d%s (%s), and each replica needs one of its "
        "own",
        profile.replicas, cpus.size(), cores, common::FormatCpuList(cpus)));
  }
  if (!profile.numa) return common::SplitCpus(cpus, profile.replicas);
  absl::StatusOr<std::vector<common::NodeShare>> by_node =
      common::SplitCpusByNode(places, profile.replicas, "stack.threads");
  if (!by_node.ok()) return by_node.status();
  std::vector<std::vector<int>> shares;
  for (common::NodeShare& share : *by_node) shares.push_back(std::move(share.cpus));
  return shares;
}

}  // namespace

int JobReplicas(const v1::RunnerJob& job) {
  const auto it = job.config().stack().find(platform::kThreadsStackKey);
  if (it == job.config().stack().end()) return 1;
  absl::StatusOr<platform::ThreadProfile> profile =
      platform::ParseThreadProfile(it->second, "config.stack.threads");
  return profile.ok() ? profile->replicas : 1;
}

v1::Measurement MergeReplicas(const std::vector<ReplicaRun>& runs) {
  const int replicas = static_cast<int>(runs.size());
  for (int r = 0; r < replicas; ++r) {
    if (runs[r].measurement.outcome() == v1::OK) continue;
    v1::Measurement failed = runs[r].measurement;
    failed.set_error(absl::StrFormat("replica %d of %d (CPUs %s): %s", r, replicas, runs[r].cpus,
                                     failed.error()));
    return failed;
  }
  size_t slowest = 0;
  for (size_t r = 1; r < runs.size(); ++r) {
    if (runs[r].measurement.stats().median_s() > runs[slowest].measurement.stats().median_s()) {
      slowest = r;
    }
  }
  v1::Measurement m = runs[slowest].measurement;
  std::vector<double> host_steps;
  for (double s : m.step_seconds()) host_steps.push_back(s / replicas);
  v1::StepStats stats = ComputeStepStats(host_steps);
  stats.set_warmup_steps(m.stats().warmup_steps());
  stats.set_stop_reason(m.stats().stop_reason());
  stats.set_block_steps(m.stats().block_steps());
  *m.mutable_stats() = stats;
  m.clear_step_seconds();
  for (double s : host_steps) m.add_step_seconds(s);
  m.set_examples_per_sec(m.examples_per_sec() * replicas);
  m.set_model_flops_per_sec(m.model_flops_per_sec() * replicas);
  m.set_executed_flops_per_sec(m.executed_flops_per_sec() * replicas);

  v1::ConcurrentReplicas& c = *m.mutable_concurrent_replicas();
  c.set_replicas(replicas);
  c.set_slowest_replica(static_cast<int>(slowest));
  int64_t rss = 0;
  // A suspect every replica gave is the host's, said once; the others are
  // said with their replica.
  std::map<std::string, int> said_by;
  for (const ReplicaRun& run : runs) {
    for (const std::string& s : std::set<std::string>(run.measurement.suspect().begin(),
                                                      run.measurement.suspect().end())) {
      ++said_by[s];
    }
  }
  m.clear_suspect();
  std::set<std::string> added;
  for (int r = 0; r < replicas; ++r) {
    const ReplicaRun& run = runs[r];
    c.add_cpus(run.cpus);
    c.add_median_step_s(run.measurement.stats().median_s());
    rss += run.measurement.peak_rss_bytes();
    for (const std::string& s : run.measurement.suspect()) {
      const std::string said = said_by[s] == replicas ? s : absl::StrCat("replica ", r, ": ", s);
      if (added.insert(said).second) m.add_suspect(said);
    }
  }
  m.set_peak_rss_bytes(rss);
  c.set_timed_overlap(TimedOverlap(runs, slowest));
  if (c.timed_overlap() < kMinTimedOverlap) {
    m.add_suspect(absl::StrFormat(
        "the %d replicas timed together for only %.0f %% of the slowest one's timed span: "
        "the others' contention was not there throughout",
        replicas, c.timed_overlap() * 100));
  }
  return m;
}

v1::Measurement RunReplicas(const v1::RunnerJob& job, JobObserver* observer) {
  const int replicas = JobReplicas(job);
  if (IsDataParallel(job) || job.config().family() == model::kAllReduceFamilyName) {
    return Unsupported(job, absl::StrCat("stack.threads replicas=", replicas,
                                         ": concurrent replicas are independent one-process "
                                         "jobs; this job is data-parallel (hosts, devices)"));
  }
  if (!job.device().empty() && job.device() != "cpu") {
    return Unsupported(job, absl::StrCat("stack.threads replicas=", replicas,
                                         ": concurrent replicas share a host's CPUs; this job "
                                         "runs on ",
                                         job.device()));
  }
  const absl::StatusOr<std::vector<std::vector<int>>> placed = ReplicaShares(job);
  if (!placed.ok()) return Unsupported(job, std::string(placed.status().message()));
  const std::vector<std::vector<int>>& shares = *placed;
  std::vector<ReplicaChild> children(shares.size());
  for (size_t r = 0; r < shares.size(); ++r) {
    if (!StartReplica(ReplicaJob(job, shares[r]), static_cast<int>(r), &children[r])) {
      const std::string why = std::strerror(errno);
      for (size_t started = 0; started < r; ++started) {  // none may run alone
        kill(children[started].pid, SIGKILL);
        while (waitpid(children[started].pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        for (int fd :
             {children[started].ready_fd, children[started].go_fd, children[started].result_fd}) {
          close(fd);
        }
      }
      return Unsupported(job, absl::StrCat("starting replica ", r, ": ", why));
    }
  }
  // Every replica has built its model (or ended: EOF) before any warms up.
  for (const ReplicaChild& child : children) {
    char byte;
    while (read(child.ready_fd, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  for (const ReplicaChild& child : children) {
    const char go = 'g';
    (void)!write(child.go_fd, &go, 1);
    close(child.go_fd);
    close(child.ready_fd);
  }
  std::vector<ReplicaRun> runs;
  runs.reserve(children.size());
  for (size_t r = 0; r < children.size(); ++r) {
    runs.push_back(CollectReplica(children[r], static_cast<int>(r), replicas,
                                  common::FormatCpuList(shares[r])));
  }
  v1::Measurement m = MergeReplicas(runs);
  *m.mutable_config() = runs.front().measurement.config();
  platform::ThreadProfile profile = *platform::ParseThreadProfile(
      job.config().stack().at(platform::kThreadsStackKey), "stack.threads");
  const std::string value = platform::ThreadProfileValue(profile);
  (*m.mutable_config()->mutable_stack())[platform::kThreadsStackKey] = value;
  if (m.stack().count(platform::kThreadsStackKey) > 0) {
    (*m.mutable_stack())[platform::kThreadsStackKey] = value;
  }
  if (observer != nullptr) {
    observer->OnLog(absl::StrFormat(
        "%d concurrent replicas on CPUs %s; the slowest (%d) gives "
        "the host's steps, timed together %.0f %% of its span",
        replicas, absl::StrJoin(m.concurrent_replicas().cpus(), " | "),
        m.concurrent_replicas().slowest_replica(), m.concurrent_replicas().timed_overlap() * 100));
  }
  return m;
}

}  // namespace paradnn::runner
