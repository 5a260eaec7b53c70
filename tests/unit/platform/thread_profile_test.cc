// Thread settings as one stack value (platform/thread_profile.h): the named
// profiles, explicit counts, and the errors that name the field and what is
// allowed.
#include "platform/thread_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "platform/stack_env.h"

namespace paradnn::platform {
namespace {

using ::testing::HasSubstr;

TEST(ThreadProfileTest, NamedProfilesParse) {
  EXPECT_EQ(ParseThreadProfile("libtorch", "f")->kind, ThreadProfileKind::kLibTorch);
  EXPECT_EQ(ParseThreadProfile("intel", "f")->kind, ThreadProfileKind::kIntel);
  EXPECT_EQ(ParseThreadProfile("tensorflow", "f")->kind, ThreadProfileKind::kTensorFlow);
  EXPECT_EQ(ParseThreadProfile("guideline", "f")->kind, ThreadProfileKind::kGuideline);
}

TEST(ThreadProfileTest, ExplicitCountsInAnyOrderWithOptionalPinning) {
  absl::StatusOr<ThreadProfile> p = ParseThreadProfile("inter=2,intra=8", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->kind, ThreadProfileKind::kExplicit);
  EXPECT_EQ(p->intra_op_threads, 8);
  EXPECT_EQ(p->inter_op_threads, 2);
  EXPECT_FALSE(p->pin.has_value());
  EXPECT_EQ(ThreadProfileValue(*p), "intra=8,inter=2");
  p = ParseThreadProfile("intra=1,inter=1,pin=off", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pin, false);
  EXPECT_EQ(ThreadProfileValue(*p), "intra=1,inter=1,pin=off");
  EXPECT_EQ(ParseThreadProfile("pin=on,intra=4,inter=1", "f")->pin, true);
  EXPECT_EQ(ThreadProfileValue(*ParseThreadProfile("intel", "f")), "intel");
  p = ParseThreadProfile("replicas=2,intra=1,inter=1", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->replicas, 2);
  EXPECT_EQ(ThreadProfileValue(*p), "intra=1,inter=1,replicas=2");
  EXPECT_EQ(ThreadProfileValue(*ParseThreadProfile("intra=1,inter=1,replicas=1", "f")),
            "intra=1,inter=1");
  p = ParseThreadProfile("numa=on,cores=physical,intra=4,inter=1,replicas=2", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->physical_cores);
  EXPECT_TRUE(p->numa);
  EXPECT_EQ(ThreadProfileValue(*p), "intra=4,inter=1,replicas=2,cores=physical,numa=on");
  // The defaults are one value with the settings left out.
  EXPECT_EQ(ThreadProfileValue(*ParseThreadProfile("intra=2,inter=1,cores=logical,numa=off", "f")),
            "intra=2,inter=1");
  EXPECT_TRUE(
      ParseThreadProfile("intra=1024,inter=1024,pin=off,replicas=256,cores=logical,numa=off", "f")
          .ok());
}

TEST(ThreadProfileTest, BadValuesNameTheFieldAndWhatIsAllowed) {
  const struct {
    const char* value;
    const char* says;
  } kBad[] = {
      {"fastest", "'fastest' is not a profile name or key=value list"},
      {"intra=0,inter=1", "has intra=0, not 1..1024"},
      {"intra=2,inter=2000", "has inter=2000, not 1..1024"},
      {"intra=2", "needs both intra= and inter="},
      {"intra=2,inter=1,pin=yes", "has pin=yes, not on or off"},
      {"intra=2,inter=1,intra=3", "sets intra twice"},
      {"intra=1,inter=1,replicas=0", "has replicas=0, not 1..256"},
      {"intra=1,inter=1,replicas=x", "has replicas=x, not 1..256"},
      {"intra=2,inter=1,pools=2", "has the unknown key 'pools'"},
      {"intra=2,inter=1,cores=smt", "has cores=smt, not physical or logical"},
      {"intra=2,inter=1,numa=1", "has numa=1, not on or off"},
      {"", "is not a profile name or key=value list"},
  };
  for (const auto& bad : kBad) {
    absl::StatusOr<ThreadProfile> p = ParseThreadProfile(bad.value, "stack.threads[0]");
    ASSERT_FALSE(p.ok()) << bad.value;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(bad.says)) << bad.value;
    EXPECT_THAT(p.status().message(), HasSubstr("stack.threads[0]: "));
    EXPECT_THAT(p.status().message(),
                HasSubstr("allowed: libtorch, intel, tensorflow, guideline or intra=T,inter=I"));
  }
}

TEST(ThreadProfileTest, IsAStackSetting) {
  EXPECT_TRUE(ValidateStackKey("threads", "stack.threads").ok());
  EXPECT_TRUE(ValidateStackKeyValue("threads", "intra=2,inter=1", "stack.threads").ok());
  EXPECT_FALSE(ValidateStackKeyValue("threads", "all", "stack.threads").ok());
  EXPECT_THAT(std::string(ValidateStackKey("thread", "stack.thread").message()),
              HasSubstr("threads (libtorch, intel, tensorflow, guideline or"));
}

}  // namespace
}  // namespace paradnn::platform
