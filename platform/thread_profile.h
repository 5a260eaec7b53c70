// A job's framework thread settings as one stack value (a sweep's
// `stack: {threads: [...]}` axis, ModelConfig.stack["threads"]): a named
// profile that the runner resolves on the host it runs on (the guideline,
// the baselines of docs/tuning.md) or explicit counts. One axis, so that
// `paradnn compare --field stack.threads libtorch guideline` compares the
// settings as wholes and `paradnn tune` measures them interleaved in one
// sweep. Parsing only; what a profile means on a host is
// model/thread_guideline.h. LibTorch-free.
#ifndef PARADNN_PLATFORM_THREAD_PROFILE_H_
#define PARADNN_PLATFORM_THREAD_PROFILE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paradnn::platform {

// The stack key of the thread settings.
inline constexpr char kThreadsStackKey[] = "threads";

enum class ThreadProfileKind {
  kLibTorch,    // "libtorch": what LibTorch picks by itself, nothing set
  kIntel,       // "intel": Intel's recommended settings
  kTensorFlow,  // "tensorflow": the TensorFlow guide's defaults
  kGuideline,   // "guideline": pools = the model's width, intra = cores / pools
  kExplicit,    // "intra=T,inter=I[,pin=on|off][,replicas=P][,cores=..][,numa=..]"
};

struct ThreadProfile {
  ThreadProfileKind kind = ThreadProfileKind::kGuideline;
  // kExplicit only: the counts, 1..1024.
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  // kExplicit only: pin=on|off; absent = the runner's rule (pin when the
  // intra-op threads equal the process's CPUs).
  std::optional<bool> pin;
  // kExplicit only: replicas=P, P processes of the job at once, each on its
  // own share of the CPUs with the counts above (the paper's pools for
  // throughput; docs/tuning.md "Concurrent replicas"). 1: one process.
  int replicas = 1;
  // kExplicit only: cores=physical runs the process (every replica) on one
  // logical CPU per physical core of its CPUs, hyper-thread siblings idle;
  // cores=logical (the default) on every CPU it has.
  bool physical_cores = false;
  // kExplicit only: numa=on cuts replica shares along NUMA nodes and binds
  // each process's memory to the node of its CPUs (numactl
  // --cpunodebind=N --membind=N; one process per socket is
  // replicas=<sockets>,numa=on); off (the default) leaves memory to the
  // kernel's first-touch policy.
  bool numa = false;
};

// The profile of a stack value: libtorch, intel, tensorflow, guideline, or
// intra=T,inter=I with optional ,pin=on|off, ,replicas=P,
// ,cores=physical|logical and ,numa=on|off (keys in any order, each once;
// intra and inter required). InvalidArgument "<field>: '<value>' ..."
// naming what is allowed otherwise.
absl::StatusOr<ThreadProfile> ParseThreadProfile(absl::string_view value, absl::string_view field);

// The canonical stack value of `profile` ("intra=2,inter=1,pin=off",
// replicas only when above 1, cores only when physical, numa only when on:
// the defaults are left out so that equal settings are one value).
std::string ThreadProfileValue(const ThreadProfile& profile);

// "libtorch, intel, tensorflow, guideline or
// intra=T,inter=I[,pin=on|off][,replicas=P][,cores=physical|logical][,numa=on|off]
// (T and I 1..1024, P 1..256)".
std::string ThreadProfileHelp();

}  // namespace paradnn::platform

#endif  // PARADNN_PLATFORM_THREAD_PROFILE_H_
