// The transformer family's typed shape (torch-free): Transformer base of
// Vaswani et al. 2017, encoder-decoder, as model/families/transformer.cc counts it and
// worker/runner/models/transformer.cc builds it.
#ifndef PARADNN_MODEL_FAMILIES_TRANSFORMER_H_
#define PARADNN_MODEL_FAMILIES_TRANSFORMER_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

// The fixed "base" architecture.
inline constexpr int64_t kTransformerLayers = 6;   // encoder layers = decoder layers
inline constexpr int64_t kTransformerModel = 512;  // d_model
inline constexpr int64_t kTransformerHeads = 8;
inline constexpr int64_t kTransformerFeedForward = 2048;  // d_ff
inline constexpr double kTransformerDropout = 0.1;

struct TransformerShape {
  int64_t batch = 0;
  int64_t length = 0;  // source and target tokens per example
  int64_t vocab = 0;   // shared source/target vocabulary
};

TransformerShape TransformerShapeOf(const ModelSpec& spec);
ModelSpec MakeTransformerSpec(const TransformerShape& shape,
                              Precision precision = Precision::kFloat32,
                              OptimizerKind optimizer = OptimizerKind::kRmsProp);

// Trainable parameters, closed form (see model/families/transformer.cc):
//   V·d + 6·(4d² + 4d + 2·d·F + F + d + 4d) + 6·(8d² + 8d + 2·d·F + F + d + 6d)
int64_t TransformerParams(int64_t vocab);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_TRANSFORMER_H_
