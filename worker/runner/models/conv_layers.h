// The conv and BatchNorm layers the convolutional families build from
// (cnn, inception): torchvision's conventions.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_CONV_LAYERS_H_
#define PARADNN_WORKER_RUNNER_MODELS_CONV_LAYERS_H_

#include <torch/torch.h>

#include <cstdint>

namespace paradnn::runner {

// A conv without bias (a BatchNorm follows it).
inline torch::nn::Conv2d MakeConv(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                  int64_t padding) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// BatchNorm: eps 1e-5, momentum 0.1, affine.
inline torch::nn::BatchNorm2d MakeBatchNorm(int64_t channels) {
  return torch::nn::BatchNorm2d(
      torch::nn::BatchNorm2dOptions(channels).eps(1e-5).momentum(0.1).affine(true));
}

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_CONV_LAYERS_H_
