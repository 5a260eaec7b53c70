// The CNN family in LibTorch (docs/models.md "CNN"): ResNet v1 with
// residual or bottleneck blocks, trained with softmax cross-entropy on one
// synthetic batch. Tensors are contiguous NCHW (the original ParaDnn used
// NHWC; docs/models.md allows any memory format).
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_CNN_H_
#define PARADNN_WORKER_RUNNER_MODELS_CNN_H_

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "model/families/cnn.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CnnBlockFn;
using model::CnnShape;
using model::ModelSpec;

// Called after every convolution with the conv and its actual input and
// output (tests use it to count MACs from real tensor shapes).
using CnnConvObserver = std::function<void(
    const torch::nn::Conv2dImpl& conv, const torch::Tensor& input, const torch::Tensor& output)>;

// One residual or bottleneck block: the main path of convs, each followed by
// BN and (all but the last) ReLU, plus an optional projection shortcut
// conv 1x1(stride) -> BN; then add -> ReLU.
class CnnBlockImpl : public torch::nn::Module {
 public:
  CnnBlockImpl(CnnBlockFn block_fn, int64_t in_channels, int64_t width, int64_t stride,
               bool projection);
  torch::Tensor forward(const torch::Tensor& x, const CnnConvObserver& observer);
  int64_t out_channels() const { return out_channels_; }

 private:
  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> bns_;
  torch::nn::Conv2d shortcut_conv_{nullptr};
  torch::nn::BatchNorm2d shortcut_bn_{nullptr};
  int64_t out_channels_ = 0;
};
TORCH_MODULE(CnnBlock);

// stem conv 7x7/2 (no bias) -> BN -> ReLU -> max-pool 3x3/2 pad 1 -> four
// groups (filter x 1, 2, 4, 8 channels, strides 1, 2, 2, 2; the first block
// of each group has a projection shortcut) -> avg-pool 7x7/1 -> flatten ->
// Linear(output). BN: eps 1e-5, momentum 0.1, affine.
class CnnNetImpl : public torch::nn::Module {
 public:
  explicit CnnNetImpl(const CnnShape& shape);
  torch::Tensor forward(const torch::Tensor& images);
  // Observer of every convolution (none by default).
  void set_conv_observer(CnnConvObserver observer) { observer_ = std::move(observer); }

 private:
  torch::nn::Conv2d stem_conv_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<CnnBlock> blocks_;
  torch::nn::Linear head_{nullptr};
  CnnConvObserver observer_;
};
TORCH_MODULE(CnnNet);

// LibTorch's default initialization (convs and Linear: Kaiming-uniform
// a = sqrt(5); BN gamma 1, beta 0); images [batch, 3, image, image] uniform
// in [0, 1), labels uniform in [0, output).
TrainingProblem BuildCnnProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_CNN_H_
