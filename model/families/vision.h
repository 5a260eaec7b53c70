// The paper's real-world image classifiers, torch-free: `resnet50`,
// `densenet121`, `mobilenet_v1`, `squeezenet1_0`. Each model is described
// once as a list of layer records (VisionLayers) with the real feature-map
// sizes of a given image size; the analytic counts walk that list, and the
// LibTorch models (worker/runner/models/vision.h) are checked against it parameter by
// parameter (VisionParameterShapes), so counts and networks cannot drift.
//
// Every family takes `batch` (required), `image` (default 224) and `output`
// (classes, default 1000). Input [batch, 3, image, image] uniform in [0, 1),
// labels uniform in [0, output), softmax cross-entropy, BN in training mode.
#ifndef PARADNN_MODEL_FAMILIES_VISION_H_
#define PARADNN_MODEL_FAMILIES_VISION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {

enum class VisionArch {
  // ResNet-50 as torchvision builds it ("v1.5": the stride-2 of a group's first
  // bottleneck is on its 3x3 conv, not its first 1x1). 25,557,032 params.
  kResNet50,
  // DenseNet-121: growth 32, bn_size 4, blocks 6-12-24-16, compression 0.5,
  // torchvision's layout. 7,978,856 params.
  kDenseNet121,
  // MobileNet v1, width 1.0: 3x3 stem, 13 depthwise-separable blocks with
  // BN + ReLU after every conv, global average pool, Linear(1024, output).
  // 4,231,976 params.
  kMobileNetV1,
  // SqueezeNet 1.0 as torchvision builds it: fire modules, dropout 0.5, a 1x1
  // conv classifier + ReLU, adaptive average pool. 1,248,424 params.
  kSqueezeNet10,
};

inline constexpr VisionArch kAllVisionArchs[] = {VisionArch::kResNet50, VisionArch::kDenseNet121,
                                                 VisionArch::kMobileNetV1,
                                                 VisionArch::kSqueezeNet10};

// "resnet50", "densenet121", "mobilenet_v1", "squeezenet1_0".
const char* VisionFamilyName(VisionArch arch);
// The arch of a family name, or nullopt for any other family.
std::optional<VisionArch> VisionArchOf(const std::string& family);

struct VisionShape {
  int64_t image = 224;
  int64_t output = 1000;
  int64_t batch = 0;
};

// The shape of a valid spec of one of the four families.
VisionShape VisionShapeOf(const ModelSpec& spec);
// A valid spec (for tests and tools that start from a shape).
ModelSpec MakeVisionSpec(VisionArch arch, const VisionShape& shape,
                         Precision precision = Precision::kFloat32,
                         OptimizerKind optimizer = OptimizerKind::kRmsProp);

// Per-example feature map.
struct FeatureShape {
  int64_t c = 0;
  int64_t h = 0;
  int64_t w = 0;
  int64_t elements() const { return c * h * w; }
};

// One operation of a network, with its per-example input and output shapes.
struct VisionLayer {
  enum class Kind {
    kConv,           // kernel x kernel, stride, padding, groups, optional bias
    kLinear,         // in.c -> out.c on a 1x1 map (flattened features)
    kBatchNorm,      // affine, training mode
    kRelu,           // in place on its input (as torchvision's models do)
    kMaxPool,        // kernel, stride, padding, ceil_mode
    kAvgPool,        // kernel, stride (no padding)
    kGlobalAvgPool,  // adaptive average pool to 1x1
    kAdd,            // residual add of two `out`-shaped tensors
    kConcat,         // channel concatenation of `operands` tensors into `out`
    kDropout,        // p = 0.5, training mode
    kFork,           // `in` is read by `operands` consumers: backward sums their gradients
    // Markers, no work: the layers between kBranches and kEndBranches form
    // branches that run side by side, each after kBranches or kNextBranch
    // (a ResNet block's main path and projection, a fire module's expands;
    // LayerLedger::BeginBranches, for the operator width).
    kBranches,
    kNextBranch,
    kEndBranches,
  };
  Kind kind;
  // The LibTorch module path (e.g. "layer1.0.conv1"); parameters are
  // "<name>.weight" / "<name>.bias".
  std::string name;
  FeatureShape in;
  FeatureShape out;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t groups = 1;
  bool bias = false;
  bool ceil_mode = false;
  int64_t operands = 1;
  // The conv that reads the image: its input needs no gradient.
  bool reads_image = false;

  // Trainable elements (conv/linear weight and bias, BN gamma and beta).
  int64_t Params() const;
  // Multiply-accumulates per example (conv: k^2 * Cin/groups * Cout * Hout *
  // Wout; linear: in * out); 0 for every other kind.
  int64_t Macs() const;
};

// The analytic counts (model_counts.h) of a valid spec of the four
// families (vision_counts.cc).
WorkCounts CountVision(const ModelSpec& spec);

// The layers of `arch` for a square image of side `image` and `output`
// classes, in execution order. Every feature map of image >= 32 is at least
// 1x1 (aborts otherwise: a broken invariant of the family's ranges).
std::vector<VisionLayer> VisionLayers(VisionArch arch, int64_t image, int64_t output);

// The trainable parameters those layers imply, as LibTorch names and shapes
// them ("<name>.weight" [Cout, Cin/groups, k, k], ...), in layer order.
std::vector<std::pair<std::string, std::vector<int64_t>>> VisionParameterShapes(
    const std::vector<VisionLayer>& layers);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_VISION_H_
