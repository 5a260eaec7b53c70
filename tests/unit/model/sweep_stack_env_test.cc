// env.NAME stack settings in sweeps: axes like blas_core, for allowed
// performance variables only (platform/stack_env.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/sweep.h"
#include "tests/unit/model/sweep_test_specs.h"

namespace paradnn::model {
namespace {

// clang-format off
constexpr const char* kOneFc = R"pb(
  name: "fc-one"
  family: "fc"
  device: "cpu"
  params { key: "layer" value { value: 2 } }
  params { key: "node" value { value: 64 } }
  params { key: "input" value { value: 32 } }
  params { key: "output" value { value: 8 } }
  params { key: "batch" value { value: 16 } }
)pb";
// clang-format on

TEST(SweepEnvStackTest, EnvSettingsAreAxesAndReachEachConfiguration) {
  v1::SweepSpec spec = Spec(kOneFc);
  SetStack(&spec, "env.OMP_WAIT_POLICY", {"active", "passive"});
  SetStack(&spec, "env.MALLOC_ARENA_MAX", {""});
  SetStack(&spec, "blas_core", {"Haswell"});
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(spec, 0, 2, &configs));
  EXPECT_EQ(configs[0].stack().at("env.OMP_WAIT_POLICY"), "active");
  EXPECT_EQ(configs[1].stack().at("env.OMP_WAIT_POLICY"), "passive");
  for (const v1::ModelConfig& c : configs) {
    EXPECT_EQ(c.stack().at("env.MALLOC_ARENA_MAX"), "");
    EXPECT_EQ(c.stack().at("blas_core"), "Haswell");
  }
}

TEST(SweepEnvStackTest, RefusedVariablesAndValuesNameTheFieldAndWhatIsAllowed) {
  ExpectStacksRefused(
      Spec(kOneFc),
      {
          {"env.LD_PRELOAD",
           {"/tmp/x.so"},
           "cpu",
           "stack.env.LD_PRELOAD: LD_PRELOAD is not a performance variable a sweep may set "
           "(PRELOAD: "
           "it names what to load or write); allowed: env.NAME with NAME starting with OMP_"},
          {"env.HOME", {"x"}, "cpu", "stack.env.HOME: HOME is not a performance variable"},
          {"env.OMP_TOOL_LIBRARIES",
           {"libtool.so"},
           "cpu",
           "stack.env.OMP_TOOL_LIBRARIES: OMP_TOOL_LIBRARIES is not a performance variable a sweep "
           "may set (TOOL: it names what to load or write)"},
          {"env.OMP_WAIT_POLICY",
           {"active", "pas sive"},
           "cpu",
           "stack.env.OMP_WAIT_POLICY[1]: 'pas sive' is not an allowed value"},
          {"env.OMP_WAIT_POLICY",
           {"active", "active"},
           "cpu",
           "stack.env.OMP_WAIT_POLICY[1]: 'active' "
           "is listed twice"},
          {"env.OMP_WAIT_POLICY",
           {},
           "cpu",
           "stack.env.OMP_WAIT_POLICY: empty list; give at least one "
           "value (\"\" unsets the variable)"},
          {"env.OMP_WAIT_POLICY",
           {"passive"},
           "cuda",
           "stack.env.OMP_WAIT_POLICY: stack settings choose CPU libraries' kernels"},
      });
}

// The threads profile: one axis whose values are whole settings.
TEST(SweepThreadsStackTest, ProfilesAreOneAxisAndExcludeTheThreadParams) {
  v1::SweepSpec spec = Spec(kOneFc);
  SetStack(&spec, "threads", {"libtorch", "guideline", "intra=1,inter=2,pin=off"});
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(spec, 0, 3, &configs));
  EXPECT_EQ(configs[2].stack().at("threads"), "intra=1,inter=2,pin=off");
  ExpectStacksRefused(
      Spec(kOneFc),
      {
          {"threads",
           {"guideline", "fastest"},
           "cpu",
           "stack.threads[1]: 'fastest' is not a profile name or key=value list; allowed: "
           "libtorch, intel, tensorflow, guideline or intra=T,inter=I[,pin=on|off]"},
          {"threads",
           {},
           "cpu",
           "stack.threads: empty list; give at least one of libtorch, intel, tensorflow"},
          {"threads", {"intel"}, "cuda", "stack.threads: stack settings choose CPU libraries"},
      });
  (*spec.mutable_params())["intra_op_threads"].set_value(2);
  const absl::Status both = ValidateSweep(spec, 0);
  EXPECT_EQ(both.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(both.message().find("stack.threads: sets the thread counts itself, and "
                                "params.intra_op_threads does too"),
            absl::string_view::npos)
      << both;
}

// Settings spelled in another key order, or with a default written out, are
// the configuration of their one spelling: stored, reused and compared as
// one, and refused as a duplicate when a sweep lists both.
TEST(SweepThreadsStackTest, EqualSettingsAreOneConfigurationWhateverTheirSpelling) {
  v1::SweepSpec spec = Spec(kOneFc);
  SetStack(&spec, "threads", {"inter=1,intra=2,pin=on", "numa=off,intra=1,inter=1,replicas=1"});
  std::vector<v1::ModelConfig> configs;
  ASSERT_NO_FATAL_FAILURE(ExpandValid(spec, 0, 2, &configs));
  EXPECT_EQ(configs[0].stack().at("threads"), "intra=2,inter=1,pin=on");
  EXPECT_EQ(configs[1].stack().at("threads"), "intra=1,inter=1");
  ExpectStacksRefused(Spec(kOneFc),
                      {{"threads",
                        {"intra=2,inter=1", "inter=1,intra=2,cores=logical"},
                        "cpu",
                        "stack.threads[1]: 'inter=1,intra=2,cores=logical' is listed twice (as "
                        "'intra=2,inter=1')"}});
}

}  // namespace
}  // namespace paradnn::model
