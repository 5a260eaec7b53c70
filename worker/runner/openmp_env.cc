// OpenMP spin default for paradnn-runner, in effect before libgomp starts.
//
// LibTorch (the Debian build) runs its element-wise kernels and oneDNN on an
// OpenMP pool, but float32 matmuls go to OpenBLAS, which keeps a pthread pool
// of its own. After each parallel region libgomp's idle threads spin for
// GOMP_SPINCOUNT iterations (300000 by default, milliseconds) before they
// sleep; during a following sgemm those spinning threads hold the cores that
// OpenBLAS's threads need. Measured on a 2-core host (FC 4x1024, batch 256,
// float32, 2 threads): 117 ms per step with libgomp's default, 36-39 ms with
// a short spin or OMP_WAIT_POLICY=passive; bfloat16 (oneDNN on the OpenMP
// pool) is 13 ms with a short spin but 20 ms with passive, because its back-
// to-back parallel regions want spinning threads. A spin of 1000 keeps both
// paths at their best and is 12-13 % faster than 3000 on small float32
// models, whose sgemm calls follow each parallel region closely (FC 4x32
// batch 64: 229k vs 201k examples/s; 4x256 batch 256: 58k vs 53k; 4x1024
// batch 512 float32, bfloat16 and mixed_bf16 within 2 %). It is the
// runner's default: PARADNN_RUNNER_GOMP_SPINCOUNT, openmp_env.h.
//
// libgomp reads the environment once, in its ELF constructor, and libc
// re-installs the original environment block in its own constructor, so no
// code of this program can change the variable in time by setenv(). Instead
// the executable's DT_PREINIT_ARRAY entry (run by the dynamic loader after
// mapping and relocating the libraries but before any library constructor
// or LibTorch's static initialization) re-executes the same binary once with
// GOMP_SPINCOUNT=1000 added. This costs one more load of the shared libraries
// (tens of milliseconds), keeps the pid, the argv and every open descriptor
// (the job on stdin is untouched), and happens only when neither
// OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set: a value the user chose is left
// alone (GOMP_SPINCOUNT=300000 restores libgomp's default, and
// PARADNN_RUNNER_KEEP_OPENMP_ENV=1 disables this step). If the re-exec fails
// the runner carries on with libgomp's defaults. Either way the setting in
// effect is recorded in Platform.parallel_backend and so in the platform
// fingerprint.
//
// Only async-signal-safe calls (readlink, execve) and plain loops are used:
// libc is not initialized yet when this runs.
#include "common/openmp_env.h"

#include <unistd.h>

#include <climits>
#include <cstring>

namespace {

constexpr char kSpinCountEntry[] = "GOMP_SPINCOUNT=" PARADNN_RUNNER_GOMP_SPINCOUNT;
// Environments larger than this are left as they are.
constexpr int kMaxEnvironment = 4096;

bool HasPrefix(const char* entry, const char* prefix) {
  return std::strncmp(entry, prefix, std::strlen(prefix)) == 0;
}

void ReexecWithOpenMpSpinDefault(int /*argc*/, char** argv, char** envp) {
  if (argv == nullptr || envp == nullptr) return;
  int count = 0;
  for (; envp[count] != nullptr; ++count) {
    if (HasPrefix(envp[count], "OMP_WAIT_POLICY=") || HasPrefix(envp[count], "GOMP_SPINCOUNT=") ||
        HasPrefix(envp[count], "PARADNN_RUNNER_KEEP_OPENMP_ENV=")) {
      return;
    }
    if (count >= kMaxEnvironment) return;
  }
  static char* environment[kMaxEnvironment + 2];
  for (int i = 0; i < count; ++i) environment[i] = envp[i];
  environment[count] = const_cast<char*>(kSpinCountEntry);
  environment[count + 1] = nullptr;
  // The resolved path (not /proc/self/exe itself) keeps the process name.
  static char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return;
  self[length] = '\0';
  execve(self, argv, environment);
  // Only reached if execve failed: run with libgomp's defaults.
}

}  // namespace

// Must live in the executable itself (not a static library, whose unreferenced
// objects the linker drops): only an executable's preinit array is run.
using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) static const PreinitFunction kOpenMpPreinit =
    &ReexecWithOpenMpSpinDefault;
