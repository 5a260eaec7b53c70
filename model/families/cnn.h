// The CNN family's typed shape (torch-free): ResNet v1 with residual or
// bottleneck blocks, docs/models.md "CNN".
#ifndef PARADNN_MODEL_FAMILIES_CNN_H_
#define PARADNN_MODEL_FAMILIES_CNN_H_

#include <array>
#include <cstdint>
#include <vector>

#include "model/model_spec.h"

namespace paradnn::model {

enum class CnnBlockFn {
  kResidual,    // conv3x3(F, s) -> BN -> ReLU -> conv3x3(F) -> BN -> add -> ReLU; out F
  kBottleneck,  // conv1x1(F) -> BN -> ReLU -> conv3x3(F, s) -> BN -> ReLU -> conv1x1(4F) -> BN
                // -> add -> ReLU; out 4F
};

// The smallest image the head accepts: the last group's map is ceil(S/32)
// wide and the 7x7 average pool needs it to be at least 7.
inline constexpr int64_t kCnnMinImage = 193;

// stem -> four groups (channels filter * 1, 2, 4, 8; strides 1, 2, 2, 2;
// blocks[g] blocks each) -> avgpool 7x7/1 -> Linear(output).
struct CnnShape {
  CnnBlockFn block_fn = CnnBlockFn::kResidual;
  std::array<int64_t, 4> blocks = {0, 0, 0, 0};  // blocks per group
  int64_t filter = 0;
  int64_t image = 0;
  int64_t output = 0;
  int64_t batch = 0;
};

// The shape of a valid CNN spec (option `blocks`, when given, overrides the
// param `block` for all four groups).
CnnShape CnnShapeOf(const ModelSpec& spec);

// A valid CNN spec of `shape` (for tests and tools that start from a shape).
// Equal per-group counts are written as `block`, others as option `blocks`.
ModelSpec MakeCnnSpec(const CnnShape& shape, Precision precision = Precision::kFloat32,
                      OptimizerKind optimizer = OptimizerKind::kRmsProp);

// Output side of a convolution or pooling window (floor arithmetic, as
// LibTorch computes it with ceil_mode off).
int64_t CnnOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padding);

// One convolution of the network (all are square, without bias), in the
// order forward runs them.
struct CnnConvLayer {
  int64_t kernel = 0;
  int64_t stride = 0;
  int64_t padding = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t in_size = 0;      // input map side
  int64_t out_size = 0;     // output map side
  bool projection = false;  // the 1x1 shortcut of a group's first block
};

// Every convolution of `shape`'s network (stem first; within a block the
// main path, then the projection shortcut).
std::vector<CnnConvLayer> CnnConvLayers(const CnnShape& shape);

// Input features of the head's Linear: last group's channels x (m - 6)^2,
// m = the last group's map side.
int64_t CnnHeadFeatures(const CnnShape& shape);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_CNN_H_
