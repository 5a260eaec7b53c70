#include "model/op_profile.h"

#include <gtest/gtest.h>

#include <vector>

namespace paradnn::model {
namespace {

ProfileEvent Push(uint64_t handle, const std::string& name, int64_t ns, double flops = 0,
                  const std::string& shapes = "[[2, 2]]") {
  return {true, handle, name, shapes, ns, flops};
}
ProfileEvent Pop(uint64_t handle, int64_t ns) { return {false, handle, "", "", ns, 0}; }

TEST(OpProfileTest, SelfTimeExcludesNestedRangesAndIsPerStep) {
  // Two steps of: linear [0, 100) containing addmm [10, 70) containing
  // resolve_conj [20, 30); plus relu [100, 120).
  std::vector<ProfileEvent> thread;
  for (int64_t base : {0, 1000}) {
    thread.push_back(Push(base + 1, "aten::linear", base));
    thread.push_back(Push(base + 2, "aten::addmm", base + 10, 8.0));
    thread.push_back(Push(base + 3, "aten::resolve_conj", base + 20));
    thread.push_back(Pop(base + 3, base + 30));
    thread.push_back(Pop(base + 2, base + 70));
    thread.push_back(Pop(base + 1, base + 100));
    thread.push_back(Push(base + 4, "aten::relu", base + 100));
    thread.push_back(Pop(base + 4, base + 120));
  }
  const std::vector<v1::OpProfile> ops =
      AggregateProfile({thread}, /*steps=*/2, /*step_seconds=*/200e-9, 0);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].name(), "aten::addmm");  // 50 ns self
  EXPECT_DOUBLE_EQ(ops[0].self_seconds(), 50e-9);
  EXPECT_DOUBLE_EQ(ops[0].total_seconds(), 60e-9);
  EXPECT_DOUBLE_EQ(ops[0].self_share(), 0.25);
  EXPECT_DOUBLE_EQ(ops[0].flops(), 8.0);
  EXPECT_EQ(ops[0].calls(), 1);
  EXPECT_EQ(ops[0].input_shapes(), "[[2, 2]]");
  EXPECT_EQ(ops[1].name(), "aten::linear");  // 100 - 60 = 40 ns self
  EXPECT_DOUBLE_EQ(ops[1].self_seconds(), 40e-9);
  EXPECT_DOUBLE_EQ(ops[1].total_seconds(), 100e-9);
  EXPECT_EQ(ops[2].name(), "aten::relu");
  EXPECT_EQ(ops[3].name(), "aten::resolve_conj");
  EXPECT_DOUBLE_EQ(ops[3].self_seconds(), 10e-9);

  EXPECT_EQ(AggregateProfile({thread}, 2, 200e-9, 2).size(), 2u);
}

TEST(OpProfileTest, GroupsByShapeAndThreadsAreSeparateStacks) {
  std::vector<ProfileEvent> main_thread = {Push(1, "aten::mm", 0, 0, "[[4, 4]]"), Pop(1, 10),
                                           Push(2, "aten::mm", 10, 0, "[[8, 8]]"), Pop(2, 40)};
  // Another thread: a range left open is dropped, a pop without a push too.
  std::vector<ProfileEvent> other_thread = {Push(5, "aten::mm", 0, 0, "[[4, 4]]"), Pop(5, 30),
                                            Push(6, "aten::add", 30), Pop(99, 35)};
  const std::vector<v1::OpProfile> ops = AggregateProfile({main_thread, other_thread}, 1, 1e-6, 0);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].input_shapes(), "[[4, 4]]");
  EXPECT_DOUBLE_EQ(ops[0].self_seconds(), 40e-9);
  EXPECT_EQ(ops[0].calls(), 2);
  EXPECT_EQ(ops[1].input_shapes(), "[[8, 8]]");

  const std::vector<v1::OpProfile> by_name = SumByName(ops);
  ASSERT_EQ(by_name.size(), 1u);
  EXPECT_EQ(by_name[0].calls(), 3);
  EXPECT_DOUBLE_EQ(by_name[0].self_seconds(), 70e-9);
}

TEST(OpProfileTest, FormatsShapes) {
  EXPECT_EQ(FormatShapes({{64, 1024}, {1024}, {}}), "[[64, 1024], [1024], []]");
  EXPECT_EQ(FormatShapes({}), "[]");
}

}  // namespace
}  // namespace paradnn::model
