// The RNN family (docs/models.md "RNN"): its hyper-parameters and
// analytic counts.
//
// L layers, E embed (= hidden), T length, V vocab, B batch, g gates per cell
// (rnn 1, lstm 4, gru 3). LibTorch's cells carry two bias vectors per gate
// (b_ih and b_hh), so a layer has g(2E^2 + 2E) parameters, not the original
// TensorFlow cells' g(2E^2 + E).
//
//   params            = V*E                (embedding)
//                     + L*g*(2E^2 + 2E)    (W_ih, W_hh, b_ih, b_hh per layer)
//                     + E*V + V            (projection)
//   macs_per_example  = T * (L*g*(E + E)*E + E*V)
//                       per step and layer every gate multiplies the layer
//                       input (E) and the previous hidden state (E) by E
//                       outputs; the projection runs at every position. The
//                       embedding lookup is a gather: 0 MACs.
//   model_flops       = 6 * macs_per_example * B          (ParaDnn convention)
//   executed_flops    = forward 2*MAC*B + weight gradients 2*MAC*B + input
//                       gradients 2*MAC*B of every matmul, except the one
//                       input that needs no gradient: the zero initial state
//                       h_0 of each layer (one W_hh step per layer). The
//                       embedding's integer input has no gradient either,
//                       but the embedding does no MACs, so
//                     = model_flops - 2*B*L*g*E^2.
//   other_flops       = non-matmul arithmetic, one FLOP per element per
//                       operation (sigmoid and tanh one each, as exp and log
//                       in the loss), per hidden unit, per step, per example
//                       (kCell* below; bias adds and bias gradients of both
//                       bias vectors included):
//                         rnn  forward 4  (2 bias, add, tanh)
//                              backward 6 (tanh' 3, 2 bias grads, dh sum)
//                         lstm forward 21 (8 bias, 4 gate adds, 3 sigmoid,
//                                         tanh, f*c, i*g, add, tanh(c), o*)
//                              backward 31 (o* 2, tanh' 3, dc sum, f*c 2,
//                                         i*g 2, 3 sigmoid' 9, tanh' 3,
//                                         8 bias grads, dh sum)
//                         gru  forward 16 (6 bias, r and z: add + sigmoid
//                                         2 each, h_n*r, add, tanh, h-n, *z,
//                                         +n)
//                              backward 23 (*z 2, -n 1, dn sum, tanh' 3,
//                                         h_n*r 2, 2 sigmoid' 6, 6 bias
//                                         grads, 2 dh sums)
//                       plus the sums of the T per-step W_hh and b_hh
//                       gradients ((T-1)*g*(E^2 + E) per layer, independent
//                       of B), the projection's bias add and bias gradient
//                       (B*T*V each), the embedding gradient's scatter-add
//                       (B*T*E), softmax cross-entropy over B*T positions
//                       (kLossForwardFlopsPerLogit + kLossBackwardFlopsPerLogit
//                       per logit), the optimizer (OptimizerFlopsPerParam()
//                       per parameter).
//
// Bytes per step (method "layerwise-traffic-v3", as for FC): every tensor a
// kernel reads or writes, once per kernel, at its element size (e_w stored
// weights, gradients and optimizer state; e_c weights as a matmul reads them,
// 2 bytes for the autocast copy in mixed precision; e_a activations; int64
// token ids 8 bytes). The kernels are those of LibTorch 1.13's CPU RNN
// (aten/src/ATen/native/RNN.cpp, time-major): per layer one matmul computes
// the input gates of all T steps (x W_ih^T + b_ih); then per step one matmul
// h W_hh^T + b_hh and the cell's element-wise kernels; the step outputs are
// stacked. So:
//   forward:  embedding gather (ids, E rows of the table, output; mixed
//             precision: its float32 output is cast to 16 bits); per layer
//             the W_ih matmul (weights once, T*B*E in, T*B*gE out), per step
//             the W_hh matmul (weights again every step: T reads per step,
//             B*E in, B*gE out) and kCellForwardPasses element-wise tensor
//             passes of B*E elements (reads + writes, kernel by kernel; GRU
//             includes the two clones autograd makes for in-place multiplies),
//             the stack of outputs (2*T*B*E); projection and loss as FC.
//   backward: loss and projection as FC; per layer and step
//             kCellBackwardPasses element-wise passes, the W_hh weight
//             gradient (reads B*gE and B*E, writes gE*E, then autograd adds
//             it into the running sum: 3*gE*E more, T-1 times; the same for
//             b_hh), the h input gradient (T-1 steps: reads B*gE and W_hh,
//             writes B*E); per layer the step input-gate gradients stacked
//             (2*T*B*gE), the W_ih weight, bias and input gradients as one
//             matmul each; the embedding gradient zero-fills V*E and
//             scatter-adds T*B rows (read ids, read the gradient, read and
//             write the rows).
//   mixed precision: every parameter except the embedding (autocast does not
//             cast embedding) is read in float32 and written as a 16-bit
//             copy once per step (autocast's weight cache), and its gradient
//             cast back; the embedding output's gradient is cast back too.
//             The cell's zero initial state is float32 (the embedding output
//             is), so part of the element-wise math runs in float32 by type
//             promotion; it is counted at e_a, which understates those bytes.
//   optimizer: OptimizerTensorPassesPerParam(kFused) * params * e_w.
//
// activation_bytes: every activation tensor created in one step: the token
// ids, the embedding output (and its 16-bit copy in mixed precision), per
// layer the input gates (T*B*gE), kCellStepTensors*B*E per step (the gate
// pre-activations and every tensor the cell's kernels create, which autograd
// keeps for backward), the stacked output (T*B*E); the logits and
// log-probabilities (T*B*V each).
// peak_memory_estimate_bytes: weights + gradients + optimizer state
// (+ 16-bit weight copies and their gradients in mixed precision)
// + activation_bytes + labels (int64, T*B) + the two largest activation
// tensors (gradients alive at once in backward), the LayerLedger's rule.
//
// Counted through the LayerLedger (model/layer_ledger.h): W_ih as one Matmul
// over the T steps, W_hh as a RecurrentMatmul (T uses of one weight: cast
// once, T-1 gradient sums of g(E^2 + E) elements, one FLOP each, counted in
// other_flops), the cell as an element-wise op per step.

#include "model/families/rnn.h"

#include <cstdlib>

#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kRnnParams[] = {
    {"batch", 1, kMaxBatch, true, "examples (sequences) per training step"},
    kDevicesRule,
    {"embed", 1, 65536, true, "embedding width = hidden size of every cell"},
    kHostsRule,
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"layer", 1, 1024, true, "stacked recurrent layers"},
    {"length", 1, 65536, true, "time steps per sequence"},
    kOverlapRule,
    {"vocab", 2, kMaxVocab, true, "vocabulary size (embedding rows, classes)"},
};

constexpr const char* kCells[] = {"rnn", "lstm", "gru"};
constexpr OptionRule kRnnOptions[] = {
    {"cell", kCells, nullptr, "recurrent cell: rnn (tanh), lstm or gru"},
};

// Per hidden unit, per step, per example; see the comment at the top.
struct CellConstants {
  double forward_flops;
  double backward_flops;
  double forward_passes;   // element-wise tensor reads + writes, units of B*E
  double backward_passes;  // same, backward
  double step_tensors;     // tensors created per step, units of B*E
};

// rnn:  fwd add_ 3, tanh 2; bwd tanh' 3, dh sum 3. Creates hh out, h.
// lstm: fwd gates add_ 12, 4 activations 8, f*c 3, i*g 3, add_ 3, tanh(c) 2,
//       o*tanh 3; bwd o*tanh 6, tanh' 3, dc sum 3, f*c 6, i*g 6, 4
//       activations' 12, chunk concat 8, dh sum 3. Creates gates (4), i*g, c,
//       tanh(c), h.
// gru:  fwd r, z: add_ 3 + sigmoid_ 2 each, h_n*=r 3 (+2 clone), i_n+ 3,
//       tanh_ 2, h-n 3, *=z 3 (+2 clone), +=n 3; bwd *z 6, -n 2, dn sum 3,
//       tanh' 3, h_n*r 6, 2 sigmoid' 6, chunk concat 6, 2 dh sums 6.
//       Creates hh gates (3), i_n + h_n*r, h - n, two clones.
CellConstants ConstantsOf(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn:
      return {4, 6, 5, 6, 2};
    case RnnCell::kLstm:
      return {21, 31, 34, 47, 8};
    case RnnCell::kGru:
      return {16, 23, 31, 38, 7};
  }
  std::abort();
}

// The cell's element-wise kernels of one step as a ledger op over E units:
// the bias adds and bias gradients (2g each way per unit) are counted by the
// two matmuls' biases, and the W_hh output (g tensors) by its matmul.
ElementwiseCost CellCost(const CellConstants& k, double gates) {
  return {k.forward_flops - 2 * gates, k.backward_flops - 2 * gates, k.forward_passes,
          k.backward_passes, k.step_tensors - gates};
}

// The step outputs stacked into the layer's output (forward: read, write;
// backward: views of the gradient).
constexpr ElementwiseCost kStackOutputsCost = {0, 0, 2, 0, 1};
// The per-step input-gate gradients stacked into one tensor for the W_ih
// gradients (backward only: read, write).
constexpr ElementwiseCost kStackGateGradientsCost = {0, 0, 0, 2, 0};

RnnCell ParseCell(const std::string& name) {
  if (name == "rnn") return RnnCell::kRnn;
  if (name == "lstm") return RnnCell::kLstm;
  if (name == "gru") return RnnCell::kGru;
  // ParseModelSpec checked the option against kRnnOptions.
  std::abort();
}

// The RNN step through the LayerLedger: embedding, L recurrent layers (per
// layer one matmul for the input gates of all T steps, then T steps of the
// W_hh matmul and the cell), the projection at every position and the loss.
WorkCounts CountRnn(const ModelSpec& spec) {
  const RnnShape s = RnnShapeOf(spec);
  const CellConstants k = ConstantsOf(s.cell);
  // Doubles so that products never overflow; the integer counts fit int64
  // for every shape the rules allow (< 2^62).
  const double E = static_cast<double>(s.embed);
  const double T = static_cast<double>(s.length);
  const double V = static_cast<double>(s.vocab);
  const double g = RnnGates(s.cell);
  const double gE = g * E;
  LayerLedger l(spec);
  const double TB = T * l.batch();
  const double e_w = WeightElementBytes(spec.precision);  // the embedding output's dtype

  // Token ids: read by the gather and by its backward, kept for it.
  l.AddForwardBytes(TB * kIndexElementBytes);
  l.AddBackwardBytes(TB * kIndexElementBytes);
  l.AddActivationBytes(TB * kIndexElementBytes);
  l.Embedding(T, E, V, /*tied=*/false);
  if (l.mixed()) {  // autocast casts the float32 embedding output; its gradient is cast back
    l.AddForwardBytes(TB * E * (e_w + 2));
    l.AddBackwardBytes(TB * E * (2 + e_w));
    l.AddActivationBytes(TB * E * 2);
  }
  const ElementwiseCost cell = CellCost(k, g);
  for (int64_t layer = 0; layer < s.layer; ++layer) {
    l.Matmul(T * E * gE, T * E, T * gE, gE * E, gE, /*input_grad=*/true);  // x W_ih^T + b_ih
    l.RecurrentMatmul(T, E * gE, E, gE, gE * E, gE);                       // h W_hh^T + b_hh
    l.Elementwise(cell, E, T);
    l.Elementwise(kStackOutputsCost, T * E);
    l.Elementwise(kStackGateGradientsCost, T * gE);
  }
  l.Matmul(T * E * V, T * E, T * V, V * E, V, /*input_grad=*/true);  // projection
  l.Loss(T * V, kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit, /*fwd_passes=*/2,
         /*bwd_passes=*/2, /*kept=*/1);
  l.AddTargetBytes(TB * kIndexElementBytes);  // int64 labels
  return l.Finish();
}

}  // namespace

int RnnGates(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn:
      return 1;
    case RnnCell::kLstm:
      return 4;
    case RnnCell::kGru:
      return 3;
  }
  std::abort();
}

const char* RnnCellName(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn:
      return "rnn";
    case RnnCell::kLstm:
      return "lstm";
    case RnnCell::kGru:
      return "gru";
  }
  std::abort();
}

RnnShape RnnShapeOf(const ModelSpec& spec) {
  return RnnShape{ParseCell(spec.Option("cell")), spec.Param("layer"), spec.Param("embed"),
                  spec.Param("length"),           spec.Param("vocab"), spec.Param("batch")};
}

ModelSpec MakeRnnSpec(const RnnShape& shape, Precision precision, OptimizerKind optimizer) {
  return ModelSpec{"rnn",
                   {{"layer", shape.layer},
                    {"embed", shape.embed},
                    {"length", shape.length},
                    {"vocab", shape.vocab},
                    {"batch", shape.batch}},
                   {{"cell", RnnCellName(shape.cell)}},
                   precision,
                   optimizer,
                   {}};
}

extern const FamilyDef kRnnFamily = {
    "rnn",
    "language model: Embedding -> layer x RNN/LSTM/GRU (hidden = embed) -> Linear(vocab) per step",
    kRnnParams,
    kRnnOptions,
    kMatmulRoof,
    /*check=*/nullptr,
    CountRnn};

}  // namespace paradnn::model
