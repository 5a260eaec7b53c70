#include "fleet/job_goodput.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleet/event_line.h"
#include "fleet/model_cost.h"

namespace paradnn::fleet {
namespace {

std::vector<v1::TrainingEvent> Events(const std::vector<std::string>& lines) {
  std::vector<v1::TrainingEvent> events;
  for (const std::string& line : lines) {
    absl::StatusOr<v1::TrainingEvent> e = ParseEventLine("{\"v\":1,\"job\":\"j\"," + line + "}");
    EXPECT_TRUE(e.ok()) << line << ": " << e.status();
    if (e.ok()) events.push_back(*e);
  }
  return events;
}

std::optional<DeviceRoof> TeraflopRoof(const std::string& kind, const std::string&) {
  if (kind != "h100") return std::nullopt;
  return DeviceRoof{1e12, 0};
}

// Two devices requested, granted one at a time; a preemption loses step 3,
// which runs again after the restore to step 2 (docs/fleet-events.md).
std::vector<v1::TrainingEvent> PreemptedJob() {
  return Events({
      R"("event":"ended","time":80,"status":"completed")",  // any order
      R"("event":"submitted","time":0,"framework":"jax")",
      R"("event":"requested","time":0,"device_kind":"h100","devices":2)",
      R"("event":"granted","time":10,"devices":1)",
      R"("event":"granted","time":20,"devices":1)",
      R"("event":"init","start":20,"end":30)",
      R"("event":"compile","start":30,"end":35)",
      R"("event":"step","start":35,"end":40,"step":1,"examples":8,"flops":1e12)",
      R"("event":"step","start":40,"end":45,"step":2,"examples":8,"flops":1e12)",
      R"("event":"data_wait","start":40,"end":41)",
      R"("event":"checkpoint_save","start":45,"end":47,"step":2)",
      R"("event":"step","start":47,"end":52,"step":3,"examples":8,"flops":1e12)",
      R"("event":"preempted","time":52)",
      R"("event":"released","time":52,"devices":2)",
      R"("event":"granted","time":60,"devices":2)",
      R"("event":"init","start":60,"end":64)",
      R"("event":"checkpoint_restore","start":64,"end":66,"step":2)",
      R"("event":"step","start":66,"end":71,"step":3,"examples":8,"flops":1e12)",
      R"("event":"step","start":71,"end":76,"step":4,"examples":8,"flops":1e12)",
  });
}

TEST(JobGoodputTest, EveryHeldSecondHasOneCauseAndTheSharesFollow) {
  const DecomposedJob d = DecomposeJob(PreemptedJob(), TeraflopRoof, nullptr);
  ASSERT_TRUE(d.incomplete.empty()) << d.incomplete;
  const v1::JobGoodput& g = d.goodput;
  EXPECT_EQ(g.job(), "j");
  EXPECT_EQ(g.device_kind(), "h100");
  EXPECT_EQ(g.devices(), 2);
  EXPECT_EQ(g.status(), "completed");
  EXPECT_EQ(g.attributes().at("framework"), "jax");
  EXPECT_DOUBLE_EQ(g.elapsed_s(), 80);
  // Held from the second grant to the release, and from the re-grant.
  EXPECT_DOUBLE_EQ(g.holding_s(), 32 + 20);
  const v1::GoodputParts& p = g.parts();
  EXPECT_DOUBLE_EQ(p.productive_s(), 5 + 4 + 5 + 5);  // step 2 less its data wait
  EXPECT_DOUBLE_EQ(p.initialization_s(), 10 + 4);
  EXPECT_DOUBLE_EQ(p.compilation_s(), 5);
  EXPECT_DOUBLE_EQ(p.data_loading_s(), 1);
  EXPECT_DOUBLE_EQ(p.checkpointing_s(), 2 + 2);
  EXPECT_DOUBLE_EQ(p.lost_progress_s(), 5);  // the first step 3
  EXPECT_DOUBLE_EQ(p.other_s(), 4);          // 76..80
  EXPECT_EQ(g.kept_steps(), 4);
  EXPECT_EQ(g.lost_steps(), 1);
  EXPECT_DOUBLE_EQ(g.kept_span_s(), 20);
  // 1e12 FLOPs over two devices of 1e12 FLOP/s: 0.5 s ideal per step.
  EXPECT_DOUBLE_EQ(g.ideal_s(), 2);
  EXPECT_EQ(g.flops_source(), "the job's");
  EXPECT_DOUBLE_EQ(g.scheduling(), 52.0 / 80);
  EXPECT_DOUBLE_EQ(g.runtime(), 19.0 / 52);
  EXPECT_DOUBLE_EQ(g.program(), 0.1);
  EXPECT_DOUBLE_EQ(g.mpg(), 52.0 / 80 * 19.0 / 52 * 0.1);
}

TEST(JobGoodputTest, AFailedJobLosesWhatItDidNotSave) {
  const DecomposedJob d =
      DecomposeJob(Events({
                       R"("event":"submitted","time":0)",
                       R"("event":"requested","time":0,"device_kind":"a100","devices":1)",
                       R"("event":"granted","time":0,"devices":1)",
                       R"("event":"step","start":0,"end":1,"step":1,"examples":8)",
                       R"("event":"checkpoint_save","start":1,"end":2,"step":1)",
                       R"("event":"step","start":2,"end":3,"step":2,"examples":8)",
                       R"("event":"step","start":3,"end":4,"step":3,"examples":8)",
                       R"("event":"failed","time":4,"reason":"NaN loss")",
                       R"("event":"ended","time":5,"status":"failed")",
                   }),
                   TeraflopRoof, nullptr);
  const v1::JobGoodput& g = d.goodput;
  EXPECT_EQ(g.kept_steps(), 1);
  EXPECT_EQ(g.lost_steps(), 2);
  EXPECT_DOUBLE_EQ(g.parts().lost_progress_s(), 2);
  EXPECT_DOUBLE_EQ(g.parts().other_s(), 1);
  EXPECT_DOUBLE_EQ(g.runtime(), 0.2);
  // No roof for a100: program (and so MPG) blank, and why.
  EXPECT_FALSE(g.has_program());
  EXPECT_FALSE(g.has_mpg());
  EXPECT_EQ(g.program_blank(), "no float32 roof for device kind a100");
}

TEST(JobGoodputTest, JobsWithoutSubmittedOrRequestedAreIncomplete) {
  EXPECT_EQ(DecomposeJob(Events({R"("event":"started","time":1)"}), nullptr, nullptr).incomplete,
            "no submitted event");
  EXPECT_EQ(DecomposeJob(Events({R"("event":"submitted","time":1)"}), nullptr, nullptr).incomplete,
            "no requested event");
}

TEST(JobGoodputTest, ParadnnCountsReplaceTheJobsFlopsForItsModels) {
  std::vector<v1::TrainingEvent> events = Events({
      R"("event":"submitted","time":0,"model":"fc",)"
      R"("model_params":{"layer":2,"node":16,"input":8,"output":4,"batch":10})",
      R"("event":"requested","time":0,"device_kind":"h100","devices":1)",
      R"("event":"granted","time":0,"devices":1)",
      R"("event":"step","start":0,"end":1,"step":1,"examples":10,"flops":99)",
      R"("event":"ended","time":1,"status":"completed")",
  });
  const std::optional<StepCost> cost = ParadnnStepCost(events[0]);
  ASSERT_TRUE(cost.has_value());
  // 6 x MACs (8*16 + 16*16 + 16*4 = 448) x batch 10.
  EXPECT_DOUBLE_EQ(cost->flops, 6 * 448 * 10);
  EXPECT_GT(cost->bytes, 0);
  const DecomposedJob d = DecomposeJob(events, TeraflopRoof, ParadnnStepCost);
  EXPECT_EQ(d.goodput.flops_source(), "paradnn counts (fc)");
  EXPECT_DOUBLE_EQ(d.goodput.ideal_s(), 6 * 448 * 10 / 1e12);

  v1::TrainingEvent unknown = events[0];
  (*unknown.mutable_attributes())["model"] = "acme-lm";
  EXPECT_FALSE(ParadnnStepCost(unknown).has_value());
  v1::TrainingEvent fractional = events[0];
  (*fractional.mutable_model_params())["batch"] = 10.5;
  EXPECT_FALSE(ParadnnStepCost(fractional).has_value());
}

TEST(JobGoodputTest, AggregatesWeighByDeviceTime) {
  v1::JobGoodput big, small;
  big.set_devices(8);
  big.set_elapsed_s(100);
  big.set_holding_s(50);
  big.mutable_parts()->set_productive_s(25);
  big.set_scheduling(0.5);
  big.set_runtime(0.5);
  big.set_kept_span_s(30);
  big.set_ideal_s(15);
  big.set_program(0.5);
  small.set_devices(1);
  small.set_elapsed_s(100);
  small.set_holding_s(100);
  small.mutable_parts()->set_productive_s(100);
  small.set_scheduling(1);
  small.set_runtime(1);  // program blank
  const v1::GoodputAggregate a = AggregateGoodput({&big, &small}, "");
  EXPECT_EQ(a.jobs(), 2);
  EXPECT_EQ(a.program_jobs(), 1);
  EXPECT_DOUBLE_EQ(a.scheduling(), (8 * 50 + 100) / 900.0);
  EXPECT_DOUBLE_EQ(a.runtime(), (8 * 25 + 100) / 500.0);
  EXPECT_DOUBLE_EQ(a.program(), 0.5);
  EXPECT_DOUBLE_EQ(a.mpg(), a.scheduling() * a.runtime() * a.program());
  EXPECT_EQ(JobSizeBucket(1), "1");
  EXPECT_EQ(JobSizeBucket(8), "2-8");
  EXPECT_EQ(JobSizeBucket(64), "9-64");
  EXPECT_EQ(JobSizeBucket(65), "65+");
  EXPECT_EQ(UtcDay(1700183080.9), "2023-11-17");
}

}  // namespace
}  // namespace paradnn::fleet
