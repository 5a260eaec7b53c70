#include "worker/runner/fused_update_kernels.h"

#include <cmath>

namespace paradnn::runner {
namespace {

// The loops, inlined into each dtype's function below. Those carry
// target_clones, so each loop vectorizes for the host's widest ISA (the
// default build targets baseline x86-64), chosen once at load time; the
// attribute is on plain functions because clang (clang-tidy) does not
// multiversion templates.
template <typename T>
__attribute__((always_inline)) inline void RmsPropMomentumLoop(T* __restrict param,
                                                               const T* __restrict grad,
                                                               T* __restrict square_avg,
                                                               T* __restrict buffer, int64_t begin,
                                                               int64_t end, UpdateConstants c) {
  for (int64_t i = begin; i < end; ++i) {
    const float g = static_cast<float>(grad[i]);
    const float sq = static_cast<float>(square_avg[i]) * c.alpha + c.one_minus_alpha * g * g;
    const float avg = std::sqrt(sq) + c.eps;
    const float buf = static_cast<float>(buffer[i]) * c.momentum + g / avg;
    square_avg[i] = static_cast<T>(sq);
    buffer[i] = static_cast<T>(buf);
    param[i] = static_cast<T>(static_cast<float>(param[i]) + c.lr_negated * buf);
  }
}

template <typename T>
__attribute__((always_inline)) inline void MomentumLoop(T* __restrict param,
                                                        const T* __restrict grad,
                                                        T* __restrict buffer, bool first_step,
                                                        int64_t begin, int64_t end,
                                                        UpdateConstants c) {
  for (int64_t i = begin; i < end; ++i) {
    const float g = static_cast<float>(grad[i]);
    const float buf = first_step ? g : static_cast<float>(buffer[i]) * c.momentum + g;
    buffer[i] = static_cast<T>(buf);
    param[i] = static_cast<T>(static_cast<float>(param[i]) + c.lr_negated * buf);
  }
}

template <typename T>
__attribute__((always_inline)) inline void SgdLoop(T* __restrict param, const T* __restrict grad,
                                                   int64_t begin, int64_t end, UpdateConstants c) {
  for (int64_t i = begin; i < end; ++i) {
    param[i] =
        static_cast<T>(static_cast<float>(param[i]) + c.lr_negated * static_cast<float>(grad[i]));
  }
}

}  // namespace

#define PARADNN_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

PARADNN_VECTOR_CLONES void RmsPropMomentumRange(float* param, const float* grad, float* square_avg,
                                                float* buffer, int64_t begin, int64_t end,
                                                const UpdateConstants& c) {
  RmsPropMomentumLoop(param, grad, square_avg, buffer, begin, end, c);
}
PARADNN_VECTOR_CLONES void RmsPropMomentumRange(c10::BFloat16* param, const c10::BFloat16* grad,
                                                c10::BFloat16* square_avg, c10::BFloat16* buffer,
                                                int64_t begin, int64_t end,
                                                const UpdateConstants& c) {
  RmsPropMomentumLoop(param, grad, square_avg, buffer, begin, end, c);
}
PARADNN_VECTOR_CLONES void RmsPropMomentumRange(c10::Half* param, const c10::Half* grad,
                                                c10::Half* square_avg, c10::Half* buffer,
                                                int64_t begin, int64_t end,
                                                const UpdateConstants& c) {
  RmsPropMomentumLoop(param, grad, square_avg, buffer, begin, end, c);
}

PARADNN_VECTOR_CLONES void MomentumRange(float* param, const float* grad, float* buffer,
                                         bool first_step, int64_t begin, int64_t end,
                                         const UpdateConstants& c) {
  MomentumLoop(param, grad, buffer, first_step, begin, end, c);
}
PARADNN_VECTOR_CLONES void MomentumRange(c10::BFloat16* param, const c10::BFloat16* grad,
                                         c10::BFloat16* buffer, bool first_step, int64_t begin,
                                         int64_t end, const UpdateConstants& c) {
  MomentumLoop(param, grad, buffer, first_step, begin, end, c);
}
PARADNN_VECTOR_CLONES void MomentumRange(c10::Half* param, const c10::Half* grad, c10::Half* buffer,
                                         bool first_step, int64_t begin, int64_t end,
                                         const UpdateConstants& c) {
  MomentumLoop(param, grad, buffer, first_step, begin, end, c);
}

PARADNN_VECTOR_CLONES void SgdRange(float* param, const float* grad, int64_t begin, int64_t end,
                                    const UpdateConstants& c) {
  SgdLoop(param, grad, begin, end, c);
}
PARADNN_VECTOR_CLONES void SgdRange(c10::BFloat16* param, const c10::BFloat16* grad, int64_t begin,
                                    int64_t end, const UpdateConstants& c) {
  SgdLoop(param, grad, begin, end, c);
}
PARADNN_VECTOR_CLONES void SgdRange(c10::Half* param, const c10::Half* grad, int64_t begin,
                                    int64_t end, const UpdateConstants& c) {
  SgdLoop(param, grad, begin, end, c);
}

#undef PARADNN_VECTOR_CLONES

}  // namespace paradnn::runner
