#include "worker/runner/platform_torch.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "hostfacts/host_facts.h"
#include "worker/runner/allocator_settings.h"
#include "worker/runner/platform.h"
#include "worker/runner/stack_doctor.h"

namespace paradnn::runner {

v1::Platform CollectPlatform() {
  v1::Platform platform;
  // Before anything else touches the thread count.
  const int torch_threads = at::get_num_threads();
  {
    // LibTorch sends float32 matmuls to sgemm_; make sure the BLAS has been
    // entered (and has set up its thread pool) before describing it.
    torch::NoGradGuard no_grad;
    torch::Tensor a = torch::ones({8, 8}, torch::kFloat32);
    torch::Tensor product = torch::mm(a, a);
    (void)product.sum().item<float>();
  }
  FillHostPlatform(&platform);
  // LibTorch's default (OMP_NUM_THREADS, else from the host's CPU count:
  // 1 on a 2-CPU host) ignores the affinity: no more threads than the CPUs
  // this process may use (logical_cpus, from the affinity).
  platform.set_default_intra_op_threads(platform.logical_cpus() > 0
                                            ? std::min(torch_threads, platform.logical_cpus())
                                            : torch_threads);
  platform.set_libtorch_version(TORCH_VERSION);
  const std::string config = at::show_config();
  platform.set_parallel_backend(
      SummarizeParallelBackend(at::get_parallel_info(), config, ParallelEnvironment()));
  const LoadedOneDnn dnn = DescribeLoadedOneDnn();
  platform.set_onednn_version(!dnn.version.empty() ? dnn.version
                                                   : ParseOneDnnVersion(at::get_mkldnn_version()));
  platform.set_isa_paths(DescribeIsaPaths(ParseAtenCpuCapability(config), dnn.max_isa,
                                          hostfacts::ReadCpuTopology().flags));
  platform.set_allocator(AllocatorDescription());
  platform.set_flush_denormal(FlushDenormalState());
  const OpenBlasCore core = DescribeOpenBlasCore();
  platform.set_blas_core(core.name);
  platform.set_blas_core_choice(core.choice);
  platform.set_aten_capability(AtenCapabilityName(ParseAtenCpuCapability(config)));
  const char* aten_choice = std::getenv(AtenCapabilitySetting().info->choice_env);
  platform.set_aten_capability_choice(
      aten_choice != nullptr && *aten_choice != '\0'                  ? aten_choice
      : std::getenv(AtenCapabilitySetting().info->env_var) != nullptr ? "environment"
                                                                      : "as-installed");
  platform.set_fingerprint(PlatformFingerprint(platform));
  return platform;
}

std::map<std::string, std::string> StackInEffect() {
  std::map<std::string, std::string> stack;
  if (std::string core = DescribeOpenBlasCore().name; !core.empty()) stack["blas_core"] = core;
  stack["aten_capability"] = AtenCapabilityName(ParseAtenCpuCapability(at::show_config()));
  return stack;
}

}  // namespace paradnn::runner
