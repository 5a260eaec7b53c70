// Family allreduce: the communication roof (issue 39, item 4). No model:
// each step is one in-place sum all-reduce of one contiguous float32 tensor
// of `bytes` over the job's process group (world = hosts x devices), waited
// for, so that the harness times what a bare c10d loop times and its result
// calibrates a platform's all-reduce latency and bandwidth as the matmul
// roofs calibrate compute (docs/measurement.md, "The all-reduce family").
//
// Parameters: bytes (required: the message, 4 .. 1 GiB in multiples of 4,
// float32 elements), hosts (the ranks: one runner process per worker),
// devices (1 only: one rank per process), the thread counts, and overlap
// (1 only: there is nothing to overlap with). No batch: a step trains no
// examples, so examples_per_sec is 0. Precision float32 only.
//
// Counts: params = bytes / 4 (the gradient elements of a model whose
// all-reduce this step is), 0 FLOPs, bytes_per_step = the bus bytes each
// rank sends per step (bytes x 2 (ranks - 1) / ranks, as nccl-tests counts
// busbw), memory = the message and a scratch buffer of its size.
#ifndef PARADNN_MODEL_FAMILIES_ALLREDUCE_H_
#define PARADNN_MODEL_FAMILIES_ALLREDUCE_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

inline constexpr const char* kAllReduceFamilyName = "allreduce";
inline constexpr int64_t kMaxAllReduceBytes = int64_t{1} << 30;

// The message of a valid allreduce spec, in bytes.
int64_t AllReduceBytes(const ModelSpec& spec);

// nccl-tests' bus bandwidth factor of an all-reduce over `ranks`:
// 2 (ranks - 1) / ranks (busbw = algbw x factor, bus bytes = bytes x factor);
// 0 for one rank (or fewer), which moves nothing.
inline double AllReduceBusFactor(int64_t ranks) {
  return ranks > 1 ? 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks) : 0;
}

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_ALLREDUCE_H_
