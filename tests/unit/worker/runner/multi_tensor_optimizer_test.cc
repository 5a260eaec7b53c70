#include "worker/runner/multi_tensor_optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace paradnn::runner {
namespace {

// Parameters of mixed shapes; `big` elements in the last one (a large one
// makes MultiTensorOptimizer split its update into groups).
std::vector<torch::Tensor> MakeParameters(int64_t big, torch::ScalarType dtype) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{32, 16}, {16}, {3, 5, 7}, {1}, {big}}) {
    params.push_back(torch::randn(shape).to(dtype).requires_grad_(true));
  }
  return params;
}

std::vector<torch::Tensor> Clones(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// Sets the same pseudo-random gradient on both sets for `step`; parameter
// `skip` (-1: none) gets no gradient, as an unused parameter would.
void SetGradients(std::vector<torch::Tensor>& a, std::vector<torch::Tensor>& b, int step,
                  int skip) {
  for (size_t i = 0; i < a.size(); ++i) {
    a[i].mutable_grad().reset();
    b[i].mutable_grad().reset();
    if (static_cast<int>(i) == skip) continue;
    torch::manual_seed(100 * step + static_cast<int>(i));
    torch::Tensor grad = torch::randn(a[i].sizes()).to(a[i].scalar_type());
    a[i].mutable_grad() = grad.clone();
    b[i].mutable_grad() = grad.clone();
  }
}

struct Case {
  std::string name;
  MultiTensorOptions options;
  std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)> reference;
};

std::vector<Case> Cases() {
  MultiTensorOptions rmsprop;
  rmsprop.kind = MultiTensorOptions::kRmsProp;
  rmsprop.lr = 0.1;
  rmsprop.alpha = 0.9;
  rmsprop.momentum = 0.9;
  rmsprop.eps = 1.0;
  MultiTensorOptions rmsprop_plain = rmsprop;
  rmsprop_plain.momentum = 0;
  MultiTensorOptions sgd;
  sgd.kind = MultiTensorOptions::kSgd;
  sgd.lr = 0.1;
  MultiTensorOptions momentum = sgd;
  momentum.momentum = 0.9;
  return {
      {"rmsprop", rmsprop,
       [](std::vector<torch::Tensor> p) -> std::unique_ptr<torch::optim::Optimizer> {
         return std::make_unique<torch::optim::RMSprop>(
             p, torch::optim::RMSpropOptions(0.1).alpha(0.9).momentum(0.9).eps(1.0));
       }},
      {"rmsprop without momentum", rmsprop_plain,
       [](std::vector<torch::Tensor> p) -> std::unique_ptr<torch::optim::Optimizer> {
         return std::make_unique<torch::optim::RMSprop>(
             p, torch::optim::RMSpropOptions(0.1).alpha(0.9).eps(1.0));
       }},
      {"sgd", sgd,
       [](std::vector<torch::Tensor> p) -> std::unique_ptr<torch::optim::Optimizer> {
         return std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.1));
       }},
      {"sgd with momentum", momentum,
       [](std::vector<torch::Tensor> p) -> std::unique_ptr<torch::optim::Optimizer> {
         return std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.1).momentum(0.9));
       }},
  };
}

// Steps both optimizers `steps` times; parameter 1 has no gradient on steps
// 0 and 2, so its state starts late (as torch::optim starts it).
void ExpectSameUpdates(int64_t big, torch::ScalarType dtype, int64_t group_bytes) {
  for (Case c : Cases()) {
    SCOPED_TRACE(c.name);
    c.options.group_bytes = group_bytes;
    std::vector<torch::Tensor> ours = MakeParameters(big, dtype);
    std::vector<torch::Tensor> theirs = Clones(ours);
    MultiTensorOptimizer multi_tensor(ours, c.options);
    std::unique_ptr<torch::optim::Optimizer> reference = c.reference(theirs);
    for (int step = 0; step < 5; ++step) {
      SetGradients(ours, theirs, step, step % 2 == 0 ? 1 : -1);
      multi_tensor.Step();
      reference->step();
      for (size_t i = 0; i < ours.size(); ++i) {
        ASSERT_TRUE(torch::equal(ours[i], theirs[i])) << "parameter " << i << " after step " << step;
      }
    }
    // The parameters moved: the comparison was not of two no-ops.
    EXPECT_FALSE(torch::equal(ours[0], MakeParameters(big, dtype)[0]));
  }
}

constexpr int64_t kOneAtATime = 0;
constexpr int64_t k64MiB = int64_t{64} << 20;

TEST(MultiTensorOptimizerTest, OneParameterAtATimeEqualsTorchOptimBitForBit) {
  ExpectSameUpdates(/*big=*/64, torch::kFloat32, kOneAtATime);
}

TEST(MultiTensorOptimizerTest, MultiTensorEqualsTorchOptimBitForBit) {
  ExpectSameUpdates(/*big=*/64, torch::kFloat32, k64MiB);
}

TEST(MultiTensorOptimizerTest, MultiTensorEqualsTorchOptimAcrossGroups) {
  // 17 M float32 elements (68 MB): over the 64 MiB bound, a group of its own.
  ExpectSameUpdates(/*big=*/17'000'000, torch::kFloat32, k64MiB);
}

TEST(MultiTensorOptimizerTest, BothPathsEqualTorchOptimInBFloat16) {
  ExpectSameUpdates(/*big=*/64, torch::kBFloat16, kOneAtATime);
  ExpectSameUpdates(/*big=*/64, torch::kBFloat16, k64MiB);
}

TEST(MultiTensorOptimizerTest, TheDefaultEqualsTorchOptimOnTheCpu) {
  EXPECT_EQ(MultiTensorOptions().group_bytes, MultiTensorOptions::kByDevice);
  ExpectSameUpdates(/*big=*/64, torch::kFloat32, MultiTensorOptions::kByDevice);
}

TEST(MultiTensorOptimizerTest, NoGradientsNoChange) {
  std::vector<torch::Tensor> params = MakeParameters(8, torch::kFloat32);
  std::vector<torch::Tensor> before = Clones(params);
  MultiTensorOptimizer optimizer(params, Cases()[0].options);
  optimizer.Step();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], before[i]));
}

}  // namespace
}  // namespace paradnn::runner
