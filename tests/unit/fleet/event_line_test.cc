#include "fleet/event_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace paradnn::fleet {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(EventLineTest, ReadsEveryKindsFields) {
  absl::StatusOr<v1::TrainingEvent> e =
      ParseEventLine(R"({"v":1,"job":"j1","event":"submitted","time":10.5,"framework":"pytorch",)"
                     R"("model":"fc","precision":"","model_params":{"layer":4,"batch":64}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->job(), "j1");
  EXPECT_EQ(e->time(), 10.5);
  EXPECT_EQ(e->attributes().at("framework"), "pytorch");
  EXPECT_EQ(e->attributes().count("precision"), 0u);  // empty = absent
  EXPECT_EQ(e->model_params().at("batch"), 64);

  e = ParseEventLine(
      R"({"v":1,"job":"j1","event":"step","start":11,"end":11.25,"step":1,"examples":64,)"
      R"("flops":1e12})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(IsSpanEvent(e->event()));
  EXPECT_EQ(EventTime(*e), 11);
  EXPECT_EQ(e->end(), 11.25);
  EXPECT_EQ(e->examples(), 64);
  EXPECT_TRUE(e->has_flops());
  EXPECT_FALSE(e->has_bytes());

  e = ParseEventLine(R"({"v":1,"job":"j1","event":"requested","time":10,"device_kind":"h100",)"
                     R"("devices":8})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->device_kind(), "h100");
  EXPECT_EQ(e->devices(), 8);
  e = ParseEventLine(R"({"v":1,"job":"j1","event":"ended","time":99,"status":"preempted"})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->status(), "preempted");
  e = ParseEventLine(R"({"v":1,"job":"j1","event":"checkpoint_restore","start":5,"end":6,)"
                     R"("step":0})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->step(), 0);
}

TEST(EventLineTest, BadLinesNameTheFieldAndWhatIsAllowed) {
  const struct {
    const char* line;
    const char* says;
  } kBad[] = {
      {R"({"v":1,"job":"j","event":"submitted","time":1)", "line: is not JSON"},
      {R"([1,2])", "line: is not a JSON object"},
      {R"({"job":"j","event":"started","time":1})", "v: missing"},
      {R"({"v":2,"job":"j","event":"started","time":1})", "v: 2 is not a version"},
      {R"({"v":1,"job":"j","event":"stepp","time":1})", "event: \"stepp\" is not an event kind"},
      {R"({"v":1,"event":"started","time":1})", "job: missing"},
      {R"({"v":1,"job":"","event":"started","time":1})", "job: has 0 characters"},
      {"{\"v\":1,\"job\":\"a\\u0007b\",\"event\":\"started\",\"time\":1}",
       "job: holds a control character"},
      {R"({"v":1,"job":"j","event":"started"})", "time: missing"},
      {R"({"v":1,"job":"j","event":"started","time":-1})", "time: -1 is not a finite number"},
      {R"({"v":1,"job":"j","event":"started","time":"noon"})", "time: \"noon\" is not a finite"},
      {R"({"v":1,"job":"j","event":"init","time":1})", "time: is not a field of init"},
      {R"({"v":1,"job":"j","event":"init","start":2,"end":1})",
       "end: 1.000000 is before start 2.000000"},
      {R"({"v":1,"job":"j","event":"started","time":1,"devices":2})",
       "devices: is not a field of started"},
      {R"({"v":1,"job":"j","event":"granted","time":1,"devices":0})", "devices: 0 is below 1"},
      {R"({"v":1,"job":"j","event":"granted","time":1,"devices":2.0})",
       "devices: 2.0 is not an integer"},
      {R"({"v":1,"job":"j","event":"requested","time":1,"devices":2})", "device_kind: missing"},
      {R"({"v":1,"job":"j","event":"step","start":1,"end":2,"step":0,"examples":1})",
       "step: 0 is below 1"},
      {R"({"v":1,"job":"j","event":"step","start":1,"end":2,"step":1})", "examples: missing"},
      {R"({"v":1,"job":"j","event":"step","start":1,"end":2,"step":1,"examples":1,"flops":-5})",
       "flops: -5 is not a finite number >= 0"},
      {R"({"v":1,"job":"j","event":"ended","time":1,"status":"done"})",
       "status: \"done\" is not a status; allowed: completed, failed, cancelled or preempted"},
      {R"({"v":1,"job":"j","event":"submitted","time":1,"model_params":{"layer":"four"}})",
       "model_params.layer: \"four\" is not a finite number >= 0"},
  };
  for (const auto& bad : kBad) {
    absl::StatusOr<v1::TrainingEvent> e = ParseEventLine(bad.line);
    ASSERT_FALSE(e.ok()) << bad.line;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(e.status().message()), StartsWith(bad.says)) << bad.line;
    EXPECT_THAT(std::string(e.status().message()), HasSubstr("; allowed: ")) << bad.line;
  }
}

TEST(EventLineTest, CodePointsNotBytesCountTowardsLengths) {
  std::string job;
  for (int i = 0; i < 256; ++i) job += "\xc3\xa9";  // é, two bytes each
  EXPECT_TRUE(ParseEventLine(R"({"v":1,"job":")" + job + R"(","event":"started","time":1})").ok());
  EXPECT_FALSE(
      ParseEventLine(R"({"v":1,"job":")" + job + R"(x","event":"started","time":1})").ok());
  // U+0085 (NEL) is a control character too.
  EXPECT_THAT(std::string(ParseEventLine("{\"v\":1,\"job\":\"a\xc2\x85\",\"event\":\"started\","
                                         "\"time\":1}")
                              .status()
                              .message()),
              HasSubstr("control character"));
}

TEST(EventLineTest, TheSameEventHasTheSameKeyWhateverTheFieldOrder) {
  const auto a = ParseEventLine(R"({"v":1,"job":"j","event":"granted","time":1,"devices":2})");
  const auto b = ParseEventLine(R"({"devices":2,"time":1,"event":"granted","job":"j","v":1})");
  const auto c = ParseEventLine(R"({"v":1,"job":"j","event":"granted","time":1,"devices":3})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(EventKey(*a), EventKey(*b));
  EXPECT_NE(EventKey(*a), EventKey(*c));
}

}  // namespace
}  // namespace paradnn::fleet
