#include "platform/stack_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace paradnn::platform {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(EnvStackKeyTest, PerformanceVariablesOfTheRunnersLibrariesAreAllowed) {
  for (const char* key :
       {"env.OMP_WAIT_POLICY", "env.OMP_NUM_THREADS", "env.GOMP_SPINCOUNT", "env.KMP_AFFINITY",
        "env.MKL_ENABLE_INSTRUCTIONS", "env.OPENBLAS_NUM_THREADS", "env.DNNL_MAX_CPU_ISA",
        "env.ONEDNN_MAX_CPU_ISA", "env.MALLOC_ARENA_MAX", "env.MALLOC_TRIM_THRESHOLD_",
        "env.TORCH_CPP_LOG_LEVEL", "env.PYTORCH_CUDA_ALLOC_CONF", "env.CUDA_LAUNCH_BLOCKING",
        "env.CUBLAS_WORKSPACE_CONFIG", "env.CUBLASLT_LOG_LEVEL", "env.CUDNN_CONV_WSCAP_DBG",
        "env.NCCL_ALGO"}) {
    EXPECT_TRUE(ValidateEnvStackKey(key, key).ok()) << key << ": " << ValidateEnvStackKey(key, key);
    EXPECT_TRUE(ValidateStackKey(key, key).ok()) << key;
  }
  EXPECT_EQ(EnvStackVariable("env.OMP_WAIT_POLICY"), "OMP_WAIT_POLICY");
  EXPECT_TRUE(IsEnvStackKey("env.anything"));
  // paradnn's one runner knob a sweep may set, by its full name; the rest of
  // PARADNN_ is the worker's and the tests'.
  EXPECT_TRUE(ValidateEnvStackKey("env.PARADNN_GLOO_DEVICE_NICE", "f").ok());
  for (const char* key : {"env.PARADNN_RUNNER_MALLOC", "env.PARADNN_TEST_CPU_REPLICAS",
                          "env.PARADNN_GLOO_DEVICE_NICE_X"}) {
    EXPECT_THAT(std::string(ValidateEnvStackKey(key, "f").message()),
                HasSubstr("is not a performance variable a sweep may set"))
        << key;
  }
  EXPECT_THAT(AllowedEnvHelp(), HasSubstr("or paradnn's runner knob PARADNN_GLOO_DEVICE_NICE"));
  EXPECT_FALSE(IsEnvStackKey("blas_core"));
}

TEST(EnvStackKeyTest, LoaderShellAndFileVariablesAreRefusedNamingTheFieldAndWhatIsAllowed) {
  const absl::Status preload = ValidateEnvStackKey("env.LD_PRELOAD", "stack.env.LD_PRELOAD");
  EXPECT_EQ(preload.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(preload.message()),
              StartsWith("stack.env.LD_PRELOAD: LD_PRELOAD is not a performance variable a sweep "
                         "may set (PRELOAD: it names what to load or write); allowed: env.NAME "
                         "with NAME starting with OMP_, GOMP_, KMP_"));
  for (const char* key : {"env.LD_LIBRARY_PATH", "env.PATH", "env.HOME", "env.GLIBC_TUNABLES",
                          "env.PYTHONPATH", "env.PARADNN_BLAS_CORE_CHOICE"}) {
    const absl::Status status = ValidateEnvStackKey(key, "field");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(std::string(status.message()), StartsWith("field: ")) << key;
  }
  // Within an allowed prefix, names that load or write files.
  for (const char* key :
       {"env.OMP_TOOL_LIBRARIES", "env.OMP_TOOL", "env.DNNL_JIT_DUMP", "env.ONEDNN_JIT_PROFILE",
        "env.TORCH_EXTENSIONS_DIR", "env.TORCH_HOME", "env.MALLOC_TRACE", "env.TORCH_LOGS_OUT"}) {
    const absl::Status status = ValidateEnvStackKey(key, key);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(std::string(status.message()), HasSubstr("it names what to load or write")) << key;
  }
  // GPU variables that load or write files, and the worker's own.
  for (const char* key : {"env.CUDA_CACHE_PATH", "env.NCCL_DEBUG_FILE"}) {
    EXPECT_THAT(std::string(ValidateEnvStackKey(key, key).message()),
                HasSubstr("it names what to load or write"))
        << key;
  }
  EXPECT_THAT(std::string(ValidateEnvStackKey("env.CUDA_VISIBLE_DEVICES", "f").message()),
              StartsWith("f: CUDA_VISIBLE_DEVICES is the worker's: which GPU a job runs on"));
  // The variables of the other stack settings go through those settings.
  EXPECT_THAT(std::string(ValidateEnvStackKey("env.OPENBLAS_CORETYPE", "f").message()),
              StartsWith("f: OPENBLAS_CORETYPE is the stack setting blas_core; write blas_core"));
  EXPECT_THAT(std::string(ValidateEnvStackKey("env.ATEN_CPU_CAPABILITY", "f").message()),
              HasSubstr("is the stack setting aten_capability"));
  // Not a variable name at all.
  for (const char* key : {"env.", "env.omp_wait_policy", "env.OMP WAIT", "env.1OMP", "env.OMP=1"}) {
    EXPECT_THAT(std::string(ValidateEnvStackKey(key, "f").message()),
                HasSubstr("is not an environment variable name"))
        << key;
  }
}

TEST(EnvStackValueTest, ValuesAreShortAndHoldNoPathOrSecondWord) {
  for (const char* value : {"", "passive", "2", "granularity=fine,compact,1,0", "{0:2},{2:2}",
                            "AVX2", "65536", "cores"}) {
    EXPECT_TRUE(ValidateEnvStackValue(value, "f").ok()) << value;
  }
  for (const char* value : {"a b", "/tmp/lib.so", "$(id)", "x;y", "'q'", "a\nb"}) {
    const absl::Status status = ValidateEnvStackValue(value, "stack.env.OMP_WAIT_POLICY[1]");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_THAT(std::string(status.message()), StartsWith("stack.env.OMP_WAIT_POLICY[1]: '"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("\"\" (unset) or up to 128 letters"));
  }
  EXPECT_TRUE(ValidateEnvStackValue(std::string(128, 'x'), "f").ok());
  EXPECT_FALSE(ValidateEnvStackValue(std::string(129, 'x'), "f").ok());
}

TEST(StackKeyTest, KnownSettingsAndEnvKeysOnlyWithTheirOwnValues) {
  EXPECT_TRUE(ValidateStackKey("blas_core", "f").ok());
  EXPECT_TRUE(ValidateStackKey("aten_capability", "f").ok());
  EXPECT_THAT(
      std::string(ValidateStackKey("omp_threads", "stack.omp_threads").message()),
      StartsWith("stack.omp_threads: not a stack setting; allowed: blas_core, "
                 "aten_capability, threads (libtorch, intel, tensorflow, guideline or "
                 "intra=T,inter=I[,pin=on|off][,replicas=P][,cores=physical|logical][,numa=on|"
                 "off] (T and I 1..1024, P 1..256)) or "
                 "env.NAME with NAME "
                 "starting with OMP_"));
  EXPECT_TRUE(ValidateStackKeyValue("blas_core", "Haswell", "f").ok());
  EXPECT_FALSE(ValidateStackKeyValue("blas_core", "Sky lake", "f").ok());
  EXPECT_FALSE(ValidateStackKeyValue("aten_capability", "", "f").ok());
  EXPECT_TRUE(ValidateStackKeyValue("env.OMP_WAIT_POLICY", "", "f").ok());
  EXPECT_FALSE(ValidateStackKeyValue("env.OMP_WAIT_POLICY", "a b", "f").ok());
  EXPECT_FALSE(ValidateStackKeyValue("omp_threads", "4", "f").ok());
}

}  // namespace
}  // namespace paradnn::platform
