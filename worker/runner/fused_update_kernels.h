// The fused optimizer's element loops (fused_optimizer.h): one pass over a
// parameter's elements [begin, end) in float arithmetic, for each stored
// dtype. They live apart from the optimizer so that only these loops are
// compiled at -O3 without errno (what vectorizes them), while the LibTorch
// code around them shares the runner's precompiled header.
#ifndef PARADNN_WORKER_RUNNER_FUSED_UPDATE_KERNELS_H_
#define PARADNN_WORKER_RUNNER_FUSED_UPDATE_KERNELS_H_

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>

namespace paradnn::runner {

// The update's constants as float32, the values LibTorch's kernels use.
struct UpdateConstants {
  float lr_negated = 0;
  float alpha = 0;
  float one_minus_alpha = 0;
  float eps = 0;
  float momentum = 0;
};

// RMSprop with momentum:
//   sq = alpha * sq + (1 - alpha) * g * g;  avg = sqrt(sq) + eps;
//   buf = momentum * buf + g / avg;          p = p - lr * buf.
void RmsPropMomentumRange(float* param, const float* grad, float* square_avg, float* buffer,
                          int64_t begin, int64_t end, const UpdateConstants& c);
void RmsPropMomentumRange(c10::BFloat16* param, const c10::BFloat16* grad,
                          c10::BFloat16* square_avg, c10::BFloat16* buffer, int64_t begin,
                          int64_t end, const UpdateConstants& c);
void RmsPropMomentumRange(c10::Half* param, const c10::Half* grad, c10::Half* square_avg,
                          c10::Half* buffer, int64_t begin, int64_t end, const UpdateConstants& c);

// SGD with momentum: buf = momentum * buf + g (buf = g at the first step);
// p = p - lr * buf.
void MomentumRange(float* param, const float* grad, float* buffer, bool first_step, int64_t begin,
                   int64_t end, const UpdateConstants& c);
void MomentumRange(c10::BFloat16* param, const c10::BFloat16* grad, c10::BFloat16* buffer,
                   bool first_step, int64_t begin, int64_t end, const UpdateConstants& c);
void MomentumRange(c10::Half* param, const c10::Half* grad, c10::Half* buffer, bool first_step,
                   int64_t begin, int64_t end, const UpdateConstants& c);

// Plain SGD: p = p - lr * g.
void SgdRange(float* param, const float* grad, int64_t begin, int64_t end,
              const UpdateConstants& c);
void SgdRange(c10::BFloat16* param, const c10::BFloat16* grad, int64_t begin, int64_t end,
              const UpdateConstants& c);
void SgdRange(c10::Half* param, const c10::Half* grad, int64_t begin, int64_t end,
              const UpdateConstants& c);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_FUSED_UPDATE_KERNELS_H_
