// The real-world image classifiers in LibTorch (`resnet50`, `densenet121`,
// `mobilenet_v1`, `squeezenet1_0`; model/families/vision.h describes them). Module
// and parameter names follow VisionLayers() (torchvision's names where
// torchvision has the model), so tests compare every parameter's name and
// shape with the torch-free layer list the counts use.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_VISION_H_
#define PARADNN_WORKER_RUNNER_MODELS_VISION_H_

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "model/families/vision.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::VisionArch;

// A classifier: [N, 3, H, W] images -> [N, output] logits.
class VisionNetImpl : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor images) = 0;
};

// A freshly built float32 CPU network of `arch` with `output` classes,
// initialized as torchvision initializes it (MobileNet v1, which torchvision
// lacks: as its MobileNet v2). Works for any image side >= 32.
std::shared_ptr<VisionNetImpl> MakeVisionNet(VisionArch arch, int64_t output);

// The training problem of a valid spec of one of the four families: images
// [batch, 3, image, image] uniform in [0, 1), labels uniform in [0, output),
// softmax cross-entropy (mean).
TrainingProblem BuildVisionProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_VISION_H_
