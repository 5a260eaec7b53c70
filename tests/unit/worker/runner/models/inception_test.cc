// The inception family in LibTorch: built parameters against the analytic
// counts, branches forked on the inter-op pool giving what they give run
// one after another, and training.
#include "worker/runner/models/inception.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <vector>

#include "model/model_counts.h"
#include "tests/unit/worker/runner/train_losses.h"

namespace paradnn::runner {
namespace {

using model::CountModel;
using model::DescribeSpec;
using model::InceptionShape;
using model::MakeInceptionSpec;
using model::Precision;

TEST(InceptionModelTest, BuiltParametersMatchCounts) {
  for (const InceptionShape& shape :
       {InceptionShape{1, 1, 4, 16, 3, 2}, InceptionShape{2, 4, 8, 33, 10, 2},
        InceptionShape{3, 7, 5, 20, 1000, 1}}) {
    InceptionNet net(shape);
    EXPECT_EQ(CountParameters(*net), CountModel(MakeInceptionSpec(shape)).params())
        << DescribeSpec(MakeInceptionSpec(shape));
  }
}

TEST(InceptionModelTest, ForkedBranchesGiveWhatTheyGiveOneAfterAnother) {
  // As a job with inter_op_threads 2 sets it (once per process, before the
  // pool starts: a test before this one may have started it already).
  try {
    at::set_num_interop_threads(2);
  } catch (const c10::Error&) {
  }
  ASSERT_GE(at::get_num_interop_threads(), 2) << "the inter-op pool started with one thread";
  torch::manual_seed(3);
  InceptionBlock block(/*branches=*/4, /*filter=*/6);
  block->eval();  // running statistics: the same output however often it runs
  const torch::Tensor x = torch::rand({2, 24, 9, 9});
  const torch::Tensor forked = block->forward(x);
  EXPECT_EQ(block->forked_forwards(), 1);
  std::vector<torch::Tensor> parts;
  for (InceptionBranch branch : block->branches()) parts.push_back(branch->forward(x));
  EXPECT_TRUE(torch::equal(forked, torch::cat(parts, 1)));
  // Gradients reach every branch through the forked forward.
  block->train();
  block->forward(x).sum().backward();
  for (const torch::Tensor& p : block->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0);
  }
}

TEST(InceptionModelTest, LossFalls) {
  for (Precision precision : {Precision::kFloat32, Precision::kBFloat16}) {
    const std::vector<double> losses =
        TrainLosses(MakeInceptionSpec(InceptionShape{2, 3, 4, 16, 4, 4}, precision), 20);
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << model::PrecisionName(precision) << ": " << losses.front() << " -> " << losses.back();
  }
}

}  // namespace
}  // namespace paradnn::runner
