#include "worker/runner/models/cnn.h"

#include <memory>
#include <string>
#include <utility>

#include "worker/runner/models/conv_layers.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::CnnBlockFn;
using model::CnnOutputSize;
using model::CnnShape;
using model::CnnShapeOf;
using model::ModelSpec;
namespace {

torch::Tensor RunConv(torch::nn::Conv2d& conv, const torch::Tensor& x,
                      const CnnConvObserver& observer) {
  torch::Tensor y = conv->forward(x);
  if (observer) observer(*conv, x, y);
  return y;
}

}  // namespace

CnnBlockImpl::CnnBlockImpl(CnnBlockFn block_fn, int64_t in_channels, int64_t width, int64_t stride,
                           bool projection) {
  // (kernel, stride, output channels) of the main path's convs.
  struct ConvDef {
    int64_t kernel, stride, out;
  };
  const std::vector<ConvDef> defs =
      block_fn == CnnBlockFn::kResidual
          ? std::vector<ConvDef>{{3, stride, width}, {3, 1, width}}
          : std::vector<ConvDef>{{1, 1, width}, {3, stride, width}, {1, 1, 4 * width}};
  int64_t channels = in_channels;
  for (size_t i = 0; i < defs.size(); ++i) {
    const ConvDef& d = defs[i];
    convs_.push_back(register_module("conv" + std::to_string(i),
                                     MakeConv(channels, d.out, d.kernel, d.stride, d.kernel / 2)));
    bns_.push_back(register_module("bn" + std::to_string(i), MakeBatchNorm(d.out)));
    channels = d.out;
  }
  out_channels_ = channels;
  if (projection) {
    shortcut_conv_ =
        register_module("shortcut_conv", MakeConv(in_channels, out_channels_, 1, stride, 0));
    shortcut_bn_ = register_module("shortcut_bn", MakeBatchNorm(out_channels_));
  }
}

torch::Tensor CnnBlockImpl::forward(const torch::Tensor& x, const CnnConvObserver& observer) {
  torch::Tensor y = x;
  for (size_t i = 0; i < convs_.size(); ++i) {
    y = bns_[i]->forward(RunConv(convs_[i], y, observer));
    // In place, as torchvision's ResNet: BN's backward needs its input, not
    // its output, so ReLU may overwrite the output.
    if (i + 1 < convs_.size()) y.relu_();
  }
  torch::Tensor shortcut = x;
  if (shortcut_conv_) shortcut = shortcut_bn_->forward(RunConv(shortcut_conv_, x, observer));
  return (y + shortcut).relu_();
}

CnnNetImpl::CnnNetImpl(const CnnShape& shape) {
  stem_conv_ = register_module("stem_conv", MakeConv(3, shape.filter, 7, 2, 3));
  stem_bn_ = register_module("stem_bn", MakeBatchNorm(shape.filter));
  int64_t channels = shape.filter;
  for (int64_t g = 0; g < 4; ++g) {
    const int64_t width = shape.filter << g;
    for (int64_t j = 0; j < shape.blocks[g]; ++j) {
      const int64_t stride = (j == 0 && g > 0) ? 2 : 1;
      blocks_.push_back(register_module(
          "group" + std::to_string(g) + "_block" + std::to_string(j),
          CnnBlock(shape.block_fn, channels, width, stride, /*projection=*/j == 0)));
      channels = blocks_.back()->out_channels();
    }
  }
  const int64_t m = CnnOutputSize(shape.image, 7, 2, 3);                // stem
  int64_t side = CnnOutputSize(m, 3, 2, 1);                             // max-pool
  for (int64_t g = 1; g < 4; ++g) side = CnnOutputSize(side, 3, 2, 1);  // strided 3x3 convs
  const int64_t pooled = CnnOutputSize(side, 7, 1, 0);
  head_ = register_module("head", torch::nn::Linear(torch::nn::LinearOptions(
                                      channels * pooled * pooled, shape.output)));
}

torch::Tensor CnnNetImpl::forward(const torch::Tensor& images) {
  torch::Tensor x = stem_bn_->forward(RunConv(stem_conv_, images, observer_)).relu_();
  x = torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
  for (CnnBlock& block : blocks_) x = block->forward(x, observer_);
  x = torch::avg_pool2d(x, /*kernel_size=*/7, /*stride=*/1, /*padding=*/0);
  return head_->forward(x.flatten(1));
}

TrainingProblem BuildCnnProblem(const ModelSpec& spec, const BuildContext& context) {
  const CnnShape shape = CnnShapeOf(spec);
  // Initialized in float32 (LibTorch's initializers), then stored in the
  // weight dtype on the device; images and weights in the memory_format.
  CnnNet model(shape);
  return SyntheticClassificationProblem(
      model.ptr(), [net = model.get()](const torch::Tensor& x) { return net->forward(x); },
      {shape.batch, 3, shape.image, shape.image}, /*input_low=*/0, shape.output, context);
}

}  // namespace paradnn::runner
