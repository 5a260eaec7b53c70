// The environment a job's runner starts in when its sweep varies the stack
// (ModelConfig.stack, e.g. blas_core: as-installed). The settings are
// variables their libraries read once, at process start, so such a job runs
// in a fresh runner (never the zygote) whose environment this computes.
// Pure functions; LibTorch-free.
#ifndef PARADNN_WORKER_STACK_ENVIRONMENT_H_
#define PARADNN_WORKER_STACK_ENVIRONMENT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/map.h"

namespace paradnn::worker {

// What each setting's values mean on this worker, by component
// (platform::StackSettingInfos).
struct StackChoices {
  // The variable as the worker found it at start (nullopt: unset): what
  // "as-installed" runs.
  std::map<std::string, std::optional<std::string>> as_installed;
  // The stack doctor's fastest correct value ("" or absent: none found, the
  // installed one stays): what "auto" runs.
  std::map<std::string, std::string> doctor_choice;
};

// `base` (NAME=value entries, e.g. this process's environ) with each
// setting of `stack` applied: its variable set, or unset for an installed
// value that had none, and its choice variable (PARADNN_*_CHOICE) set to
// as-installed, auto or forced; env.NAME sets NAME to the value ("" unsets
// it), for allowed names only (platform/stack_env.h); threads sets its
// profile's OpenMP environment (model::ThreadProfileEnvironment) before
// any env.NAME. InvalidArgument naming
// "config.stack.<key>" and what is allowed for an unknown key or value.
absl::StatusOr<std::vector<std::string>> JobEnvironment(
    const std::vector<std::string>& base, const StackChoices& choices,
    const google::protobuf::Map<std::string, std::string>& stack);

// This process's environment as NAME=value entries.
std::vector<std::string> CurrentEnvironment();

}  // namespace paradnn::worker

#endif  // PARADNN_WORKER_STACK_ENVIRONMENT_H_
