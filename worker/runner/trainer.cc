#include "worker/runner/trainer.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/run_settings.h"
#include "hostfacts/host_facts.h"
#include "model/families/allreduce.h"
#include "model/families/noop.h"
#include "model/family.h"
#include "model/model_counts.h"
#include "model/model_spec.h"
#include "platform/stack_env.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"
#include "worker/runner/allreduce_job.h"
#include "worker/runner/data_parallel.h"
#include "worker/runner/gang_rendezvous.h"
#include "worker/runner/gang_training.h"
#include "worker/runner/job_devices.h"
#include "worker/runner/job_replicas.h"
#include "worker/runner/job_sentinel.h"
#include "worker/runner/job_threads.h"
#include "worker/runner/model_builder.h"
#include "worker/runner/op_profiler.h"
#include "worker/runner/outcome.h"
#include "worker/runner/platform.h"
#include "worker/runner/platform_torch.h"
#include "worker/runner/process_placement.h"
#include "worker/runner/step_stats.h"
#include "worker/runner/stop_rule.h"
#include "worker/runner/suspect_conditions.h"
#include "worker/runner/thread_pinning.h"
#include "worker/runner/timing_loop.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CountModel;
using model::CountOptimizerUpdate;
using model::FieldStyle;
using model::FinishNoopMeasurement;
using model::kInterOpThreadsRule;
using model::kIntraOpThreadsRule;
using model::kNoopFamilyName;
using model::ModelSpec;
using model::NormalizedConfig;
using model::OptimizerStateTensors;
using model::OptimizerUpdate;
using model::ParseModelSpec;
using model::Precision;
using model::PrecisionName;
using model::WeightElementBytes;
namespace {

constexpr int kDefaultProfileSteps = 3;

// Long LibTorch messages (dispatcher dumps) are cut to keep results small.
constexpr size_t kMaxErrorChars = 4000;

int64_t PeakRssBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void Log(JobObserver* observer, const std::string& line) {
  if (observer != nullptr) observer->OnLog(line);
}

v1::Measurement& Fail(v1::Measurement& m, v1::Outcome outcome, std::string error) {
  if (error.size() > kMaxErrorChars) error = error.substr(0, kMaxErrorChars) + " [...]";
  m.set_outcome(outcome);
  m.set_error(std::move(error));
  m.set_peak_rss_bytes(PeakRssBytes());
  return m;
}

// Records the stack settings this process runs with (Measurement.stack)
// and flags a job whose requested name did not take (a core this OpenBLAS
// does not know falls back to its own pick). An env.NAME setting is
// recorded as this process found NAME ("" unset), so results pivot on it.
void RecordStackInEffect(const v1::ModelConfig& config, v1::Measurement* m) {
  for (auto& [component, value] : StackInEffect()) (*m->mutable_stack())[component] = value;
  // A threads profile always takes (its counts are intra_op_threads and
  // inter_op_threads): recorded as asked, so results pivot on it.
  if (auto it = config.stack().find(platform::kThreadsStackKey); it != config.stack().end()) {
    (*m->mutable_stack())[it->first] = it->second;
  }
  for (const auto& [key, requested] : config.stack()) {
    if (!platform::IsEnvStackKey(key)) continue;
    const char* value = std::getenv(platform::EnvStackVariable(key).c_str());
    (*m->mutable_stack())[key] = value == nullptr ? "" : value;
  }
  for (const auto& [component, requested] : config.stack()) {
    if (requested == "auto" || requested == "as-installed") continue;
    const auto it = m->stack().find(component);
    const std::string in_effect = it == m->stack().end() ? "" : it->second;
    if (!absl::EqualsIgnoreCase(in_effect, requested)) {
      m->add_suspect(absl::StrCat("stack: the job asked for ", component, " ", requested,
                                  "; this process ran ",
                                  in_effect.empty() ? std::string("without one") : in_effect));
    }
  }
}

// Flags the conditions that make `m` suspect (reference BLAS, a busy host,
// frequency scaling, noisy steps) on the result itself and logs each.
// `load_at_start` is the 1-minute load average sampled before the first step;
// `facts` comes with the host-speed probe ratios filled, where probed.
void FlagSuspectConditions(std::optional<double> load_at_start, v1::Measurement* m,
                           JobObserver* observer, SuspectFacts facts) {
  facts.blas_backend = DescribeLoadedBlas().description;
  facts.governor = hostfacts::ReadFrequencyGovernor();
  facts.load_at_start = load_at_start;
  facts.load_at_end = HostLoadAverage1();
  facts.runner_threads = m->intra_op_threads();
  facts.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  facts.steps_cv = m->stats().cv();
  facts.flush_denormal = FlushDenormalState();
  facts.first_loss = m->first_loss();
  facts.last_loss = m->last_loss();
  if (m->subnormal_gradient_fraction() >= 0) {
    facts.subnormal_gradient_fraction = m->subnormal_gradient_fraction();
  }
  for (std::string& condition : SuspectConditions(facts)) {
    Log(observer, absl::StrCat("suspect: ", condition));
    m->add_suspect(std::move(condition));
  }
}

// An error LibTorch raised for a configuration it has no kernel for, with the
// configuration named so the result reads on its own.
std::string UnsupportedMessage(const ModelSpec& spec, const std::string& torch_message) {
  return absl::StrCat("precision ", PrecisionName(spec.precision),
                      " is not supported on cpu by LibTorch ", TORCH_VERSION, ": ",
                      FirstErrorLine(torch_message));
}

// For families whose analytic counts are unknown until the model is built
// (torchscript: counts are 0 from the family): the trainable parameters of
// the built model and a memory estimate of weights + gradients + optimizer
// state (+ 16-bit weight and gradient copies in mixed precision).
// Activations are unknown and left out; FLOP counts stay 0 (unknown).
void FillCountsFromBuiltModel(const ModelSpec& spec, const std::vector<torch::Tensor>& parameters,
                              v1::Measurement* m, JobObserver* observer) {
  int64_t params = 0;
  for (const torch::Tensor& p : parameters) params += p.numel();
  const double e_w = WeightElementBytes(spec.precision);
  const bool mixed =
      spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16;
  double state_bytes =
      static_cast<double>(params) * e_w * (2 + OptimizerStateTensors(spec.optimizer));
  if (mixed) state_bytes += 2.0 * static_cast<double>(params) * 2;
  m->mutable_counts()->set_params(params);
  m->mutable_counts()->set_peak_memory_estimate_bytes(state_bytes);
  Log(observer, absl::StrFormat("counts from the built model: %d parameters; memory estimate "
                                "%.0f bytes (weights, gradients, optimizer state; activations "
                                "and FLOPs unknown)",
                                params, state_bytes));
}

// The fraction of gradient values that are subnormal for
// their dtype (|g| < the smallest normal number), over every floating-point
// gradient; 0 when there are none.
double SubnormalFraction(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  double subnormal = 0, total = 0;
  for (const torch::Tensor& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined() || !g.is_floating_point()) continue;
    const double smallest_normal = g.scalar_type() == torch::kHalf ? 6.103515625e-05
                                   : g.scalar_type() == torch::kDouble
                                       ? std::numeric_limits<double>::min()
                                       : std::numeric_limits<float>::min();
    const torch::Tensor magnitude = g.abs();
    subnormal += ((magnitude < smallest_normal) & (magnitude > 0)).sum().item<double>();
    total += static_cast<double>(g.numel());
  }
  return total > 0 ? subnormal / total : 0;
}

// The operator breakdown of a few more steps under LibTorch's profiler.
void RecordProfile(const StepFn& train_step, const v1::RunSettings& settings, JobObserver* observer,
                   v1::Measurement* m) {
  const int steps = settings.profile_steps() > 0 ? settings.profile_steps() : kDefaultProfileSteps;
  double profiled_step_seconds = 0;
  std::vector<v1::OpProfile> ops =
      ProfileSteps([&] { (void)train_step().item<double>(); }, steps, &profiled_step_seconds);
  m->set_profiled_steps(steps);
  for (v1::OpProfile& op : ops) *m->add_op_profile() = std::move(op);
  Log(observer, absl::StrFormat("profile: %d steps, %.3f ms per step under the profiler, "
                                "%d operators kept",
                                steps, profiled_step_seconds * 1e3, m->op_profile_size()));
}

// Throughput (every replica's examples) and FLOP rates (one device's) at
// the median step time.
void FillRates(const ModelSpec& spec, int replicas, double median_seconds, v1::Measurement* m) {
  if (!(median_seconds > 0)) return;
  m->set_examples_per_sec(static_cast<double>(spec.batch() * replicas) / median_seconds);
  m->set_model_flops_per_sec(m->counts().model_flops() / median_seconds);
  m->set_executed_flops_per_sec(m->counts().executed_flops() / median_seconds);
}

// The job's model, built once per replica: one Trainer, or for a
// data-parallel job (several devices, or a gang) a DataParallelRun whose
// replica 0 the timing loop steps.
struct JobTrainers {
  std::unique_ptr<Trainer> single;
  std::unique_ptr<DataParallelRun> data_parallel;
  Trainer* leader = nullptr;
  StepLoop loop;
};

// Builds the job's model on `devices` (replica r on devices[r], seeded
// seed + its global rank; rank 0's weights broadcast to the others).
// Throws what the model or the replica group throws (GangBroken when the
// gang cannot form).
JobTrainers BuildTrainers(const v1::RunnerJob& job, const ModelSpec& spec,
                          const v1::RunSettings& settings,
                          const std::vector<torch::Device>& devices, JobObserver* observer) {
  BuildContext context = ContextForPrecision(spec.precision);
  context.torchscript_content = &job.torchscript_content();
  context.device = devices.front();
  JobTrainers built;
  if (!IsDataParallel(job)) {
    built.single = std::make_unique<Trainer>(spec, settings.seed(), context);
    built.leader = built.single.get();
    built.loop.step = [t = built.leader] { return t->Step(); };
    return built;
  }
  const std::string backend = CollectiveBackendFor(devices.front().type()).value();
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(common::JobDeadlineSeconds(settings) * 1000));
  built.data_parallel = std::make_unique<DataParallelRun>(
      job, backend, devices,
      [&](int rank, const torch::Device& device) {
        BuildContext on_device = context;
        on_device.device = device;
        return std::make_unique<Trainer>(spec, settings.seed() + rank, on_device);
      },
      timeout);
  DataParallelRun* run = built.data_parallel.get();
  built.leader = &run->leader();
  built.loop.step = [run] { return run->Step(); };
  built.loop.agree = [run](int64_t mine) { return run->FollowRankZero(mine); };
  built.loop.agree_is_collective = run->in_gang();
  built.loop.data_parallel = run;
  std::string devices_text;
  for (const torch::Device& d : devices) {
    absl::StrAppend(&devices_text, devices_text.empty() ? "" : ", ", d.str());
  }
  Log(observer, absl::StrCat("data parallel: ", devices.size(), " replicas on ", devices_text,
                             ", joined over ", backend, "; ", run->Describe()));
  return built;
}

// Warm-up and timed steps; fills the timing fields of `m`. Throws what the
// model throws.
void TrainAndTime(const v1::RunnerJob& job, const ModelSpec& spec, const v1::RunSettings& settings,
                  const std::vector<torch::Device>& devices, JobObserver* observer,
                  v1::Measurement* m) {
  const auto build_start = SteadyClock::now();
  const torch::Device& device = devices.front();
  ResetDevicePeak(device);
  JobTrainers built = BuildTrainers(job, spec, settings, devices, observer);
  Trainer* trainer = built.leader;
  m->set_build_seconds(SecondsSince(build_start));
  if (m->counts().params() == 0) {
    FillCountsFromBuiltModel(spec, trainer->parameters(), m, observer);
  } else if (!trainer->optimizer_fused()) {
    // The counts assume the fused update; torch::optim (CUDA) moves more.
    CountOptimizerUpdate(spec, OptimizerUpdate::kPerOperation, m->mutable_counts());
    Log(observer, "optimizer: torch::optim, kernel by kernel (bytes_per_step counts its passes)");
  }

  if (const double startup = SecondsSinceProcessStart(); startup >= 0) {
    Log(observer, absl::StrFormat("startup: %.2f s from process start to the first step", startup));
  }
  TimedSteps timed;
  const auto time_steps = [&] {
    timed =
        WarmUpAndTime(built.loop, settings, device, job.stream_steps(), build_start, observer, m);
  };
  if (built.data_parallel) {
    built.data_parallel->RunPublishingFailures(time_steps);
  } else {
    time_steps();
  }
  m->set_peak_device_memory_bytes(DevicePeakBytes(device));
  // The last timed step's gradients are still held (the next step drops them).
  m->set_subnormal_gradient_fraction(device.is_cpu() && FlushDenormalState() != "on"
                                         ? SubnormalFraction(trainer->parameters())
                                         : -1);

  if (settings.profile()) RecordProfile(built.loop.step, settings, observer, m);

  int ranks = 1;
  if (built.data_parallel) {
    Log(observer, absl::StrCat("final ", built.data_parallel->WeightsDigest()));
    built.data_parallel->Finish(&timed.seconds_per_step, m);
    ranks = built.data_parallel->ranks();
  }
  RecordTimedSteps(timed, settings, m);
  FillRates(spec, ranks, m->stats().median_s(), m);
}

// The job's run settings with defaults filled in; thread counts swept as
// hyper-parameters override them.
v1::RunSettings EffectiveSettings(const ModelSpec& spec, const v1::RunSettings& requested,
                                  int confined_cpus) {
  v1::RunSettings settings = requested;
  // Confined to RunnerJob.cpus, the default is one thread per CPU of them.
  if (settings.intra_op_threads() == 0 && confined_cpus > 0) {
    settings.set_intra_op_threads(confined_cpus);
  }
  settings = common::WithRunDefaults(settings);
  if (auto it = spec.params.find(kIntraOpThreadsRule.name); it != spec.params.end()) {
    settings.set_intra_op_threads(static_cast<int32_t>(it->second));
  }
  if (auto it = spec.params.find(kInterOpThreadsRule.name); it != spec.params.end()) {
    settings.set_inter_op_threads(static_cast<int32_t>(it->second));
  }
  return settings;
}

// Why the job cannot fit this host's memory, or nullopt when it may.
std::optional<std::string> HostMemoryShortfall(const v1::ModelCounts& counts) {
  const int64_t host_memory = hostfacts::HostMemoryBytes();
  const double process_estimate =
      platform::ProcessMemoryEstimateBytes(counts.peak_memory_estimate_bytes());
  if (host_memory <= 0 || process_estimate <= static_cast<double>(host_memory)) {
    return std::nullopt;
  }
  return absl::StrFormat("memory estimate %.2f GiB exceeds host memory %.2f GiB",
                         process_estimate / (1 << 30),
                         static_cast<double>(host_memory) / (1 << 30));
}

// Checks the job's gang, confines the process to RunnerJob.cpus and sets
// the thread pools (in that order: threads inherit the CPUs of the thread
// that starts them). False, with `m` failed, when the job cannot run.
bool PrepareProcess(const v1::RunnerJob& job, const ModelSpec& spec, v1::RunSettings* settings,
                    v1::Measurement* m, JobObserver* observer) {
  const int64_t hosts = model::DataParallelHosts(job.config());
  if (job.has_gang()) {
    const absl::Status valid =
        ValidateGangRole(job.gang(), hosts, model::DataParallelDevices(job.config()));
    if (!valid.ok()) {
      Fail(*m, v1::ERROR, std::string(valid.message()));
      return false;
    }
  } else if (hosts > 1) {
    Fail(*m, v1::ERROR,
         absl::StrCat("hosts ", hosts,
                      ": a job of several hosts runs as a gang that a "
                      "coordinator assigns (RunnerJob.gang); this job has none"));
    return false;
  }
  const absl::StatusOr<std::string> confinement = ConfineProcessToCpus(job.cpus());
  if (!confinement.ok()) {
    Fail(*m, v1::UNSUPPORTED, std::string(confinement.status().message()));
    return false;
  }
  // ConfineProcessToCpus accepted the list.
  const std::vector<int> cpus = *JobCpus(job.cpus());
  *settings = EffectiveSettings(spec, job.settings(),
                                job.cpus().empty() ? 0 : static_cast<int>(cpus.size()));
  std::optional<model::ThreadSettings> profile;
  try {
    profile = JobThreadProfile(job, spec);
  } catch (const std::exception& e) {
    Fail(*m, v1::ERROR, absl::StrCat("setting thread counts: ", FirstErrorLine(e.what())));
    return false;
  }
  std::string placement = *confinement;
  if (profile.has_value() && (profile->physical_cores || profile->numa)) {
    const absl::StatusOr<std::string> placed =
        PlaceProcess(cpus, profile->physical_cores, profile->numa);
    if (!placed.ok()) {
      Fail(*m, v1::UNSUPPORTED,
           absl::StrCat("stack.threads ", profile->name, ": ", placed.status().message()));
      return false;
    }
    placement = placement.empty() ? *placed : absl::StrCat(placement, "; ", *placed);
  }
  try {
    ApplyJobThreads(*settings, profile, placement, m, observer);
  } catch (const std::exception& e) {
    Fail(*m, v1::ERROR, absl::StrCat("setting thread counts: ", FirstErrorLine(e.what())));
    return false;
  }
  return true;
}

}  // namespace

v1::Measurement RunJob(const v1::RunnerJob& job, JobObserver* observer) {
  const SteadyClock::time_point handed_over = SteadyClock::now();
  v1::Measurement m;
  m.set_device("cpu");
  *m.mutable_config() = NormalizedConfig(job.config());

  if (absl::Status valid = common::ValidateRunSettings(job.settings()); !valid.ok()) {
    return Fail(m, v1::ERROR, std::string(valid.message()));
  }
  auto spec = ParseModelSpec(job.config(), FieldStyle::kProto);
  if (!spec.ok()) return Fail(m, v1::ERROR, std::string(spec.status().message()));
  *m.mutable_counts() = CountModel(*spec);
  if (spec->family == kNoopFamilyName) {
    // The harness family (model/families/noop.h): nothing to build, set up or time,
    // on whatever device the job names.
    if (!job.device().empty()) m.set_device(job.device());
    FinishNoopMeasurement(&m);
    m.set_peak_rss_bytes(PeakRssBytes());
    Log(observer, "noop: no model built, no steps timed");
    return m;
  }

  if (JobReplicas(job) > 1) return RunReplicas(job, observer);
  v1::RunSettings settings;
  if (!PrepareProcess(job, *spec, &settings, &m, observer)) return m;

  if (!job.device().empty()) m.set_device(job.device());
  RecordStackInEffect(job.config(), &m);
  if (auto format = spec->options.find("memory_format"); format != spec->options.end()) {
    m.set_memory_format(format->second);
  }
  absl::StatusOr<std::vector<torch::Device>> devices = JobDevices(job, &m);
  if (!devices.ok()) return Fail(m, v1::UNSUPPORTED, std::string(devices.status().message()));
  const torch::Device* device = &devices->front();
  // A CUDA job's memory is the device's (the coordinator checks it against
  // the worker's platform); the host check is for CPU jobs.
  if (device->is_cpu()) {
    if (std::optional<std::string> oom = HostMemoryShortfall(m.counts())) {
      return Fail(m, v1::PREDICTED_OOM, *oom);
    }
  }

  // The host-speed sentinel, comparable only with a calibration that used
  // the same number of threads and the worker's own stack: under a sweep's
  // stack setting (blas_core: Prescott, an OpenMP variable) the probe's
  // matmul measures that stack, and a slow BLAS core read as a slow host.
  const bool probe = device->is_cpu() && job.reference_probe_flops_per_sec() > 0 &&
                     job.reference_probe_threads() == m.intra_op_threads() &&
                     job.config().stack().empty();
  SuspectFacts probe_facts;
  if (probe) SentinelBefore(job, handed_over, &m, &probe_facts);
  const SteadyClock::time_point before_at = SteadyClock::now();
  const std::optional<double> load_at_start = HostLoadAverage1();
  try {
    if (spec->family == model::kAllReduceFamilyName) {
      MeasureAllReduce(job, *spec, settings, *devices, observer, &m);
    } else {
      TrainAndTime(job, *spec, settings, *devices, observer, &m);
    }
  } catch (const GangBroken& e) {
    return Fail(m, v1::GANG_BROKEN, e.what());
  } catch (const GangPeerFailed& e) {
    return Fail(m, e.outcome(), e.what());
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    const v1::Outcome outcome = ClassifyModelError(message);
    return Fail(m, outcome,
                outcome == v1::UNSUPPORTED ? UnsupportedMessage(*spec, message) : message);
  } catch (const std::bad_alloc& e) {
    return Fail(m, v1::OOM, absl::StrCat("std::bad_alloc: ", e.what()));
  } catch (const std::exception& e) {
    const std::string message = e.what();
    const v1::Outcome outcome = ClassifyModelError(message);
    return Fail(m, outcome,
                outcome == v1::UNSUPPORTED ? UnsupportedMessage(*spec, message) : message);
  }
  m.set_outcome(v1::OK);
  m.set_peak_rss_bytes(PeakRssBytes());
  if (probe) SentinelAfter(job, before_at, &m, &probe_facts, observer);
  FlagSuspectConditions(load_at_start, &m, observer, std::move(probe_facts));
  return m;
}

}  // namespace paradnn::runner
