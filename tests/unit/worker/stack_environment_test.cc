#include "worker/stack_environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace paradnn::worker {
namespace {

google::protobuf::Map<std::string, std::string> Stack(
    std::initializer_list<std::pair<const char*, const char*>> entries) {
  google::protobuf::Map<std::string, std::string> stack;
  for (const auto& [key, value] : entries) stack[key] = value;
  return stack;
}

bool Has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool HasName(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

// A worker started under OPENBLAS_CORETYPE=Prescott (the Xeon's own pick,
// reproduced) whose doctor chose Haswell, with no ATEN_CPU_CAPABILITY.
StackChoices Choices() {
  StackChoices choices;
  choices.as_installed["blas_core"] = "Prescott";
  choices.as_installed["aten_capability"] = std::nullopt;
  choices.doctor_choice["blas_core"] = "Haswell";
  choices.doctor_choice["aten_capability"] = "avx512";
  return choices;
}

const std::vector<std::string> kWorkerEnv = {
    "PATH=/usr/bin", "OPENBLAS_CORETYPE=Haswell", "PARADNN_BLAS_CORE_CHOICE=auto",
    "ATEN_CPU_CAPABILITY=avx512", "PARADNN_ATEN_CAPABILITY_CHOICE=auto"};

TEST(JobEnvironmentTest, AsInstalledRestoresWhatTheWorkerFoundAtStart) {
  absl::StatusOr<std::vector<std::string>> env =
      JobEnvironment(kWorkerEnv, Choices(),
                     Stack({{"blas_core", "as-installed"}, {"aten_capability", "as-installed"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "OPENBLAS_CORETYPE=Prescott"));
  EXPECT_TRUE(Has(*env, "PARADNN_BLAS_CORE_CHOICE=as-installed"));
  // No variable at start: none in the job's process either.
  EXPECT_FALSE(HasName(*env, "ATEN_CPU_CAPABILITY"));
  EXPECT_TRUE(Has(*env, "PARADNN_ATEN_CAPABILITY_CHOICE=as-installed"));
  EXPECT_TRUE(Has(*env, "PATH=/usr/bin"));
  EXPECT_FALSE(Has(*env, "OPENBLAS_CORETYPE=Haswell"));
}

TEST(JobEnvironmentTest, AutoIsTheDoctorsChoiceAndANameIsForced) {
  absl::StatusOr<std::vector<std::string>> env = JobEnvironment(
      kWorkerEnv, Choices(), Stack({{"blas_core", "auto"}, {"aten_capability", "avx2"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "OPENBLAS_CORETYPE=Haswell"));
  EXPECT_TRUE(Has(*env, "PARADNN_BLAS_CORE_CHOICE=auto"));
  EXPECT_TRUE(Has(*env, "ATEN_CPU_CAPABILITY=avx2"));
  EXPECT_TRUE(Has(*env, "PARADNN_ATEN_CAPABILITY_CHOICE=forced"));
  // Each variable once.
  EXPECT_EQ(
      std::count_if(env->begin(), env->end(),
                    [](const std::string& e) { return e.rfind("OPENBLAS_CORETYPE=", 0) == 0; }),
      1);
  // Without a doctor finding, auto is what is installed, and says so.
  StackChoices no_doctor = Choices();
  no_doctor.doctor_choice.clear();
  env = JobEnvironment(kWorkerEnv, no_doctor, Stack({{"blas_core", "auto"}}));
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(Has(*env, "OPENBLAS_CORETYPE=Prescott"));
  EXPECT_TRUE(Has(*env, "PARADNN_BLAS_CORE_CHOICE=as-installed"));
}

TEST(JobEnvironmentTest, UnknownSettingsAndValuesAreRefusedByName) {
  absl::StatusOr<std::vector<std::string>> env =
      JobEnvironment(kWorkerEnv, Choices(), Stack({{"omp_threads", "4"}}));
  EXPECT_EQ(env.status().message().substr(0, 93),
            "config.stack.omp_threads: not a stack setting; allowed: blas_core, aten_capability, "
            "threads (");
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"blas_core", "x;rm -rf"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.status().message().find("config.stack.blas_core: 'x;rm -rf' is not auto"),
            absl::string_view::npos);
}

TEST(JobEnvironmentTest, EnvSettingsSetOrUnsetTheirVariableAndNothingElse) {
  std::vector<std::string> worker_env = kWorkerEnv;
  worker_env.insert(worker_env.end(), {"OMP_WAIT_POLICY=active", "MALLOC_ARENA_MAX=8"});
  absl::StatusOr<std::vector<std::string>> env =
      JobEnvironment(worker_env, Choices(),
                     Stack({{"env.OMP_WAIT_POLICY", "passive"},
                            {"env.MALLOC_ARENA_MAX", ""},
                            {"env.KMP_AFFINITY", "granularity=fine,compact"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "OMP_WAIT_POLICY=passive"));
  EXPECT_FALSE(Has(*env, "OMP_WAIT_POLICY=active"));
  EXPECT_EQ(std::count_if(env->begin(), env->end(),
                          [](const std::string& e) { return e.rfind("OMP_WAIT_POLICY=", 0) == 0; }),
            1);
  // "" unsets what the worker had.
  EXPECT_FALSE(HasName(*env, "MALLOC_ARENA_MAX"));
  EXPECT_TRUE(Has(*env, "KMP_AFFINITY=granularity=fine,compact"));
  // The other settings' variables stay as the worker has them.
  EXPECT_TRUE(Has(*env, "OPENBLAS_CORETYPE=Haswell"));
  EXPECT_TRUE(Has(*env, "PARADNN_BLAS_CORE_CHOICE=auto"));
  EXPECT_TRUE(Has(*env, "PATH=/usr/bin"));
}

TEST(JobEnvironmentTest, EnvSettingsOutsideTheAllowlistAreRefusedByTheWorkerToo) {
  // A coordinator that did not check (or an older one) cannot make a
  // worker preload a library or change its PATH.
  absl::StatusOr<std::vector<std::string>> env =
      JobEnvironment(kWorkerEnv, Choices(), Stack({{"env.LD_PRELOAD", "/tmp/evil.so"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(env.status().message().substr(0, 77),
            "config.stack.env.LD_PRELOAD: LD_PRELOAD is not a performance variable a sweep");
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"env.PATH", "bin"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"env.OMP_TOOL_LIBRARIES", "libx.so"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"env.OMP_WAIT_POLICY", "passive; id"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.status().message().find("config.stack.env.OMP_WAIT_POLICY: 'passive; id'"),
            absl::string_view::npos);
}

TEST(JobEnvironmentTest, AThreadsProfileSetsItsOpenMpEnvironmentBeforeEnvSettings) {
  absl::StatusOr<std::vector<std::string>> env =
      JobEnvironment(kWorkerEnv, Choices(), Stack({{"threads", "intel"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "OMP_PROC_BIND=close"));
  EXPECT_TRUE(Has(*env, "OMP_PLACES=cores"));
  EXPECT_TRUE(Has(*env, "KMP_BLOCKTIME=1"));
  // An env.NAME of the same job has the last word.
  env = JobEnvironment(kWorkerEnv, Choices(),
                       Stack({{"threads", "intel"}, {"env.OMP_PROC_BIND", "spread"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "OMP_PROC_BIND=spread"));
  EXPECT_FALSE(Has(*env, "OMP_PROC_BIND=close"));
  // LibTorch's defaults keep the runner from setting its short spin.
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"threads", "libtorch"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(Has(*env, "PARADNN_RUNNER_KEEP_OPENMP_ENV=1"));
  // Explicit counts need no environment: the runner sets them.
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"threads", "intra=1,inter=2"}}));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(*env, kWorkerEnv);
  env = JobEnvironment(kWorkerEnv, Choices(), Stack({{"threads", "intra=1"}}));
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.status().message().find("config.stack.threads: 'intra=1' needs both"),
            absl::string_view::npos)
      << env.status();
}

}  // namespace
}  // namespace paradnn::worker
