// LayerLedger: accumulates the analytic counts of one training step layer by
// layer; every layered family counts through it (fc, cnn, rnn, the vision
// models, transformer, retinanet), so one op is counted one way. The
// caller walks its network in forward order with the real shapes and
// reports every op once; the ledger applies the conventions of
// docs/models.md "Counting work" and the byte method
// "layerwise-traffic-v3" (model_counts.h), whose closed form for FC is
// spelled out in model/families/fc.cc:
//
//   matmul-like op (Linear, convolution) with M MACs per example:
//     forward 2·M·B, weight gradient 2·M·B, input gradient 2·M·B unless the
//     op reads the network's input (needs no gradient);
//     bytes: forward reads the weights (e_c) and the input (e_a) and writes
//     the output; backward: dW reads dY and the saved input and writes dW,
//     db reads dY, dX reads dY and W and writes dX. Mixed precision adds the
//     autocast copy of each matmul parameter (read e_w, write e_c) on its
//     first use in the step (autocast caches it) and the float32 cast of each
//     gradient. Autocast (CPU and CUDA) casts only matmul-like ops' weights:
//     normalization parameters and embedding tables stay at e_w.
//     A bias costs one FLOP per output element forward and one backward.
//   a matmul whose weights serve every step of a recurrence
//     (RecurrentMatmul): counted once per step, its weights cast once, its
//     per-step gradients summed (below); the first step's input, the zero
//     initial state, needs no gradient.
//   activation-activation matmul (attention): both operands need gradients,
//     so 2·M·B forward and 2·M·B for each operand's gradient; M counts in
//     macs_per_example (model_flops stays 6·MACs·B).
//   element-wise / normalization / data-movement op: ElementwiseCost says its
//     FLOPs per element and tensor passes (reads + writes of tensors of its
//     size) forward and backward, and how many tensors of its size it keeps
//     for backward.
//   a parameter used more than once per step (shared heads, tied embedding)
//     is counted once in params and its per-use gradients are summed (one
//     FLOP and three passes per element per extra use).
//   a tensor consumed by n ops gets n−1 gradient sums in backward (Fork()).
//
// activation_bytes counts every tensor the forward produces (outputs, and the
// extra tensors an op keeps such as dropout masks), an upper bound on what
// autograd holds at the end of the forward pass.
// peak_memory_estimate_bytes = weights + gradients + optimizer state
// (+ 16-bit weight and gradient copies in mixed precision) + activation_bytes
// + label bytes + the two largest activation tensors (gradients alive at once
// in backward) + the largest scratch buffer of one op (Workspace: a conv's
// im2col columns).
#ifndef PARADNN_MODEL_LAYER_LEDGER_H_
#define PARADNN_MODEL_LAYER_LEDGER_H_

#include <cstdint>
#include <vector>

#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {

// Cost of an element-wise (or reduction/normalization) op per element of its
// output, as LibTorch 1.13's CPU kernels run it. FLOPs count each arithmetic
// operation (exp, log, sqrt, compare, random draw included) as one.
struct ElementwiseCost {
  double fwd_flops;
  double bwd_flops;
  double fwd_passes;  // tensors of the op's size read + written forward
  double bwd_passes;  // ... backward
  double kept;        // tensors of the op's size produced in forward (output + saved extras)
};

// Bytes of an int64 index element: max-pool argmax indices, token ids, labels.
inline constexpr double kIndexElementBytes = 8;

// ReLU: y = max(x, 0); backward reads dY and Y, writes dX.
inline constexpr ElementwiseCost kReluCost = {1, 1, 2, 3, 1};
// Residual add y = a + b (3 passes); backward passes the gradient through.
inline constexpr ElementwiseCost kAddCost = {1, 0, 3, 0, 1};
// x * constant (embedding scale, attention 1/sqrt(d_k)).
inline constexpr ElementwiseCost kScaleCost = {1, 1, 2, 2, 1};
// LibTorch 1.13 CPU dropout in training: noise = empty.bernoulli_(1-p) (1
// draw, 1 write), noise.div_(1-p) (1 FLOP, 2 passes), y = x * noise (1 FLOP,
// 3 passes); backward dX = dY * noise (1 FLOP, 3 passes); keeps y and noise.
inline constexpr ElementwiseCost kDropoutCost = {3, 1, 6, 3, 2};
// Softmax over the last dimension, one fused kernel: max, subtract, exp, sum,
// divide (5); backward dX = Y·(dY − sum(dY·Y)): multiply, sum, subtract,
// multiply (4), reading dY and Y and writing dX.
inline constexpr ElementwiseCost kSoftmaxCost = {5, 4, 2, 3, 1};
// LayerNorm (native_layer_norm, one kernel): mean 1, variance 3 (subtract,
// square, sum), normalize 2, affine 2 = 8; backward 10 (dβ 1, dγ 2, dX 7)
// reading dY and X and writing dX.
inline constexpr ElementwiseCost kLayerNormCost = {8, 10, 2, 3, 1};
// BatchNorm in training mode: statistics pass (read X; sum for the mean 1,
// sum of squares 2), normalize + affine pass (read X, write Y; (x − mean) ·
// invstd 2, γ·x̂ + β 2) = 7 FLOPs, 3 passes; backward: reduction pass over dY
// and X (x̂ again 2, Σdy 1, Σdy·x̂ 2) and dX pass (read dY, X, write dX;
// γ·invstd·(dy − mean(dy) − x̂·mean(dy·x̂)) 4) = 9 FLOPs, 5 passes. Running
// statistics and invstd are per channel (ignored).
inline constexpr ElementwiseCost kBatchNormCost = {7, 9, 3, 5, 1};
// ReLU in place (torchvision's inplace=True): as kReluCost, but its output is
// its input's tensor, so it adds no activation.
inline constexpr ElementwiseCost kReluInPlaceCost = {1, 1, 2, 3, 0};
// Channel concatenation (DenseNet): forward reads the operands and writes the
// output; backward accumulates every element of the output gradient into its
// operand's gradient (1 FLOP; read dY, read and write the operand gradient),
// an upper bound: the first consumer of a feature assigns rather than adds.
inline constexpr ElementwiseCost kConcatCost = {0, 1, 2, 3, 1};
// A layout copy (permute/transpose made contiguous, cat): forward and backward
// read one tensor and write one.
inline constexpr ElementwiseCost kCopyCost = {0, 0, 2, 2, 1};
// Adding a broadcast constant tensor (causal mask, positional encoding):
// forward reads x and the constant and writes y; the gradient passes through.
inline constexpr ElementwiseCost kAddConstantCost = {1, 0, 3, 0, 1};

class LayerLedger {
 public:
  explicit LayerLedger(const ModelSpec& spec);

  double batch() const { return batch_; }
  bool mixed() const { return mixed_; }
  double activation_element_bytes() const { return e_a_; }

  // A Linear or convolution layer. macs/in/out are per example; weights and
  // bias are parameter elements. input_grad: backward computes dX (false for
  // the layer reading the network input). first_use: false when the same
  // parameters were already counted this step (shared heads, tied weights):
  // no new params, no new autocast copy, and one gradient sum. in_bytes: the
  // element size of the input it reads (0: activations, e_a).
  void Matmul(double macs, double in, double out, double weights, double bias, bool input_grad,
              bool first_use = true, double in_bytes = 0);

  // A matmul of two activations (attention scores Q·Kᵀ, context P·V); a, b
  // and out are per example.
  void ActivationMatmul(double macs, double a, double b, double out);

  // An element-wise op over `elems` elements per example.
  void Elementwise(const ElementwiseCost& cost, double elems) { Elementwise(cost, elems, 1); }

  // The matmul of a recurrence: `steps` steps of macs/in/out per example,
  // one set of weights and bias (LibTorch's W_hh, b_hh). Step one reads the
  // zero initial state (no input gradient); the weights are cast once and
  // their `steps` per-step gradients summed.
  void RecurrentMatmul(double steps, double macs, double in, double out, double weights,
                       double bias);

  // An element-wise op over `elems` elements per example, run `steps` times
  // (the steps of a recurrence: `steps` tensors of `elems`).
  void Elementwise(const ElementwiseCost& cost, double elems, double steps);

  // A normalization layer (LayerNorm/BatchNorm) over `elems` per example
  // with `channels` scale and shift parameters (never autocast).
  void Norm(const ElementwiseCost& cost, double elems, double channels);

  // A pooling window over `in` elements per example giving `out`:
  // fwd_flops and bwd_flops per output element; forward reads the input and
  // writes the output, backward reads dY and writes dX.
  void Pool(double in, double out, double fwd_flops, double bwd_flops);
  // Max pool with a window of `window` elements: window − 1 comparisons per
  // output forward, one scatter backward, and the int64 argmax indices it
  // writes, keeps and reads back.
  void MaxPool(double in, double out, double window);

  // A scratch buffer of `elems` activation elements per example that one op
  // needs while it runs (a conv's im2col columns): the largest adds to peak
  // memory.
  void Workspace(double elems);

  // A tensor of `elems` per example consumed by `consumers` ops: its
  // gradients are summed in backward (consumers − 1 sums).
  void Fork(double elems, int consumers);

  // An embedding lookup of `rows` rows of a [table_rows, width] table per
  // example, with 0 MACs. Its table is counted by the Matmul of the tied
  // output projection (first_use there) when `tied`, else here.
  // Backward: embedding_dense_backward zero-fills a table-sized gradient and
  // adds each looked-up row's gradient into it. Autocast leaves the lookup
  // alone: the rows, the output and its gradient are at e_w.
  void Embedding(double rows, double width, double table_rows, bool tied);

  // A loss over `elems` per example with the given FLOPs and passes per element.
  void Loss(double elems, double fwd_flops, double bwd_flops, double fwd_passes, double bwd_passes,
            double kept);

  // The network's input of `elems` per example (FC features, the image
  // batch), as the runner feeds it: float32 in mixed precision, which
  // autocast casts to 16 bits once (read 4, write 2 bytes), else at e_a.
  // Counts it (and its copy) as activations.
  void NetworkInput(double elems);
  // The element size the first layer reads its input at (the 16-bit copy in
  // mixed precision): Matmul's in_bytes for the layer that reads the input.
  double input_element_bytes() const { return mixed_ ? e_c_ : e_a_; }

  // Forward bytes the caller counts itself (e.g. the mixed-precision cast of
  // a float32 input), per step.
  void AddForwardBytes(double bytes) { b_.activation_fwd_bytes += bytes; }
  // Backward bytes the caller counts itself, per step.
  void AddBackwardBytes(double bytes) { b_.activation_bwd_bytes += bytes; }
  // Activation memory the caller counts itself, per step.
  void AddActivationBytes(double bytes) { activation_bytes_ += bytes; }
  // Bytes of labels and other targets (peak memory only).
  void AddTargetBytes(double bytes) { target_bytes_ += bytes; }

  int64_t params() const { return params_; }
  double macs_per_example() const { return macs_; }

  // Branches that run beside each other (for OperatorWidth): between
  // BeginBranches and EndBranches, each NextBranch starts another branch
  // from the same input; the longest branch counts toward the longest
  // path, every branch's heavy operators toward the total. Nestable.
  // Matmul, ActivationMatmul, Embedding and each step of RecurrentMatmul
  // are heavy operators; outside branches they run one after another.
  void BeginBranches();
  void NextBranch();
  void EndBranches();
  // The heavy operators so far and the longest chain of them.
  OperatorWidth width() const;

  // The counts of the step. model_flops = 6·macs_per_example·B.
  WorkCounts Finish() const;

 private:
  // Parameters' first use in the step (counted in params; autocast: cast).
  void FirstUse(double n, bool autocast);
  // `times` more uses of parameters already counted: each writes its own
  // gradient, which autograd adds into the accumulated one.
  void Reuse(double n, double times);
  void Params(double n, bool first_use, bool read_for_input_grad);
  // `times` tensors of `elems` per example, of `element_bytes` (0: e_a).
  void Track(double elems_per_example, double times = 1, double element_bytes = 0);
  // `count` heavy operators, one after another on the current branch.
  void Heavy(int64_t count = 1);

  ModelSpec spec_;
  double batch_;
  bool mixed_;
  double e_w_, e_c_, e_a_;
  int64_t params_ = 0;
  double cast_params_ = 0;  // parameters autocast copies (mixed precision)
  double macs_ = 0;
  double executed_ = 0;
  double activation_bytes_ = 0;
  double target_bytes_ = 0;
  double largest_ = 0;
  double second_ = 0;
  double workspace_ = 0;
  WorkBreakdown b_;
  // OperatorWidth: heavy operators, the chain on the current branch since
  // its region began, and per open region the chain before it and its
  // longest branch so far.
  struct BranchRegion {
    int64_t path_before = 0;
    int64_t longest_branch = 0;
  };
  int64_t heavy_ops_ = 0;
  int64_t path_ = 0;
  std::vector<BranchRegion> regions_;
};

}  // namespace paradnn::model

#endif  // PARADNN_MODEL_LAYER_LEDGER_H_
