// The roofs one worker's results are measured against, and the arithmetic
// of utilization (docs/measurement.md "Utilization"): MFU/HFU against the
// calibrated roof of the kernel path the job ran ("of the stack's best":
// a CNN against the conv roof of its dtype, an FC against the matmul roof)
// and against the silicon's theoretical peak of the dtype ("of the
// silicon", the paper's definition). Nothing is ever shown above 100 %: a
// job that beats a roof raises it to what it achieved and is flagged.
// Not thread-safe; the scheduler keeps one per worker under its lock.
#ifndef PARADNN_SERVER_UTILIZATION_H_
#define PARADNN_SERVER_UTILIZATION_H_

#include <map>
#include <string>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::server {

// The matmul roof a precision computes in: "float32" for float32 (and an
// unset precision), "bfloat16" for bfloat16 and mixed_bf16, "float16" for
// float16 and mixed_fp16; "" for anything else.
std::string ComputeDtype(const std::string& precision);

// The calibrated roof a family's jobs are measured against: "conv" or
// "matmul" (FamilyDef.roof_kernel, model/family.h); "matmul" for an unknown
// family.
std::string RoofKernelOf(const std::string& family);

class UtilizationRoofs {
 public:
  UtilizationRoofs() = default;
  // The roofs of a worker's hello platform. A theoretical peak below a
  // calibrated roof of its dtype is taken as that roof (its basis is wrong,
  // and says so in its inconsistency).
  explicit UtilizationRoofs(const v1::Platform& platform);

  // Sets m's mfu/hfu, silicon_mfu/silicon_hfu and roof (all 0 / "" where
  // the platform has no roof or peak of the job's dtype; a convolutional job
  // on a platform without a conv roof is measured against the matmul roof,
  // said in `roof`). None exceeds 1. A clean job (OK, no suspect condition)
  // whose executed FLOP/s exceed a roof or peak raises it to that rate
  // (later jobs are measured against the raised figure) and gets a suspect
  // sentence; any other rate above a roof is shown as 1 and flagged. A float32 matmul job on a CPU
  // whose stack doctor found a faster BLAS core than the one in use is
  // flagged with the factor. Returns true when a roof or peak was raised:
  // platform() then holds the raised figures.
  bool Fill(v1::Measurement* m);

  const v1::Platform& platform() const { return platform_; }

 private:
  v1::Platform platform_;
};

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_UTILIZATION_H_
