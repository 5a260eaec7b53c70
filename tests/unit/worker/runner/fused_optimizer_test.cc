#include "worker/runner/fused_optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::OptimizerKind;
namespace {

// Parameters of mixed shapes; the last is large enough (300,000 elements)
// that its update is split across threads.
std::vector<torch::Tensor> MakeParameters(torch::ScalarType dtype) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{32, 16}, {16}, {3, 5, 7}, {1}, {300000}}) {
    params.push_back(torch::randn(shape).to(dtype).requires_grad_(true));
  }
  return params;
}

std::vector<torch::Tensor> Clones(const std::vector<torch::Tensor>& params,
                                  torch::ScalarType dtype) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) {
    out.push_back(p.detach().to(dtype).clone().requires_grad_(true));
  }
  return out;
}

// Gives every set the same pseudo-random gradient for `step` (in each set's
// dtype); parameter `skip` (-1: none) gets none, as an unused one would.
void SetGradients(std::vector<std::vector<torch::Tensor>*> sets, int step, int skip) {
  const size_t n = sets.front()->size();
  for (size_t i = 0; i < n; ++i) {
    torch::manual_seed(100 * step + static_cast<int>(i));
    const torch::Tensor grad = torch::randn((*sets.front())[i].sizes());
    for (std::vector<torch::Tensor>* set : sets) {
      torch::Tensor& p = (*set)[i];
      p.mutable_grad().reset();
      if (static_cast<int>(i) != skip) p.mutable_grad() = grad.to(p.scalar_type()).clone();
    }
  }
}

// The largest |a - b| over every parameter, in float32.
double MaxDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i].detach().to(torch::kFloat32) - b[i].detach().to(torch::kFloat32))
                                .abs()
                                .max()
                                .item<double>());
  }
  return worst;
}

// The mean |a - b| over every element of every parameter, in float32.
double MeanDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double sum = 0;
  int64_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sum += (a[i].detach().to(torch::kFloat64) - b[i].detach().to(torch::kFloat64))
               .abs()
               .sum()
               .item<double>();
    count += a[i].numel();
  }
  return sum / static_cast<double>(count);
}

const OptimizerKind kKinds[] = {OptimizerKind::kRmsProp, OptimizerKind::kMomentum,
                                OptimizerKind::kSgd};

std::string KindName(OptimizerKind kind) {
  return kind == OptimizerKind::kRmsProp    ? "rmsprop"
         : kind == OptimizerKind::kMomentum ? "momentum"
                                            : "sgd";
}

TEST(FusedOptimizerTest, Float32UpdateMatchesTorchOptimToRounding) {
  for (OptimizerKind kind : kKinds) {
    SCOPED_TRACE(KindName(kind));
    std::vector<torch::Tensor> fused_params = MakeParameters(torch::kFloat32);
    std::vector<torch::Tensor> torch_params = Clones(fused_params, torch::kFloat32);
    const std::vector<torch::Tensor> initial = Clones(fused_params, torch::kFloat32);
    std::unique_ptr<TrainingOptimizer> fused = MakeTrainingOptimizer(kind, fused_params);
    ASSERT_TRUE(fused->fused());
    std::unique_ptr<torch::optim::Optimizer> reference = MakeTorchOptimizer(kind, torch_params);
    for (int step = 0; step < 6; ++step) {
      // Parameter 2 has no gradient at step 1 (and then starts late).
      SetGradients({&fused_params, &torch_params}, step, step == 1 ? 2 : -1);
      fused->Step();
      reference->step();
    }
    // The update moved the weights by far more than the two differ.
    EXPECT_GT(MaxDifference(fused_params, initial), 0.1);
    EXPECT_LT(MaxDifference(fused_params, torch_params), 2e-6);
  }
}

TEST(FusedOptimizerTest, ParameterWithoutGradientIsLeftAlone) {
  for (OptimizerKind kind : kKinds) {
    SCOPED_TRACE(KindName(kind));
    std::vector<torch::Tensor> params = MakeParameters(torch::kFloat32);
    const std::vector<torch::Tensor> initial = Clones(params, torch::kFloat32);
    std::unique_ptr<TrainingOptimizer> fused = MakeTrainingOptimizer(kind, params);
    SetGradients({&params}, 0, /*skip=*/3);
    fused->Step();
    EXPECT_TRUE(torch::equal(params[3].detach(), initial[3]));
    EXPECT_FALSE(torch::equal(params[0].detach(), initial[0]));
  }
}

TEST(FusedOptimizerTest, BFloat16RoundsOncePerStep) {
  // The fused update of bfloat16 weights computes in float32 and rounds
  // once; torch::optim on bfloat16 rounds after every operation. Both are
  // held against torch::optim in float32 from the same start.
  for (OptimizerKind kind : kKinds) {
    SCOPED_TRACE(KindName(kind));
    std::vector<torch::Tensor> fused_params = MakeParameters(torch::kBFloat16);
    std::vector<torch::Tensor> per_operation_params = Clones(fused_params, torch::kBFloat16);
    std::vector<torch::Tensor> float_params = Clones(fused_params, torch::kFloat32);
    std::unique_ptr<TrainingOptimizer> fused = MakeTrainingOptimizer(kind, fused_params);
    ASSERT_TRUE(fused->fused());
    std::unique_ptr<torch::optim::Optimizer> per_operation =
        MakeTorchOptimizer(kind, per_operation_params);
    std::unique_ptr<torch::optim::Optimizer> reference = MakeTorchOptimizer(kind, float_params);
    for (int step = 0; step < 6; ++step) {
      SetGradients({&fused_params, &per_operation_params, &float_params}, step, -1);
      fused->Step();
      per_operation->step();
      reference->step();
    }
    for (const torch::Tensor& p : fused_params) EXPECT_EQ(p.scalar_type(), torch::kBFloat16);
    // bfloat16 keeps 8 significant bits: weights of a few units round by
    // up to 2^-6.
    EXPECT_LT(MaxDifference(fused_params, float_params), 0.1);
    const double fused_error = MeanDifference(fused_params, float_params);
    const double per_operation_error = MeanDifference(per_operation_params, float_params);
    std::printf("%s: mean |bfloat16 - float32|: fused %.3g, per operation %.3g\n",
                KindName(kind).c_str(), fused_error, per_operation_error);
    // Plain SGD rounds once either way (1 % allows for a fused multiply-add).
    EXPECT_LE(fused_error, per_operation_error * 1.01);
  }
}

TEST(FusedOptimizerTest, GradientInAnotherLayoutIsUpdatedElementForElement) {
  // A gradient whose strides differ from its parameter's (a transposed
  // view) is copied into the parameter's layout first.
  torch::Tensor fused_param = torch::randn({64, 48}).requires_grad_(true);
  torch::Tensor torch_param = fused_param.detach().clone().requires_grad_(true);
  std::vector<torch::Tensor> fused_params{fused_param};
  std::vector<torch::Tensor> torch_params{torch_param};
  std::unique_ptr<TrainingOptimizer> fused =
      MakeTrainingOptimizer(OptimizerKind::kRmsProp, fused_params);
  std::unique_ptr<torch::optim::Optimizer> reference =
      MakeTorchOptimizer(OptimizerKind::kRmsProp, torch_params);
  for (int step = 0; step < 3; ++step) {
    const torch::Tensor grad_t = torch::randn({48, 64});
    fused_params[0].mutable_grad() = grad_t.t();  // strides {1, 64}
    torch_params[0].mutable_grad() = grad_t.t().contiguous();
    fused->Step();
    reference->step();
  }
  EXPECT_LT(MaxDifference(fused_params, torch_params), 2e-6);
}

TEST(FusedOptimizerTest, DtypesWithoutAFusedKernelUseTorchOptim) {
  std::vector<torch::Tensor> params = MakeParameters(torch::kFloat64);
  const std::vector<torch::Tensor> initial = Clones(params, torch::kFloat64);
  std::unique_ptr<TrainingOptimizer> optimizer =
      MakeTrainingOptimizer(OptimizerKind::kRmsProp, params);
  EXPECT_FALSE(optimizer->fused());
  SetGradients({&params}, 0, -1);
  optimizer->Step();
  EXPECT_GT(MaxDifference(params, initial), 0.01);
  for (const torch::Tensor& p : params) EXPECT_EQ(p.scalar_type(), torch::kFloat64);
}

}  // namespace
}  // namespace paradnn::runner
