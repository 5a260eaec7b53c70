// The FC family's typed shape (torch-free).
#ifndef PARADNN_MODEL_FAMILIES_FC_H_
#define PARADNN_MODEL_FAMILIES_FC_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

// FC: input -> [Linear(node) + ReLU] x layer -> Linear(output).
struct FcShape {
  int64_t layer = 0;
  int64_t node = 0;
  int64_t input = 0;
  int64_t output = 0;
  int64_t batch = 0;
};

// The shape of a valid FC spec.
FcShape FcShapeOf(const ModelSpec& spec);

// A valid FC spec of `shape` (for tests and tools that start from a shape).
ModelSpec MakeFcSpec(const FcShape& shape, Precision precision = Precision::kFloat32,
                     OptimizerKind optimizer = OptimizerKind::kRmsProp);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_FC_H_
