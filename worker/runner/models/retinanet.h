// The retinanet family in LibTorch: ResNet-50 v1.5 + FPN P3–P7 + shared
// class and box subnets, focal and smooth-L1 losses on synthetic targets
// (architecture and counts: model/families/retinanet.cc). NCHW layout.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_RETINANET_H_
#define PARADNN_WORKER_RUNNER_MODELS_RETINANET_H_

#include <torch/torch.h>

#include <vector>

#include "model/families/retinanet.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

// ResNet bottleneck v1.5: 1×1 → 3×3 (stride) → 1×1 (4× width), BN after each,
// projection shortcut when `project`.
class RetinaBottleneckImpl : public torch::nn::Module {
 public:
  RetinaBottleneckImpl(int64_t in, int64_t width, int64_t stride, bool project);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr}, shortcut_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr}, shortcut_bn_{nullptr};
};
TORCH_MODULE(RetinaBottleneck);

class RetinaNetImpl : public torch::nn::Module {
 public:
  explicit RetinaNetImpl(int64_t classes);
  // images [B, 3, S, S] → {class logits [B, anchors, K], boxes [B, anchors, 4]},
  // anchors ordered level by level, then position, then anchor.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& images);

 private:
  torch::Tensor Head(std::vector<torch::nn::Conv2d>& convs, torch::nn::Conv2d& predict,
                     const torch::Tensor& feature, int64_t per_anchor);

  int64_t classes_;
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<std::vector<RetinaBottleneck>> stages_;
  torch::nn::Conv2d lateral3_{nullptr}, lateral4_{nullptr}, lateral5_{nullptr};
  torch::nn::Conv2d output3_{nullptr}, output4_{nullptr}, output5_{nullptr};
  torch::nn::Conv2d p6_{nullptr}, p7_{nullptr};
  std::vector<torch::nn::Conv2d> class_convs_, box_convs_;
  torch::nn::Conv2d class_predict_{nullptr}, box_predict_{nullptr};
};
TORCH_MODULE(RetinaNet);

// Sigmoid focal loss summed over every element of logits/one_hot (same
// shape), α 0.25, γ 2; the ops whose constants model/families/retinanet.cc counts.
torch::Tensor SigmoidFocalLossSum(const torch::Tensor& logits, const torch::Tensor& one_hot);

// Synthetic batch (model/families/retinanet.cc): images uniform in [0, 1), per image
// RetinaNetPositivesPerImage() positive anchors with classes uniform in
// 1..K and box targets uniform in [−1, 1). Loss = focal sum / positives +
// smooth-L1 (β 1/9) sum over positive boxes / positives.
TrainingProblem BuildRetinaNetProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_RETINANET_H_
