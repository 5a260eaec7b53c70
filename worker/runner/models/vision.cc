#include "worker/runner/models/vision.h"

#include <optional>
#include <string>
#include <vector>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;
using model::VisionArch;
using model::VisionArchOf;
using model::VisionShape;
using model::VisionShapeOf;
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t pad,
                int64_t groups = 1, bool bias = false) {
  return nn::Conv2d(
      nn::Conv2dOptions(cin, cout, k).stride(stride).padding(pad).groups(groups).bias(bias));
}

// eps 1e-5, momentum 0.1, affine: LibTorch's (and torchvision's) defaults.
nn::BatchNorm2d Norm(int64_t channels) { return nn::BatchNorm2d(channels); }

// In place, as torchvision's ReLU(inplace=True).
torch::Tensor Relu(torch::Tensor x) { return x.relu_(); }

torch::Tensor GlobalPoolFlatten(const torch::Tensor& x) {
  return torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
}

enum class ConvInit { kKaimingNormalFanOut, kKaimingNormalFanIn, kKaimingUniformFanIn };

// torchvision's initializations: convs as `conv_init` with zero bias, BN
// weight 1 and bias 0 (LibTorch's default already), Linear bias 0 unless
// `keep_linear_default`.
void Initialize(nn::Module& net, ConvInit conv_init) {
  torch::NoGradGuard no_grad;
  for (const auto& module : net.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<nn::Conv2d>()) {
      switch (conv_init) {
        case ConvInit::kKaimingNormalFanOut:
          nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
          break;
        case ConvInit::kKaimingNormalFanIn:
          nn::init::kaiming_normal_(conv->weight, 0, torch::kFanIn, torch::kReLU);
          break;
        case ConvInit::kKaimingUniformFanIn:
          nn::init::kaiming_uniform_(conv->weight, 0, torch::kFanIn, torch::kReLU);
          break;
      }
      if (conv->bias.defined()) conv->bias.zero_();
    }
  }
}

// --- ResNet-50 (torchvision v1.5) -------------------------------------------

class BottleneckImpl : public nn::Module {
 public:
  BottleneckImpl(int64_t cin, int64_t width, int64_t stride, bool project) {
    conv1_ = register_module("conv1", Conv(cin, width, 1, 1, 0));
    bn1_ = register_module("bn1", Norm(width));
    conv2_ = register_module("conv2", Conv(width, width, 3, stride, 1));
    bn2_ = register_module("bn2", Norm(width));
    conv3_ = register_module("conv3", Conv(width, 4 * width, 1, 1, 0));
    bn3_ = register_module("bn3", Norm(4 * width));
    if (project) {
      downsample_ = register_module(
          "downsample", nn::Sequential(Conv(cin, 4 * width, 1, stride, 0), Norm(4 * width)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = Relu(bn1_(conv1_(x)));
    y = Relu(bn2_(conv2_(y)));
    y = bn3_(conv3_(y));
    y.add_(downsample_ ? downsample_->forward(x) : x);
    return Relu(y);
  }

 private:
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(Bottleneck);

class ResNet50Impl : public VisionNetImpl {
 public:
  explicit ResNet50Impl(int64_t output) {
    conv1_ = register_module("conv1", Conv(3, 64, 7, 2, 3));
    bn1_ = register_module("bn1", Norm(64));
    const int64_t blocks[] = {3, 4, 6, 3};
    int64_t cin = 64;
    for (int g = 0; g < 4; ++g) {
      const int64_t width = int64_t{64} << g;
      nn::Sequential group;
      for (int64_t b = 0; b < blocks[g]; ++b) {
        group->push_back(Bottleneck(cin, width, (b == 0 && g > 0) ? 2 : 1, b == 0));
        cin = 4 * width;
      }
      groups_.push_back(register_module("layer" + std::to_string(g + 1), group));
    }
    fc_ = register_module("fc", nn::Linear(cin, output));
    Initialize(*this, ConvInit::kKaimingNormalFanOut);
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = Relu(bn1_(conv1_(x)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& group : groups_) x = group->forward(x);
    return fc_(GlobalPoolFlatten(x));
  }

 private:
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  std::vector<nn::Sequential> groups_;
  nn::Linear fc_{nullptr};
};

// --- DenseNet-121 -------------------------------------------------------------

constexpr int64_t kGrowth = 32;
constexpr int64_t kBnSize = 4;

class DenseLayerImpl : public nn::Module {
 public:
  explicit DenseLayerImpl(int64_t cin) {
    norm1_ = register_module("norm1", Norm(cin));
    conv1_ = register_module("conv1", Conv(cin, kBnSize * kGrowth, 1, 1, 0));
    norm2_ = register_module("norm2", Norm(kBnSize * kGrowth));
    conv2_ = register_module("conv2", Conv(kBnSize * kGrowth, kGrowth, 3, 1, 1));
  }
  // The new features from the concatenation of all earlier ones.
  torch::Tensor forward(const std::vector<torch::Tensor>& features) {
    torch::Tensor x = features.size() == 1 ? features.front() : torch::cat(features, 1);
    x = conv1_(Relu(norm1_(x)));
    return conv2_(Relu(norm2_(x)));
  }

 private:
  nn::BatchNorm2d norm1_{nullptr}, norm2_{nullptr};
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
};
TORCH_MODULE(DenseLayer);

class DenseBlockImpl : public nn::Module {
 public:
  DenseBlockImpl(int64_t layers, int64_t cin) {
    for (int64_t l = 0; l < layers; ++l) {
      layers_.push_back(
          register_module("denselayer" + std::to_string(l + 1), DenseLayer(cin + l * kGrowth)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> features = {x};
    for (auto& layer : layers_) features.push_back(layer->forward(features));
    return torch::cat(features, 1);
  }

 private:
  std::vector<DenseLayer> layers_;
};
TORCH_MODULE(DenseBlock);

class TransitionImpl : public nn::Module {
 public:
  TransitionImpl(int64_t cin, int64_t cout) {
    norm_ = register_module("norm", Norm(cin));
    conv_ = register_module("conv", Conv(cin, cout, 1, 1, 0));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::avg_pool2d(conv_(Relu(norm_(x))), 2, 2);
  }

 private:
  nn::BatchNorm2d norm_{nullptr};
  nn::Conv2d conv_{nullptr};
};
TORCH_MODULE(Transition);

// torchvision's `features`: conv0, norm0, (relu0, pool0), denseblock1,
// transition1, ..., denseblock4, norm5.
class DenseFeaturesImpl : public nn::Module {
 public:
  DenseFeaturesImpl() {
    conv0_ = register_module("conv0", Conv(3, 64, 7, 2, 3));
    norm0_ = register_module("norm0", Norm(64));
    const int64_t blocks[] = {6, 12, 24, 16};
    int64_t c = 64;
    for (int b = 0; b < 4; ++b) {
      blocks_.push_back(
          register_module("denseblock" + std::to_string(b + 1), DenseBlock(blocks[b], c)));
      c += blocks[b] * kGrowth;
      if (b < 3) {
        transitions_.push_back(
            register_module("transition" + std::to_string(b + 1), Transition(c, c / 2)));
        c /= 2;
      }
    }
    norm5_ = register_module("norm5", Norm(c));
    channels_ = c;
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(Relu(norm0_(conv0_(x))), 3, 2, 1);
    for (size_t b = 0; b < blocks_.size(); ++b) {
      x = blocks_[b]->forward(x);
      if (b < transitions_.size()) x = transitions_[b]->forward(x);
    }
    return norm5_(x);
  }
  int64_t channels() const { return channels_; }

 private:
  nn::Conv2d conv0_{nullptr};
  nn::BatchNorm2d norm0_{nullptr}, norm5_{nullptr};
  std::vector<DenseBlock> blocks_;
  std::vector<Transition> transitions_;
  int64_t channels_ = 0;
};
TORCH_MODULE(DenseFeatures);

class DenseNet121Impl : public VisionNetImpl {
 public:
  explicit DenseNet121Impl(int64_t output) {
    features_ = register_module("features", DenseFeatures());
    classifier_ = register_module("classifier", nn::Linear(features_->channels(), output));
    Initialize(*this, ConvInit::kKaimingNormalFanIn);
    torch::NoGradGuard no_grad;
    classifier_->bias.zero_();
  }
  torch::Tensor forward(torch::Tensor x) override {
    return classifier_(GlobalPoolFlatten(Relu(features_->forward(x))));
  }

 private:
  DenseFeatures features_{nullptr};
  nn::Linear classifier_{nullptr};
};

// --- MobileNet v1 -------------------------------------------------------------

class DepthwiseSeparableImpl : public nn::Module {
 public:
  DepthwiseSeparableImpl(int64_t cin, int64_t cout, int64_t stride) {
    dw_ = register_module("dw", Conv(cin, cin, 3, stride, 1, /*groups=*/cin));
    dw_bn_ = register_module("dw_bn", Norm(cin));
    pw_ = register_module("pw", Conv(cin, cout, 1, 1, 0));
    pw_bn_ = register_module("pw_bn", Norm(cout));
  }
  torch::Tensor forward(const torch::Tensor& x) { return Relu(pw_bn_(pw_(Relu(dw_bn_(dw_(x)))))); }

 private:
  nn::Conv2d dw_{nullptr}, pw_{nullptr};
  nn::BatchNorm2d dw_bn_{nullptr}, pw_bn_{nullptr};
};
TORCH_MODULE(DepthwiseSeparable);

class MobileNetV1Impl : public VisionNetImpl {
 public:
  explicit MobileNetV1Impl(int64_t output) {
    constexpr int64_t kBlocks[][2] = {{64, 1},  {128, 2},  {128, 1}, {256, 2}, {256, 1},
                                      {512, 2}, {512, 1},  {512, 1}, {512, 1}, {512, 1},
                                      {512, 1}, {1024, 2}, {1024, 1}};
    conv0_ = register_module("conv0", Conv(3, 32, 3, 2, 1));
    bn0_ = register_module("bn0", Norm(32));
    nn::Sequential blocks;
    int64_t c = 32;
    for (const auto& [cout, stride] : kBlocks) {
      blocks->push_back(DepthwiseSeparable(c, cout, stride));
      c = cout;
    }
    blocks_ = register_module("blocks", blocks);
    fc_ = register_module("fc", nn::Linear(c, output));
    Initialize(*this, ConvInit::kKaimingNormalFanOut);
    torch::NoGradGuard no_grad;
    nn::init::normal_(fc_->weight, 0, 0.01);
    fc_->bias.zero_();
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = Relu(bn0_(conv0_(x)));
    return fc_(GlobalPoolFlatten(blocks_->forward(x)));
  }

 private:
  nn::Conv2d conv0_{nullptr};
  nn::BatchNorm2d bn0_{nullptr};
  nn::Sequential blocks_{nullptr};
  nn::Linear fc_{nullptr};
};

// --- SqueezeNet 1.0 (torchvision) -----------------------------------------------

class FireImpl : public nn::Module {
 public:
  FireImpl(int64_t cin, int64_t squeeze, int64_t expand1, int64_t expand3) {
    squeeze_ = register_module("squeeze", Conv(cin, squeeze, 1, 1, 0, 1, true));
    expand1_ = register_module("expand1x1", Conv(squeeze, expand1, 1, 1, 0, 1, true));
    expand3_ = register_module("expand3x3", Conv(squeeze, expand3, 3, 1, 1, 1, true));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor s = Relu(squeeze_(x));
    return torch::cat({Relu(expand1_(s)), Relu(expand3_(s))}, 1);
  }

 private:
  nn::Conv2d squeeze_{nullptr}, expand1_{nullptr}, expand3_{nullptr};
};
TORCH_MODULE(Fire);

// torchvision's `features` (children 0, 3-5, 7-10, 12 hold parameters; 1, 2,
// 6, 11 are ReLU and max pools) and `classifier` (1 is the conv).
class SqueezeFeaturesImpl : public nn::Module {
 public:
  SqueezeFeaturesImpl() {
    conv_ = register_module("0", Conv(3, 96, 7, 2, 0, 1, true));
    const struct {
      const char* name;
      int64_t cin, squeeze, expand;
    } fires[] = {{"3", 96, 16, 64},    {"4", 128, 16, 64},  {"5", 128, 32, 128},
                 {"7", 256, 32, 128},  {"8", 256, 48, 192}, {"9", 384, 48, 192},
                 {"10", 384, 64, 256}, {"12", 512, 64, 256}};
    for (const auto& f : fires) {
      fires_.push_back(register_module(f.name, Fire(f.cin, f.squeeze, f.expand, f.expand)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto pool = [](const torch::Tensor& t) {
      return torch::max_pool2d(t, 3, 2, 0, 1, /*ceil_mode=*/true);
    };
    x = pool(Relu(conv_(x)));
    for (size_t i = 0; i < fires_.size(); ++i) {
      x = fires_[i]->forward(x);
      if (i == 2 || i == 6) x = pool(x);  // after features.5 and features.10
    }
    return x;
  }

 private:
  nn::Conv2d conv_{nullptr};
  std::vector<Fire> fires_;
};
TORCH_MODULE(SqueezeFeatures);

class SqueezeClassifierImpl : public nn::Module {
 public:
  explicit SqueezeClassifierImpl(int64_t output) {
    conv_ = register_module("1", Conv(512, output, 1, 1, 0, 1, true));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor dropped = torch::dropout(x, 0.5, is_training());
    return GlobalPoolFlatten(Relu(conv_(dropped)));
  }
  nn::Conv2d& conv() { return conv_; }

 private:
  nn::Conv2d conv_{nullptr};
};
TORCH_MODULE(SqueezeClassifier);

class SqueezeNet10Impl : public VisionNetImpl {
 public:
  explicit SqueezeNet10Impl(int64_t output) {
    features_ = register_module("features", SqueezeFeatures());
    classifier_ = register_module("classifier", SqueezeClassifier(output));
    Initialize(*this, ConvInit::kKaimingUniformFanIn);
    torch::NoGradGuard no_grad;
    nn::init::normal_(classifier_->conv()->weight, 0, 0.01);
  }
  torch::Tensor forward(torch::Tensor x) override {
    return classifier_->forward(features_->forward(x));
  }

 private:
  SqueezeFeatures features_{nullptr};
  SqueezeClassifier classifier_{nullptr};
};

}  // namespace

std::shared_ptr<VisionNetImpl> MakeVisionNet(VisionArch arch, int64_t output) {
  switch (arch) {
    case VisionArch::kResNet50:
      return std::make_shared<ResNet50Impl>(output);
    case VisionArch::kDenseNet121:
      return std::make_shared<DenseNet121Impl>(output);
    case VisionArch::kMobileNetV1:
      return std::make_shared<MobileNetV1Impl>(output);
    case VisionArch::kSqueezeNet10:
      return std::make_shared<SqueezeNet10Impl>(output);
  }
  return nullptr;
}

TrainingProblem BuildVisionProblem(const ModelSpec& spec, const BuildContext& context) {
  const std::optional<VisionArch> arch = VisionArchOf(spec.family);
  if (!arch) throw std::invalid_argument("not a vision family: " + spec.family);
  const VisionShape shape = VisionShapeOf(spec);
  std::shared_ptr<VisionNetImpl> model = MakeVisionNet(*arch, shape.output);
  VisionNetImpl* net = model.get();
  return SyntheticClassificationProblem(
      std::move(model), [net](const torch::Tensor& x) { return net->forward(x); },
      {shape.batch, 3, shape.image, shape.image}, /*input_low=*/0, shape.output, context);
}

}  // namespace paradnn::runner
