#include "platform/stack_env.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "platform/stack_findings.h"
#include "platform/thread_profile.h"

namespace paradnn::platform {
namespace {

// Whose variables a job may set: the OpenMP runtimes (OMP_, GNU's GOMP_,
// LLVM's and Intel's KMP_), the BLAS libraries (MKL_, OPENBLAS_), oneDNN
// (DNNL_, ONEDNN_), glibc's malloc (MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_,
// ...), LibTorch's own (TORCH_, PYTORCH_: PYTORCH_CUDA_ALLOC_CONF) and the
// GPU libraries it loads (CUDA_, CUBLAS_, CUBLASLT_, CUDNN_, NCCL_:
// CUDA_LAUNCH_BLOCKING, CUBLAS_WORKSPACE_CONFIG, NCCL_ALGO). Left out on
// purpose: the dynamic loader
// and the shell's variables (LD_*, PATH, HOME, ...: code or files of the
// submitter's choosing), and GLIBC_TUNABLES, which ld.so parses before any
// of our code runs (CVE-2023-4911 was a buffer overflow there); glibc reads
// the malloc tunables that matter under their MALLOC_ names too. ATEN_'s
// one variable is the aten_capability setting.
constexpr const char* kAllowedPrefixes[] = {"OMP_",  "GOMP_",   "KMP_",      "MKL_",   "OPENBLAS_",
                                            "DNNL_", "ONEDNN_", "MALLOC_",   "TORCH_", "PYTORCH_",
                                            "CUDA_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "NCCL_"};

// paradnn's own runner knobs a sweep may set, by full name (no prefix of
// PARADNN_ is open: its other variables are the worker's and the tests').
constexpr const char* kAllowedRunnerKnobs[] = {"PARADNN_GLOO_DEVICE_NICE"};

// Variables within those prefixes that the worker owns: which GPUs a
// runner sees is the worker's --device (its lease), not a sweep's.
constexpr const char* kWorkerOwnedVariables[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};

// Parts of a name (between '_') that point a runtime at a file, folder,
// library or tool to load or write, within the allowed prefixes too:
// OMP_TOOL_LIBRARIES loads a shared library, ONEDNN_JIT_DUMP and
// DNNL_JIT_PROFILE write files, TORCH_EXTENSIONS_DIR names a folder,
// MALLOC_TRACE and TORCH_LOGS_OUT name a file to write.
constexpr const char* kRefusedParts[] = {"PATH",      "DIR",     "FILE",  "HOME", "LIBRARY",
                                         "LIBRARIES", "PRELOAD", "TOOL",  "DUMP", "PROFILE",
                                         "TRACE",     "OUT",     "OUTPUT"};

constexpr size_t kMaxEnvNameLength = 64;
constexpr size_t kMaxEnvValueLength = 128;

bool IsEnvNameText(absl::string_view name) {
  return !name.empty() && name.size() <= kMaxEnvNameLength && absl::ascii_isupper(name[0]) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isupper(c) || absl::ascii_isdigit(c) || c == '_';
         });
}

bool IsEnvValueChar(char c) {
  return absl::ascii_isalnum(c) ||
         absl::string_view("_-.,:=+*{}").find(c) != absl::string_view::npos;
}

std::string KnownSettingNames() {
  std::vector<std::string> names;
  names.reserve(StackSettingInfos().size());
  for (const StackSettingInfo& info : StackSettingInfos()) names.emplace_back(info.component);
  return absl::StrJoin(names, ", ");
}

}  // namespace

bool IsEnvStackKey(absl::string_view key) { return absl::StartsWith(key, kEnvStackPrefix); }

std::string EnvStackVariable(absl::string_view key) {
  return std::string(absl::StripPrefix(key, kEnvStackPrefix));
}

const std::vector<std::string>& AllowedEnvPrefixes() {
  static const auto* prefixes =
      new std::vector<std::string>(std::begin(kAllowedPrefixes), std::end(kAllowedPrefixes));
  return *prefixes;
}

std::string AllowedEnvHelp() {
  return absl::StrCat(
      "env.NAME with NAME starting with ", absl::StrJoin(AllowedEnvPrefixes(), ", "),
      " and naming no file, library or tool (no ", absl::StrJoin(kRefusedParts, ", "),
      " part), or paradnn's runner knob ", absl::StrJoin(kAllowedRunnerKnobs, ", "));
}

absl::Status ValidateEnvStackKey(absl::string_view key, absl::string_view field) {
  const std::string name = EnvStackVariable(key);
  if (!IsEnvStackKey(key) || !IsEnvNameText(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", absl::CEscape(name.substr(0, kMaxEnvNameLength)),
                     "' is not an environment variable name (capital letters, digits and '_', "
                     "starting with a letter, at most 64); allowed: ",
                     AllowedEnvHelp()));
  }
  for (const StackSettingInfo& info : StackSettingInfos()) {
    if (name == info.env_var || name == info.choice_env) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", name, " is the stack setting ", info.component, "; write ",
                       info.component, " (", info.names_help, ", auto or as-installed) instead"));
    }
  }
  if (std::find(std::begin(kWorkerOwnedVariables), std::end(kWorkerOwnedVariables), name) !=
      std::end(kWorkerOwnedVariables)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", name,
                     " is the worker's: which GPU a job runs on is the worker's --device; "
                     "choose it with the sweep's device (cuda) and the workers that take it"));
  }
  if (std::find(std::begin(kAllowedRunnerKnobs), std::end(kAllowedRunnerKnobs), name) !=
      std::end(kAllowedRunnerKnobs)) {
    return absl::OkStatus();
  }
  const bool prefixed =
      std::any_of(std::begin(kAllowedPrefixes), std::end(kAllowedPrefixes),
                  [&](const char* prefix) { return absl::StartsWith(name, prefix); });
  const std::vector<absl::string_view> parts = absl::StrSplit(name, '_');
  const auto refused = std::find_if(parts.begin(), parts.end(), [](absl::string_view part) {
    return std::find(std::begin(kRefusedParts), std::end(kRefusedParts), part) !=
           std::end(kRefusedParts);
  });
  if (!prefixed || refused != parts.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", name, " is not a performance variable a sweep may set",
        refused != parts.end() ? absl::StrCat(" (", *refused, ": it names what to load or write)")
                               : "",
        "; allowed: ", AllowedEnvHelp()));
  }
  return absl::OkStatus();
}

absl::Status ValidateEnvStackValue(absl::string_view value, absl::string_view field) {
  if (value.size() <= kMaxEnvValueLength &&
      std::all_of(value.begin(), value.end(), IsEnvValueChar)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": '", absl::CEscape(value.substr(0, kMaxEnvValueLength)),
      "' is not an allowed value: \"\" (unset) or up to 128 letters, digits and _ - . , : = + * "
      "{ } (no spaces, slashes or quotes)"));
}

absl::Status ValidateStackKey(absl::string_view key, absl::string_view field) {
  if (IsEnvStackKey(key)) return ValidateEnvStackKey(key, field);
  if (FindStackSettingInfo(key) != nullptr || key == kThreadsStackKey) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": not a stack setting; allowed: ", AllowedStackKeysHelp()));
}

absl::Status ValidateStackKeyValue(absl::string_view key, absl::string_view value,
                                   absl::string_view field) {
  if (IsEnvStackKey(key)) return ValidateEnvStackValue(value, field);
  if (key == kThreadsStackKey) return ParseThreadProfile(value, field).status();
  const StackSettingInfo* info = FindStackSettingInfo(key);
  if (info == nullptr) return ValidateStackKey(key, field);
  return ValidateStackValue(*info, value, field);
}

std::string CanonicalStackValue(absl::string_view key, absl::string_view value) {
  if (key != kThreadsStackKey) return std::string(value);
  absl::StatusOr<ThreadProfile> profile = ParseThreadProfile(value, key);
  return profile.ok() ? ThreadProfileValue(*profile) : std::string(value);
}

std::string AllowedStackKeysHelp() {
  return absl::StrCat(KnownSettingNames(), ", ", kThreadsStackKey, " (", ThreadProfileHelp(),
                      ") or ", AllowedEnvHelp());
}

}  // namespace paradnn::platform
