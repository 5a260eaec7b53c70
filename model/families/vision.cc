// The real-world image classifiers (docs/models.md "Real-world models"):
// their layer lists and analytic counts.
//
// Counts walk VisionLayers(arch, image, output) through the LayerLedger
// (model/layer_ledger.h), whose op costs below are the same for every family;
// B is the batch, N_in / N_out a layer's per-example input / output elements.
//
//   params            = sum over conv, linear and BN layers of their trainable
//                       elements (BN gamma and beta; running stats are
//                       buffers, not parameters)
//   macs_per_example  = sum of conv MACs k^2 * (Cin/groups) * Cout * Hout *
//                       Wout (depthwise: k^2 * C * Hout * Wout) and linear
//                       MACs in * out, from the real output sizes
//   model_flops       = 6 * macs_per_example * B          (ParaDnn convention)
//   executed_flops    = per conv/linear: forward 2*B*MAC + weight gradient
//                       2*B*MAC + input gradient 2*B*MAC, except the first
//                       conv, whose input (the image) needs no gradient
//   other_flops       = non-matmul arithmetic, one FLOP per element per
//                       operation:
//                       conv/linear bias: add forward, reduce backward, B*N_out each;
//                       BN: kBatchNormCost (7 forward, 9 backward) * B*N_out;
//                       ReLU: B*N_out forward and backward;
//                       max pool: k^2 - 1 compares per output forward, B*N_out
//                       scatter backward; k x k average pool: k^2 per output
//                       forward and backward; global average pool: B*N_in
//                       forward and backward;
//                       residual add: B*N_out forward (backward passes the
//                       gradient through: no arithmetic);
//                       concat: no arithmetic forward; backward accumulates every
//                       element of its output gradient into its operand's
//                       gradient, B*N_out (an upper bound: the first
//                       consumer of a DenseNet feature assigns rather than adds);
//                       fork (a tensor read by m consumers): (m-1)*B*N backward;
//                       dropout: kDropoutCost (3 forward, 1 backward);
//                       softmax cross-entropy: kLossForward/BackwardFlopsPerLogit
//                       per logit (B*output); optimizer:
//                       OptimizerFlopsPerParam() per parameter.
//
// Bytes per step (method "layerwise-traffic-v3", as FC): every tensor a
// kernel reads or writes is counted once per kernel at its element size
// (e_w stored weights, gradients and optimizer state; e_c the weights a
// conv/linear reads, the 16-bit autocast copy in mixed precision; e_a
// activations; 8 bytes for max-pool indices and labels).
//   conv/linear forward: read weights (mixed: plus read float32 master,
//     write copy), read input, write output; backward: weight gradient
//     reads dY and X and writes dW (mixed: plus its cast to float32); the
//     input gradient (all but the first conv) reads dY and W and writes dX.
//     The image is float32 in mixed precision and cast once.
//   BN: forward reads x for the statistics, then reads x and gamma/beta and
//     writes y (3 passes); backward reads dy and x for the reductions, then
//     dy and x again and writes dx (5 passes), and writes dgamma, dbeta (BN
//     parameters stay in e_w: autocast leaves batch_norm alone).
//   ReLU (in place): forward reads and writes N; backward reads dY and Y and
//     writes dX.
//   pools: forward read input, write output (max pool: and int64 indices);
//     backward read dY (and indices), write dX.
//   add: forward reads two, writes one; backward none (pass-through).
//   concat: forward reads operands and writes the output; backward reads dY
//     and reads and writes the operand gradients (3 passes of N_out).
//   fork: backward reads two gradients and writes their sum per extra consumer.
//   dropout: LibTorch's three forward kernels (draw the mask, scale it,
//     multiply: 6 passes); backward reads dY and the mask, writes dX.
//   loss: as FC. optimizer: OptimizerTensorPassesPerParam(kFused) * params * e_w.
//
// activation_bytes: every tensor a step keeps for backward or produces: the
// image (plus its 16-bit copy in mixed precision), each layer's new output
// (in-place ReLU adds none; max pool adds its indices, dropout its mask), the
// logits and log-probabilities.
// peak_memory_estimate_bytes: weights + gradients + optimizer state (+ 16-bit
// weight copies and gradients in mixed precision) + activation_bytes +
// labels + the two largest activation gradients alive at once in backward
// + the largest im2col buffer of a dense conv with a kernel over 1x1
// (k^2 * Cin * Hout * Wout per example; depthwise convs need none).

#include "model/families/vision.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "model/family.h"

namespace paradnn::model {
namespace {

// Adaptive pooling before the classifier lets them take any image of at
// least 32.
constexpr ParamRule kVisionParams[] = {
    {"batch", 1, kMaxModelBatch, true, "examples per training step"},
    kDevicesRule,
    kHostsRule,
    {"image", 32, 4096, false, "height and width of the input images", 224},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"output", 1, kMaxWidth, false, "classes", 1000},
    kOverlapRule,
};

using Kind = VisionLayer::Kind;

// Appends layer records while tracking shapes. Each op takes its input shape
// and returns its output shape, so branches (shortcuts, fire expands, dense
// concatenations) are written as the network's own data flow.
class LayerList {
 public:
  FeatureShape Conv(const std::string& name, FeatureShape in, int64_t cout, int64_t k,
                    int64_t stride, int64_t pad, int64_t groups = 1, bool bias = false) {
    VisionLayer l = Make(Kind::kConv, name, in);
    l.kernel = k;
    l.stride = stride;
    l.padding = pad;
    l.groups = groups;
    l.bias = bias;
    l.reads_image = first_;
    first_ = false;
    l.out = {cout, OutSize(in.h, k, stride, pad, false), OutSize(in.w, k, stride, pad, false)};
    return Push(l);
  }
  FeatureShape Linear(const std::string& name, FeatureShape in, int64_t out) {
    VisionLayer l = Make(Kind::kLinear, name, in);
    l.bias = true;
    l.out = {out, 1, 1};
    return Push(l);
  }
  FeatureShape BatchNorm(const std::string& name, FeatureShape in) {
    VisionLayer l = Make(Kind::kBatchNorm, name, in);
    l.out = in;
    return Push(l);
  }
  FeatureShape Relu(const std::string& name, FeatureShape in) {
    VisionLayer l = Make(Kind::kRelu, name, in);
    l.out = in;
    return Push(l);
  }
  FeatureShape MaxPool(const std::string& name, FeatureShape in, int64_t k, int64_t stride,
                       int64_t pad, bool ceil_mode) {
    VisionLayer l = Make(Kind::kMaxPool, name, in);
    l.kernel = k;
    l.stride = stride;
    l.padding = pad;
    l.ceil_mode = ceil_mode;
    l.out = {in.c, OutSize(in.h, k, stride, pad, ceil_mode),
             OutSize(in.w, k, stride, pad, ceil_mode)};
    return Push(l);
  }
  FeatureShape AvgPool(const std::string& name, FeatureShape in, int64_t k, int64_t stride) {
    VisionLayer l = Make(Kind::kAvgPool, name, in);
    l.kernel = k;
    l.stride = stride;
    l.out = {in.c, OutSize(in.h, k, stride, 0, false), OutSize(in.w, k, stride, 0, false)};
    return Push(l);
  }
  FeatureShape GlobalAvgPool(const std::string& name, FeatureShape in) {
    VisionLayer l = Make(Kind::kGlobalAvgPool, name, in);
    l.out = {in.c, 1, 1};
    return Push(l);
  }
  FeatureShape Add(const std::string& name, FeatureShape a, FeatureShape b) {
    if (a.c != b.c || a.h != b.h || a.w != b.w) Broken(name, "add of different shapes");
    VisionLayer l = Make(Kind::kAdd, name, a);
    l.operands = 2;
    l.out = a;
    return Push(l);
  }
  FeatureShape Concat(const std::string& name, const std::vector<FeatureShape>& parts) {
    FeatureShape out = parts.front();
    out.c = 0;
    for (const FeatureShape& p : parts) {
      if (p.h != out.h || p.w != out.w) Broken(name, "concat of different sizes");
      out.c += p.c;
    }
    VisionLayer l = Make(Kind::kConcat, name, out);
    l.operands = static_cast<int64_t>(parts.size());
    l.out = out;
    return Push(l);
  }
  FeatureShape Dropout(const std::string& name, FeatureShape in) {
    VisionLayer l = Make(Kind::kDropout, name, in);
    l.out = in;
    return Push(l);
  }
  void Fork(const std::string& name, FeatureShape in, int64_t consumers) {
    VisionLayer l = Make(Kind::kFork, name, in);
    l.operands = consumers;
    l.out = in;
    Push(l);
  }

  // Branch markers (VisionLayer::Kind::kBranches): `in` is the shape they
  // stand at.
  void Branches(const std::string& name, FeatureShape in) { Marker(Kind::kBranches, name, in); }
  void NextBranch(const std::string& name, FeatureShape in) { Marker(Kind::kNextBranch, name, in); }
  void EndBranches(const std::string& name, FeatureShape in) {
    Marker(Kind::kEndBranches, name, in);
  }

  std::vector<VisionLayer> Take() { return std::move(layers_); }

 private:
  void Marker(Kind kind, const std::string& name, FeatureShape in) {
    VisionLayer l = Make(kind, name, in);
    l.out = in;
    Push(l);
  }
  static VisionLayer Make(Kind kind, const std::string& name, FeatureShape in) {
    VisionLayer l{};
    l.kind = kind;
    l.name = name;
    l.in = in;
    return l;
  }
  // torch's pooling_output_shape / conv output size (dilation 1).
  static int64_t OutSize(int64_t in, int64_t k, int64_t stride, int64_t pad, bool ceil_mode) {
    const int64_t span = in + 2 * pad - k;
    if (span < 0) return 0;
    int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) --out;
    return out;
  }
  [[noreturn]] static void Broken(const std::string& name, const char* what) {
    std::fprintf(stderr, "vision layer %s: %s\n", name.c_str(), what);
    std::abort();
  }
  FeatureShape Push(const VisionLayer& l) {
    if (l.out.c < 1 || l.out.h < 1 || l.out.w < 1) Broken(l.name, "empty feature map");
    layers_.push_back(l);
    return l.out;
  }

  std::vector<VisionLayer> layers_;
  bool first_ = true;  // the next conv reads the image
};

std::vector<VisionLayer> ResNet50Layers(int64_t image, int64_t output) {
  LayerList L;
  FeatureShape x{3, image, image};
  x = L.Conv("conv1", x, 64, 7, 2, 3);
  x = L.BatchNorm("bn1", x);
  x = L.Relu("relu", x);
  x = L.MaxPool("maxpool", x, 3, 2, 1, false);
  const int64_t blocks[] = {3, 4, 6, 3};
  for (int g = 0; g < 4; ++g) {
    const int64_t width = int64_t{64} << g;
    for (int64_t b = 0; b < blocks[g]; ++b) {
      const std::string p = absl::StrCat("layer", g + 1, ".", b, ".");
      const int64_t stride = (b == 0 && g > 0) ? 2 : 1;
      const FeatureShape block_in = x;
      L.Fork(p + "fork", block_in, 2);  // main path and shortcut
      L.Branches(p + "branches", block_in);
      FeatureShape y = L.Conv(p + "conv1", block_in, width, 1, 1, 0);
      y = L.BatchNorm(p + "bn1", y);
      y = L.Relu(p + "relu1", y);
      // v1.5: the stride is on the 3x3 conv.
      y = L.Conv(p + "conv2", y, width, 3, stride, 1);
      y = L.BatchNorm(p + "bn2", y);
      y = L.Relu(p + "relu2", y);
      y = L.Conv(p + "conv3", y, 4 * width, 1, 1, 0);
      y = L.BatchNorm(p + "bn3", y);
      L.NextBranch(p + "shortcut", block_in);
      FeatureShape shortcut = block_in;
      if (b == 0) {
        shortcut = L.Conv(p + "downsample.0", block_in, 4 * width, 1, stride, 0);
        shortcut = L.BatchNorm(p + "downsample.1", shortcut);
      }
      L.EndBranches(p + "joined", y);
      x = L.Add(p + "add", y, shortcut);
      x = L.Relu(p + "relu3", x);
    }
  }
  x = L.GlobalAvgPool("avgpool", x);
  L.Linear("fc", x, output);
  return L.Take();
}

std::vector<VisionLayer> DenseNet121Layers(int64_t image, int64_t output) {
  constexpr int64_t kGrowth = 32;
  constexpr int64_t kBnSize = 4;
  const int64_t blocks[] = {6, 12, 24, 16};
  LayerList L;
  FeatureShape x{3, image, image};
  x = L.Conv("features.conv0", x, 64, 7, 2, 3);
  x = L.BatchNorm("features.norm0", x);
  x = L.Relu("features.relu0", x);
  x = L.MaxPool("features.pool0", x, 3, 2, 1, false);
  for (int b = 0; b < 4; ++b) {
    const std::string block = absl::StrCat("features.denseblock", b + 1, ".");
    // Every layer reads the concatenation of the block input and all earlier
    // layers' new features.
    std::vector<FeatureShape> features = {x};
    for (int64_t l = 0; l < blocks[b]; ++l) {
      const std::string p = absl::StrCat(block, "denselayer", l + 1, ".");
      FeatureShape y = features.size() == 1 ? features.front() : L.Concat(p + "cat", features);
      y = L.BatchNorm(p + "norm1", y);
      y = L.Relu(p + "relu1", y);
      y = L.Conv(p + "conv1", y, kBnSize * kGrowth, 1, 1, 0);
      y = L.BatchNorm(p + "norm2", y);
      y = L.Relu(p + "relu2", y);
      y = L.Conv(p + "conv2", y, kGrowth, 3, 1, 1);
      features.push_back(y);
    }
    x = L.Concat(block + "cat", features);
    if (b < 3) {
      const std::string t = absl::StrCat("features.transition", b + 1, ".");
      x = L.BatchNorm(t + "norm", x);
      x = L.Relu(t + "relu", x);
      x = L.Conv(t + "conv", x, x.c / 2, 1, 1, 0);
      x = L.AvgPool(t + "pool", x, 2, 2);
    }
  }
  x = L.BatchNorm("features.norm5", x);
  x = L.Relu("relu", x);
  x = L.GlobalAvgPool("avgpool", x);
  L.Linear("classifier", x, output);
  return L.Take();
}

std::vector<VisionLayer> MobileNetV1Layers(int64_t image, int64_t output) {
  // (output channels, stride) of the 13 depthwise-separable blocks.
  constexpr int64_t kBlocks[][2] = {{64, 1},  {128, 2},  {128, 1}, {256, 2}, {256, 1},
                                    {512, 2}, {512, 1},  {512, 1}, {512, 1}, {512, 1},
                                    {512, 1}, {1024, 2}, {1024, 1}};
  LayerList L;
  FeatureShape x{3, image, image};
  x = L.Conv("conv0", x, 32, 3, 2, 1);
  x = L.BatchNorm("bn0", x);
  x = L.Relu("relu0", x);
  int i = 0;
  for (const auto& [cout, stride] : kBlocks) {
    const std::string p = absl::StrCat("blocks.", i++, ".");
    x = L.Conv(p + "dw", x, x.c, 3, stride, 1, /*groups=*/x.c);
    x = L.BatchNorm(p + "dw_bn", x);
    x = L.Relu(p + "dw_relu", x);
    x = L.Conv(p + "pw", x, cout, 1, 1, 0);
    x = L.BatchNorm(p + "pw_bn", x);
    x = L.Relu(p + "pw_relu", x);
  }
  x = L.GlobalAvgPool("avgpool", x);
  L.Linear("fc", x, output);
  return L.Take();
}

FeatureShape Fire(LayerList& L, const std::string& p, FeatureShape x, int64_t squeeze,
                  int64_t expand1, int64_t expand3) {
  x = L.Conv(p + "squeeze", x, squeeze, 1, 1, 0, 1, true);
  x = L.Relu(p + "squeeze_activation", x);
  L.Fork(p + "fork", x, 2);  // both expands read the squeeze output
  L.Branches(p + "branches", x);
  FeatureShape a = L.Conv(p + "expand1x1", x, expand1, 1, 1, 0, 1, true);
  a = L.Relu(p + "expand1x1_activation", a);
  L.NextBranch(p + "expand3x3_branch", x);
  FeatureShape b = L.Conv(p + "expand3x3", x, expand3, 3, 1, 1, 1, true);
  b = L.Relu(p + "expand3x3_activation", b);
  L.EndBranches(p + "joined", b);
  return L.Concat(p + "cat", {a, b});
}

std::vector<VisionLayer> SqueezeNet10Layers(int64_t image, int64_t output) {
  LayerList L;
  FeatureShape x{3, image, image};
  x = L.Conv("features.0", x, 96, 7, 2, 0, 1, true);
  x = L.Relu("features.1", x);
  x = L.MaxPool("features.2", x, 3, 2, 0, true);
  x = Fire(L, "features.3.", x, 16, 64, 64);
  x = Fire(L, "features.4.", x, 16, 64, 64);
  x = Fire(L, "features.5.", x, 32, 128, 128);
  x = L.MaxPool("features.6", x, 3, 2, 0, true);
  x = Fire(L, "features.7.", x, 32, 128, 128);
  x = Fire(L, "features.8.", x, 48, 192, 192);
  x = Fire(L, "features.9.", x, 48, 192, 192);
  x = Fire(L, "features.10.", x, 64, 256, 256);
  x = L.MaxPool("features.11", x, 3, 2, 0, true);
  x = Fire(L, "features.12.", x, 64, 256, 256);
  x = L.Dropout("classifier.0", x);
  x = L.Conv("classifier.1", x, output, 1, 1, 0, 1, true);
  x = L.Relu("classifier.2", x);
  L.GlobalAvgPool("classifier.3", x);
  return L.Take();
}

}  // namespace

int64_t VisionLayer::Params() const {
  switch (kind) {
    case Kind::kConv:
      return kernel * kernel * (in.c / groups) * out.c + (bias ? out.c : 0);
    case Kind::kLinear:
      return in.elements() * out.c + (bias ? out.c : 0);
    case Kind::kBatchNorm:
      return 2 * out.c;
    default:
      return 0;
  }
}

int64_t VisionLayer::Macs() const {
  switch (kind) {
    case Kind::kConv:
      return kernel * kernel * (in.c / groups) * out.elements();
    case Kind::kLinear:
      return in.elements() * out.c;
    default:
      return 0;
  }
}

const char* VisionFamilyName(VisionArch arch) {
  switch (arch) {
    case VisionArch::kResNet50:
      return "resnet50";
    case VisionArch::kDenseNet121:
      return "densenet121";
    case VisionArch::kMobileNetV1:
      return "mobilenet_v1";
    case VisionArch::kSqueezeNet10:
      return "squeezenet1_0";
  }
  return "";
}

std::optional<VisionArch> VisionArchOf(const std::string& family) {
  for (VisionArch arch : kAllVisionArchs) {
    if (family == VisionFamilyName(arch)) return arch;
  }
  return std::nullopt;
}

VisionShape VisionShapeOf(const ModelSpec& spec) {
  return VisionShape{spec.Param("image"), spec.Param("output"), spec.Param("batch")};
}

ModelSpec MakeVisionSpec(VisionArch arch, const VisionShape& shape, Precision precision,
                         OptimizerKind optimizer) {
  return ModelSpec{VisionFamilyName(arch),
                   {{"batch", shape.batch}, {"image", shape.image}, {"output", shape.output}},
                   {},
                   precision,
                   optimizer,
                   {}};
}

std::vector<VisionLayer> VisionLayers(VisionArch arch, int64_t image, int64_t output) {
  switch (arch) {
    case VisionArch::kResNet50:
      return ResNet50Layers(image, output);
    case VisionArch::kDenseNet121:
      return DenseNet121Layers(image, output);
    case VisionArch::kMobileNetV1:
      return MobileNetV1Layers(image, output);
    case VisionArch::kSqueezeNet10:
      return SqueezeNet10Layers(image, output);
  }
  return {};
}

std::vector<std::pair<std::string, std::vector<int64_t>>> VisionParameterShapes(
    const std::vector<VisionLayer>& layers) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const VisionLayer& l : layers) {
    switch (l.kind) {
      case Kind::kConv:
        shapes.push_back({l.name + ".weight", {l.out.c, l.in.c / l.groups, l.kernel, l.kernel}});
        if (l.bias) shapes.push_back({l.name + ".bias", {l.out.c}});
        break;
      case Kind::kLinear:
        shapes.push_back({l.name + ".weight", {l.out.c, l.in.elements()}});
        if (l.bias) shapes.push_back({l.name + ".bias", {l.out.c}});
        break;
      case Kind::kBatchNorm:
        shapes.push_back({l.name + ".weight", {l.out.c}});
        shapes.push_back({l.name + ".bias", {l.out.c}});
        break;
      default:
        break;
    }
  }
  return shapes;
}

constexpr OptionRule kVisionOptions[] = {kMemoryFormatRule};

extern const FamilyDef kResNet50Family = {
    "resnet50",    "ResNet-50 (torchvision v1.5: stride on the 3x3 conv), image x image RGB",
    kVisionParams, kVisionOptions,
    kConvRoof,     /*check=*/nullptr,
    CountVision};
extern const FamilyDef kDenseNet121Family = {
    "densenet121", "DenseNet-121 (growth 32, blocks 6-12-24-16), image x image RGB",
    kVisionParams, kVisionOptions,
    kConvRoof,     /*check=*/nullptr,
    CountVision};
extern const FamilyDef kMobileNetV1Family = {
    "mobilenet_v1", "MobileNet v1 (width 1.0, depthwise-separable convs), image x image RGB",
    kVisionParams,  kVisionOptions,
    kConvRoof,      /*check=*/nullptr,
    CountVision};
extern const FamilyDef kSqueezeNet10Family = {
    "squeezenet1_0", "SqueezeNet 1.0 (fire modules, conv classifier), image x image RGB",
    kVisionParams,   kVisionOptions,
    kConvRoof,       /*check=*/nullptr,
    CountVision};

}  // namespace paradnn::model
