// Flush-to-zero for paradnn-runner, in effect before any thread starts.
//
// Denormal (subnormal) float arithmetic runs 10-100x slower on x86 cores: a
// Transformer whose logit gradients were 28 % subnormal spent 16.6 s of a
// 21 s step in two matmuls. TensorFlow, which the original ParaDnn measured,
// runs its kernels with FTZ and DAZ set (port::ScopedFlushDenormal); LibTorch
// leaves them off (torch.set_flush_denormal). The runner sets both by
// default, so a number never depends on whether some values happened to be
// tiny; PARADNN_FLUSH_DENORMAL=off keeps the hardware default. The setting in
// effect is read back from MXCSR into Platform.flush_denormal, and so into
// the platform fingerprint.
//
// MXCSR is per thread and a new thread starts with its creator's, so it is
// set here, from the executable's DT_PREINIT_ARRAY: before OpenBLAS's
// constructor starts its thread pool and before LibTorch starts OpenMP's.
// Only strcmp (an IFUNC resolved at relocation, before preinit) and the
// ldmxcsr instruction: libc's own initialization has not run yet.
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace {

constexpr char kOffEntry[] = "PARADNN_FLUSH_DENORMAL=off";

void FlushDenormalsUnlessDisabled(int /*argc*/, char** /*argv*/, char** envp) {
  if (envp != nullptr) {
    for (int i = 0; envp[i] != nullptr; ++i) {
      if (std::strcmp(envp[i], kOffEntry) == 0) return;
    }
  }
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushToZero = 0x8000;     // MXCSR.FTZ: results
  constexpr unsigned kDenormalsAreZero = 0x40;  // MXCSR.DAZ: inputs
  _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
#endif
}

}  // namespace

// Must live in the executable itself, as openmp_env.cc's entry.
using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) static const PreinitFunction kDenormalPreinit =
    &FlushDenormalsUnlessDisabled;
