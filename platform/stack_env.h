// Environment variables as stack settings: a sweep's stack key `env.NAME`
// (e.g. env.OMP_WAIT_POLICY: [active, passive]) sets NAME in the job's
// runner process, "" unsets it there. The coordinator may take sweeps from
// many users and its workers run them, so only performance variables of the
// libraries a runner loads are accepted (AllowedEnvPrefixes); the sweep
// validation (model/sweep.cc) and the worker (worker/stack_environment.cc)
// both check. LibTorch-free.
#ifndef PARADNN_PLATFORM_STACK_ENV_H_
#define PARADNN_PLATFORM_STACK_ENV_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paradnn::platform {

// A stack key naming an environment variable: "env." + NAME.
inline constexpr char kEnvStackPrefix[] = "env.";

// True for "env.<anything>" (valid or not).
bool IsEnvStackKey(absl::string_view key);

// The variable's name of an env key ("env.OMP_WAIT_POLICY" ->
// "OMP_WAIT_POLICY").
std::string EnvStackVariable(absl::string_view key);

// The prefixes a variable's name may start with: OMP_, GOMP_, KMP_, MKL_,
// OPENBLAS_, DNNL_, ONEDNN_, MALLOC_, TORCH_, PYTORCH_, CUDA_, CUBLAS_,
// CUBLASLT_, CUDNN_, NCCL_.
const std::vector<std::string>& AllowedEnvPrefixes();

// For messages: "env.NAME with NAME starting with OMP_, ... and naming no
// file, library or tool (...)".
std::string AllowedEnvHelp();

// OK when `key` is env.NAME, NAME a variable name (capitals, digits, '_')
// with an allowed prefix, no part that names a file, folder, library or
// tool (PATH, DIR, FILE, HOME, LIBRARY, LIBRARIES, PRELOAD, TOOL, DUMP,
// PROFILE, TRACE, OUT, OUTPUT), and not a variable another stack setting owns
// (OPENBLAS_CORETYPE is blas_core) or the worker does (CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER); or PARADNN_GLOO_DEVICE_NICE, paradnn's one runner
// knob a sweep may set (worker/runner/gloo_device_nice.h). Otherwise
// InvalidArgument "<field>: ..." saying what is allowed.
absl::Status ValidateEnvStackKey(absl::string_view key, absl::string_view field);

// OK for "" (the variable unset) or up to 128 letters, digits and
// _ - . , : = + * { } (thread counts, policies, affinity lists; no spaces,
// slashes or quotes: no path, no second word). Otherwise InvalidArgument
// "<field>: ...".
absl::Status ValidateEnvStackValue(absl::string_view value, absl::string_view field);

// Any stack key: blas_core, aten_capability (platform/stack_findings.h),
// threads (platform/thread_profile.h) or env.NAME (ValidateEnvStackKey). InvalidArgument "<field>:
// not a stack setting; allowed: ..." for another key.
absl::Status ValidateStackKey(absl::string_view key, absl::string_view field);

// The value of a key ValidateStackKey accepts: ValidateStackValue for
// blas_core and aten_capability, ParseThreadProfile for threads,
// ValidateEnvStackValue for env.NAME.
absl::Status ValidateStackKeyValue(absl::string_view key, absl::string_view value,
                                   absl::string_view field);

// The one spelling of a stack value that means the same settings as
// `value`: threads values in ThreadProfileValue's order without defaults
// ("inter=1,intra=2,pin=off" and "intra=2,inter=1,pin=off" are one
// configuration, not two); every other key's value, or a value that does not
// parse, unchanged.
std::string CanonicalStackValue(absl::string_view key, absl::string_view value);

// "blas_core, aten_capability, threads (...) or env.NAME (NAME starting
// with OMP_, ...)".
std::string AllowedStackKeysHelp();

}  // namespace paradnn::platform

#endif  // PARADNN_PLATFORM_STACK_ENV_H_
