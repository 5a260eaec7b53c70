// The full v1::Platform of this host as LibTorch sees it. The header is
// torch-free; platform_torch.cc is a LibTorch unit.
#ifndef PARADNN_WORKER_RUNNER_PLATFORM_TORCH_H_
#define PARADNN_WORKER_RUNNER_PLATFORM_TORCH_H_

#include <map>
#include <string>

#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// Host facts (FillHostPlatform) plus the LibTorch version, the default
// intra-op thread count, the parallel backend summary, the oneDNN version,
// the ISA paths ATen and oneDNN dispatch to, and the fingerprint.
// Runs a tiny matmul first so that the BLAS is loaded and initialized before
// it is inspected. default_intra_op_threads is at::get_num_threads() as this
// process found it: call before anything sets the thread count.
v1::Platform CollectPlatform();

// The stack settings in effect in this process, by StackSettingInfo
// component: "blas_core" (the OpenBLAS core; absent when the BLAS is not
// OpenBLAS) and "aten_capability" (default, avx2 or avx512).
std::map<std::string, std::string> StackInEffect();

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_PLATFORM_TORCH_H_
