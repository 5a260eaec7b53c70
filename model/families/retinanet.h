// The retinanet family's typed shape (torch-free): RetinaNet (Lin et al.
// 2017, "Focal loss for dense object detection") with a ResNet-50 v1.5
// backbone and FPN P3–P7, as model/families/retinanet.cc counts it and
// worker/runner/models/retinanet.cc builds it.
#ifndef PARADNN_MODEL_FAMILIES_RETINANET_H_
#define PARADNN_MODEL_FAMILIES_RETINANET_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

inline constexpr int64_t kRetinaNetFpnChannels = 256;
inline constexpr int64_t kRetinaNetAnchors = 9;    // A: 3 scales × 3 aspect ratios
inline constexpr int64_t kRetinaNetHeadConvs = 4;  // 3×3 convs before each predictor
inline constexpr double kRetinaNetPositiveFraction = 0.01;
inline constexpr double kRetinaNetFocalAlpha = 0.25;
inline constexpr double kRetinaNetFocalGamma = 2.0;
inline constexpr double kRetinaNetSmoothL1Beta = 1.0 / 9.0;
inline constexpr double kRetinaNetPriorProbability = 0.01;
// ResNet-50: bottleneck blocks per stage and their widths (output 4× width).
inline constexpr int64_t kResNet50Blocks[4] = {3, 4, 6, 3};
inline constexpr int64_t kResNet50Widths[4] = {64, 128, 256, 512};

struct RetinaNetShape {
  int64_t batch = 0;
  int64_t image = 0;   // square input side, a multiple of 32
  int64_t output = 0;  // object classes K (background is not a class)
};

RetinaNetShape RetinaNetShapeOf(const ModelSpec& spec);
ModelSpec MakeRetinaNetSpec(const RetinaNetShape& shape, Precision precision = Precision::kFloat32,
                            OptimizerKind optimizer = OptimizerKind::kRmsProp);

// Side of the feature map of pyramid level `level` (3..7) for an image side:
// image/2^level for 3..5 (exact, image is a multiple of 32), then
// ceil(prev/2) for the stride-2 3×3 convs of P6 and P7.
int64_t RetinaNetLevelSide(int64_t image, int level);
// Anchors per image: A · Σ_{l=3..7} side_l².
int64_t RetinaNetAnchorsPerImage(int64_t image);
// Positive anchors per image in the synthetic targets: max(1, round(1 % of
// the anchors)).
int64_t RetinaNetPositivesPerImage(int64_t image);
// Trainable parameters, closed form (see model/families/retinanet.cc).
int64_t RetinaNetParams(int64_t classes);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_RETINANET_H_
