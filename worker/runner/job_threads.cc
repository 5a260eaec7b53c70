#include "worker/runner/job_threads.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <future>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hostfacts/host_facts.h"
#include "model/families/torchscript.h"
#include "model/model_counts.h"
#include "platform/thread_profile.h"
#include "worker/runner/models/torchscript_width.h"
#include "worker/runner/platform.h"
#include "worker/runner/thread_pinning.h"

namespace paradnn::runner {
namespace {

void LogThreads(JobObserver* observer, const std::string& line) {
  if (observer != nullptr) observer->OnLog(line);
}

// Starts LibTorch's inter-op pool (all its threads, at once) from this
// thread while it may still run on every CPU of the process: threads
// inherit the CPUs of the thread that creates them, and the pool would
// otherwise start at the first fork, from a main thread pinned to one CPU.
void StartInterOpPool() {
  std::promise<void> ran;
  at::launch([&ran] { ran.set_value(); });
  ran.get_future().wait();
}

std::string Pin(model::ThreadPinning pinning, const std::string& name, int threads) {
  switch (pinning) {
    case model::ThreadPinning::kRunnerRule:
      return PinOpenMpThreads(threads);
    case model::ThreadPinning::kOn:
      return PinOpenMpThreads(threads, /*always=*/true);
    case model::ThreadPinning::kOff:
      break;
  }
  return absl::StrCat("threads not pinned (threads ", name, ")");
}

// The model's average operator width: from the layer ledger, or for a
// TorchScript model from its graph (0, one pool, where it does not load:
// building the model reports why).
model::OperatorWidth JobWidth(const v1::RunnerJob& job, const model::ModelSpec& spec) {
  if (spec.family != model::kTorchScriptFamilyName) return model::CountWork(spec).width;
  try {
    return TorchScriptWidth(job.torchscript_content());
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

std::optional<model::ThreadSettings> JobThreadProfile(const v1::RunnerJob& job,
                                                      const model::ModelSpec& spec) {
  const auto it = job.config().stack().find(platform::kThreadsStackKey);
  if (it == job.config().stack().end()) return std::nullopt;
  absl::StatusOr<platform::ThreadProfile> profile =
      platform::ParseThreadProfile(it->second, "config.stack.threads");
  if (!profile.ok()) throw std::invalid_argument(std::string(profile.status().message()));
  // After ConfineProcessToCpus: RunnerJob.cpus where given, else what the
  // process started with (not the main thread's affinity, which libgomp
  // narrows under OMP_PROC_BIND).
  const hostfacts::CpuTopology topology =
      hostfacts::ReadCpuTopology(JobCpus(job.cpus()).value_or(ProcessCpusAtStart()));
  model::CpuCores cores;
  cores.logical_cpus = topology.logical_cpus;
  cores.physical_cores = topology.cores;
  cores.sockets = topology.sockets;
  return model::ResolveThreadProfile(*profile, JobWidth(job, spec), cores);
}

void ApplyJobThreads(const v1::RunSettings& settings,
                     const std::optional<model::ThreadSettings>& profile,
                     const std::string& confinement, v1::Measurement* m, JobObserver* observer) {
  int intra = settings.intra_op_threads();
  int inter = settings.inter_op_threads();
  if (profile.has_value()) {
    intra = profile->intra_op_threads;
    inter = profile->inter_op_threads;
  }
  const bool libtorch_own = profile.has_value() && intra == 0 && inter == 0;
  std::string requested = libtorch_own ? "LibTorch's own" : "";
  std::string interop_note;
  int blas = -1;
  if (!libtorch_own) {
    at::set_num_threads(intra);
    try {
      at::set_num_interop_threads(inter);
    } catch (const c10::Error&) {
      // Settable once per process; a second job in one process keeps the first.
      interop_note = " (already fixed in this process)";
    }
    blas = SetBlasThreads(intra);
    requested = absl::StrCat("requested intra-op ", intra, ", inter-op ", inter);
  }
  if (at::get_num_interop_threads() > 1) StartInterOpPool();
  std::string pinning = profile.has_value()
                            ? Pin(profile->pinning, profile->name, at::get_num_threads())
                            : PinOpenMpThreads(at::get_num_threads());
  if (!confinement.empty()) pinning = absl::StrCat(confinement, "; ", pinning);
  m->set_thread_pinning(pinning);
  m->set_intra_op_threads(at::get_num_threads());
  m->set_inter_op_threads(at::get_num_interop_threads());
  if (profile.has_value()) {
    LogThreads(observer, absl::StrCat("threads profile ", profile->name, ": ", profile->why));
  }
  LogThreads(observer,
             absl::StrCat("threads: intra-op ", m->intra_op_threads(), ", inter-op ",
                          m->inter_op_threads(), " (", requested, ")", interop_note, ", BLAS pool ",
                          blas < 0 ? std::string("n/a") : absl::StrCat(blas), "; ", pinning));
}

}  // namespace paradnn::runner
