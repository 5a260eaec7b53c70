#include "worker/runner/models/retinanet.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::kResNet50Blocks;
using model::kResNet50Widths;
using model::kRetinaNetAnchors;
using model::kRetinaNetFocalAlpha;
using model::kRetinaNetFocalGamma;
using model::kRetinaNetFpnChannels;
using model::kRetinaNetHeadConvs;
using model::kRetinaNetPriorProbability;
using model::kRetinaNetSmoothL1Beta;
using model::ModelSpec;
using model::Precision;
using model::RetinaNetAnchorsPerImage;
using model::RetinaNetPositivesPerImage;
using model::RetinaNetShape;
using model::RetinaNetShapeOf;
namespace {

namespace F = torch::nn::functional;

torch::nn::Conv2d SamePaddedConv(int64_t in, int64_t out, int64_t k, int64_t stride, bool bias) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(bias));
}

torch::nn::BatchNorm2d Bn(int64_t channels) {
  return torch::nn::BatchNorm2d(torch::nn::BatchNormOptions(channels).eps(1e-5).momentum(0.1));
}

}  // namespace

RetinaBottleneckImpl::RetinaBottleneckImpl(int64_t in, int64_t width, int64_t stride,
                                           bool project) {
  conv1_ = register_module("conv1", SamePaddedConv(in, width, 1, 1, false));
  bn1_ = register_module("bn1", Bn(width));
  conv2_ = register_module("conv2", SamePaddedConv(width, width, 3, stride, false));
  bn2_ = register_module("bn2", Bn(width));
  conv3_ = register_module("conv3", SamePaddedConv(width, 4 * width, 1, 1, false));
  bn3_ = register_module("bn3", Bn(4 * width));
  if (project) {
    shortcut_ = register_module("shortcut", SamePaddedConv(in, 4 * width, 1, stride, false));
    shortcut_bn_ = register_module("shortcut_bn", Bn(4 * width));
  }
}

torch::Tensor RetinaBottleneckImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1_->forward(conv1_->forward(x)));
  y = torch::relu(bn2_->forward(conv2_->forward(y)));
  y = bn3_->forward(conv3_->forward(y));
  auto shortcut = shortcut_ ? shortcut_bn_->forward(shortcut_->forward(x)) : x;
  return torch::relu(y + shortcut);
}

RetinaNetImpl::RetinaNetImpl(int64_t classes) : classes_(classes) {
  stem_ = register_module("stem", SamePaddedConv(3, 64, 7, 2, false));
  stem_bn_ = register_module("stem_bn", Bn(64));
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    std::vector<RetinaBottleneck> blocks;
    const int64_t width = kResNet50Widths[stage];
    for (int64_t b = 0; b < kResNet50Blocks[stage]; ++b) {
      const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      blocks.push_back(
          register_module("layer" + std::to_string(stage + 1) + "_" + std::to_string(b),
                          RetinaBottleneck(in, width, stride, /*project=*/b == 0)));
      in = 4 * width;
    }
    stages_.push_back(std::move(blocks));
  }
  const int64_t f = kRetinaNetFpnChannels;
  lateral3_ = register_module("lateral3", SamePaddedConv(512, f, 1, 1, true));
  lateral4_ = register_module("lateral4", SamePaddedConv(1024, f, 1, 1, true));
  lateral5_ = register_module("lateral5", SamePaddedConv(2048, f, 1, 1, true));
  output3_ = register_module("output3", SamePaddedConv(f, f, 3, 1, true));
  output4_ = register_module("output4", SamePaddedConv(f, f, 3, 1, true));
  output5_ = register_module("output5", SamePaddedConv(f, f, 3, 1, true));
  p6_ = register_module("p6", SamePaddedConv(2048, f, 3, 2, true));
  p7_ = register_module("p7", SamePaddedConv(f, f, 3, 2, true));
  for (int64_t k = 0; k < kRetinaNetHeadConvs; ++k) {
    class_convs_.push_back(
        register_module("class_conv" + std::to_string(k), SamePaddedConv(f, f, 3, 1, true)));
    box_convs_.push_back(
        register_module("box_conv" + std::to_string(k), SamePaddedConv(f, f, 3, 1, true)));
  }
  class_predict_ =
      register_module("class_predict", SamePaddedConv(f, kRetinaNetAnchors * classes, 3, 1, true));
  box_predict_ =
      register_module("box_predict", SamePaddedConv(f, kRetinaNetAnchors * 4, 3, 1, true));
  // Heads as the paper initializes them: N(0, 0.01) weights, zero biases,
  // class bias at the prior π (every anchor starts as ~1 % foreground).
  torch::NoGradGuard no_grad;
  for (auto* convs : {&class_convs_, &box_convs_}) {
    for (auto& c : *convs) {
      torch::nn::init::normal_(c->weight, 0.0, 0.01);
      torch::nn::init::zeros_(c->bias);
    }
  }
  for (auto* c : {&class_predict_, &box_predict_}) {
    torch::nn::init::normal_((*c)->weight, 0.0, 0.01);
    torch::nn::init::zeros_((*c)->bias);
  }
  class_predict_->bias.fill_(
      -std::log((1.0 - kRetinaNetPriorProbability) / kRetinaNetPriorProbability));
}

torch::Tensor RetinaNetImpl::Head(std::vector<torch::nn::Conv2d>& convs, torch::nn::Conv2d& predict,
                                  const torch::Tensor& feature, int64_t per_anchor) {
  auto x = feature;
  for (auto& c : convs) x = torch::relu(c->forward(x));
  x = predict->forward(x);  // [B, A·C, H, W]
  // → [B, H·W·A, C] (a real copy: permute then contiguous).
  return x.permute({0, 2, 3, 1}).contiguous().view({x.size(0), -1, per_anchor});
}

std::pair<torch::Tensor, torch::Tensor> RetinaNetImpl::forward(const torch::Tensor& images) {
  auto x = torch::relu(stem_bn_->forward(stem_->forward(images)));
  x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
  std::vector<torch::Tensor> c;
  for (auto& stage : stages_) {
    for (auto& block : stage) x = block->forward(x);
    c.push_back(x);
  }
  const auto up =
      F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest);
  auto p5 = lateral5_->forward(c[3]);
  auto p4 = lateral4_->forward(c[2]) + F::interpolate(p5, up);
  auto p3 = lateral3_->forward(c[1]) + F::interpolate(p4, up);
  auto p6 = p6_->forward(c[3]);
  auto p7 = p7_->forward(torch::relu(p6));
  const std::vector<torch::Tensor> levels = {output3_->forward(p3), output4_->forward(p4),
                                             output5_->forward(p5), p6, p7};
  std::vector<torch::Tensor> classes, boxes;
  for (const auto& level : levels) {
    classes.push_back(Head(class_convs_, class_predict_, level, classes_));
    boxes.push_back(Head(box_convs_, box_predict_, level, 4));
  }
  return {torch::cat(classes, 1), torch::cat(boxes, 1)};
}

torch::Tensor SigmoidFocalLossSum(const torch::Tensor& logits, const torch::Tensor& one_hot) {
  // ce = −[t·log p + (1−t)·log(1−p)] = softplus(x) − x·t (stable form).
  auto ce = F::softplus(logits) - logits * one_hot;
  auto p = torch::sigmoid(logits);
  auto one_minus_pt = (p - one_hot).abs();  // t ∈ {0, 1}: 1 − p_t = |p − t|
  auto modulating = one_minus_pt.pow(kRetinaNetFocalGamma);
  auto alpha_t = one_hot * (2 * kRetinaNetFocalAlpha - 1) + (1 - kRetinaNetFocalAlpha);
  return (alpha_t * modulating * ce).sum();
}

TrainingProblem BuildRetinaNetProblem(const ModelSpec& spec, const BuildContext& context) {
  const RetinaNetShape shape = RetinaNetShapeOf(spec);
  struct State {
    RetinaNet model{nullptr};
    torch::Tensor images, one_hot, positive_index, box_targets;
    double positives = 0;
  };
  auto state = std::make_shared<State>();
  state->model = RetinaNet(shape.output);
  TrainingProblem problem;
  problem.parameters = PrepareModule(*state->model, context);
  const auto on_device = torch::TensorOptions().device(context.device);
  const int64_t anchors = RetinaNetAnchorsPerImage(shape.image);
  const int64_t positives = RetinaNetPositivesPerImage(shape.image);
  state->images = InLayout(
      torch::rand({shape.batch, 3, shape.image, shape.image}, on_device.dtype(torch::kFloat32))
          .to(context.input_dtype),
      context);
  // Positive anchors: distinct random positions per image, as flat indices
  // into [B·anchors]; classes 1..K, written one-hot at column class − 1.
  std::vector<torch::Tensor> index;
  for (int64_t b = 0; b < shape.batch; ++b) {
    index.push_back(torch::randperm(anchors, on_device.dtype(torch::kLong)).slice(0, 0, positives) +
                    b * anchors);
  }
  state->positive_index = torch::cat(index);
  auto classes =
      torch::randint(1, shape.output + 1, {shape.batch * positives}, on_device.dtype(torch::kLong));
  // The one-hot targets are in the logits' dtype (16-bit under autocast).
  const torch::ScalarType target_dtype = spec.precision == Precision::kMixedBf16 ? torch::kBFloat16
                                         : spec.precision == Precision::kMixedFp16
                                             ? torch::kFloat16
                                             : context.weight_dtype;
  auto one_hot = torch::zeros({shape.batch * anchors, shape.output}, on_device.dtype(target_dtype));
  one_hot.index_put_({state->positive_index, classes - 1}, torch::ones({}, one_hot.options()));
  state->one_hot = one_hot.view({shape.batch, anchors, shape.output});
  state->box_targets =
      (torch::rand({shape.batch * positives, 4}, on_device.dtype(torch::kFloat32)) * 2 - 1)
          .to(target_dtype);
  state->positives = static_cast<double>(shape.batch * positives);
  State* s = state.get();
  problem.forward_loss = [s] {
    auto [logits, boxes] = s->model->forward(s->images);
    auto focal = SigmoidFocalLossSum(logits, s->one_hot);
    auto positive_boxes = boxes.view({-1, 4}).index_select(0, s->positive_index);
    auto box = F::smooth_l1_loss(positive_boxes, s->box_targets.to(positive_boxes.scalar_type()),
                                 F::SmoothL1LossFuncOptions(torch::kSum), kRetinaNetSmoothL1Beta);
    return (focal + box) / s->positives;
  };
  problem.owner = state;
  return problem;
}

}  // namespace paradnn::runner
