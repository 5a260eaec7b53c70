// The inception family's typed shape (torch-free): a wide network of
// Inception-style blocks whose `branches` parallel branches make inter-op
// parallelism matter (issue 40; docs/models.md "Inception").
#ifndef PARADNN_MODEL_FAMILIES_INCEPTION_H_
#define PARADNN_MODEL_FAMILIES_INCEPTION_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

// stem conv 3x3/2 pad 1 (3 -> branches x filter channels) -> BN -> ReLU ->
// `block` blocks, each: `branches` branches side by side, every branch
// conv 1x1 (branches x filter -> filter) -> BN -> ReLU -> conv 3x3 pad 1
// (filter -> filter) -> BN -> ReLU, their outputs concatenated (branches x
// filter channels, the map's side unchanged) -> global average pool ->
// Linear(output) -> softmax cross-entropy. Convs without bias.
struct InceptionShape {
  int64_t block = 0;
  int64_t branches = 0;
  int64_t filter = 0;  // channels of each branch
  int64_t image = 0;
  int64_t output = 0;
  int64_t batch = 0;
};

// The channels every block reads and writes: branches x filter.
inline int64_t InceptionChannels(const InceptionShape& s) { return s.branches * s.filter; }
// The side of the map after the stem (and of every block's).
inline int64_t InceptionMapSide(const InceptionShape& s) { return (s.image - 1) / 2 + 1; }

InceptionShape InceptionShapeOf(const ModelSpec& spec);
ModelSpec MakeInceptionSpec(const InceptionShape& shape, Precision precision = Precision::kFloat32,
                            OptimizerKind optimizer = OptimizerKind::kRmsProp);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_INCEPTION_H_
