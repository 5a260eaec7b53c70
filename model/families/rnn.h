// The RNN family's typed shape (torch-free): RNN (tanh), LSTM or GRU
// language model per docs/models.md "RNN".
#ifndef PARADNN_MODEL_FAMILIES_RNN_H_
#define PARADNN_MODEL_FAMILIES_RNN_H_

#include <cstdint>

#include "model/model_spec.h"

namespace paradnn::model {

enum class RnnCell {
  kRnn,   // Elman cell, tanh: 1 gate
  kLstm,  // 4 gates (input, forget, cell, output)
  kGru,   // 3 gates (reset, update, new)
};

// Embedding[vocab, embed] -> `layer` stacked cells (hidden = embed) over
// `length` steps -> Linear(embed -> vocab) at every position.
struct RnnShape {
  RnnCell cell = RnnCell::kLstm;
  int64_t layer = 0;
  int64_t embed = 0;
  int64_t length = 0;
  int64_t vocab = 0;
  int64_t batch = 0;
};

// Gates per cell: 1, 4, 3.
int RnnGates(RnnCell cell);
// "rnn", "lstm", "gru".
const char* RnnCellName(RnnCell cell);

// The shape of a valid RNN spec.
RnnShape RnnShapeOf(const ModelSpec& spec);

// A valid RNN spec of `shape` (for tests and tools that start from a shape).
ModelSpec MakeRnnSpec(const RnnShape& shape, Precision precision = Precision::kFloat32,
                      OptimizerKind optimizer = OptimizerKind::kRmsProp);

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_FAMILIES_RNN_H_
