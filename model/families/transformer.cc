// The transformer family: Transformer base (Vaswani et al. 2017, "Attention
// is all you need"), encoder-decoder, trained with teacher forcing on
// synthetic tokens. Hyper-parameters and analytic counts.
//
// Architecture (worker/runner/models/transformer.cc builds exactly this): d = 512, h = 8
// heads of d_k = 64, F = 2048, 6 encoder and 6 decoder layers, post-LayerNorm
// (x = LN(x + Dropout(sublayer(x)))), ReLU in the FFN, dropout 0.1 on the
// embeddings+positions, on every sublayer output, after the FFN's ReLU and on
// the attention probabilities. Sinusoidal positions (not trainable).
// Embedding weights scaled by √d; one [V, d] table shared by the source and
// target embeddings and tied with the output projection (no output bias), as
// the paper (section 3.4) does with its shared BPE vocabulary.
// Q, K, V and output projections are separate d×d Linear layers with bias.
// No final encoder/decoder LayerNorm (post-LN already ends each layer with one).
//
// Parameters, with V = vocab:
//   tied table                 V·d
//   encoder layer   attention 4d² + 4d, FFN 2·d·F + F + d, 2 LayerNorms 4d
//   decoder layer   2 attentions 8d² + 8d, FFN 2·d·F + F + d, 3 LayerNorms 6d
//   total = V·d + 6·3,152,384 + 6·4,204,032 = V·d + 44,138,496
// vocab 37000 (the paper's shared EN-DE BPE vocabulary): 63,082,496, against
// the published "base" 65 M (Table 3, rounded; implementations of base land
// between 63 M and 65 M depending on vocabulary, biases and final norms);
// vocab 32000 (default): 60,522,496.
//
// MACs per example (L = length, both sides), from the real shapes:
//   each attention with queries Lq and keys Lk: Q projection Lq·d², K and V
//   projections Lk·d² each, scores Q·Kᵀ h·Lq·Lk·d_k = Lq·Lk·d, context P·V
//   Lq·Lk·d, output projection Lq·d²;
//   each FFN 2·L·d·F; output projection L·d·V; embedding lookups 0 (gather).
//   = 6·(4L·d² + 2L²·d + 2L·d·F)  encoder
//   + 6·(8L·d² + 4L²·d + 2L·d·F)  decoder (self + cross attention)
//   + L·d·V
// model_flops = 6·MACs·B. executed_flops: every Linear has forward, weight
// gradient and input gradient (2·MAC each; the embedding gather is the first
// layer, so no matmul reads the network input); the two attention matmuls
// multiply two activations and compute both operands' gradients (3 × 2·MAC).
// So executed_flops = model_flops exactly.
//
// other_flops, one FLOP per element per operation (layer_ledger.h gives the
// constants): bias add/gradient, ReLU, scaling by √d and 1/√d_k, positional
// add, causal mask add, softmax (5 fwd / 4 bwd per score), dropout (3 / 1),
// LayerNorm (8 / 10), residual adds, gradient sums where a tensor feeds
// several ops (x → Q, K, V and the residual; the encoder output → 12 K/V
// projections), the embedding gradient scatter-add and the sum of the tied
// table's three gradients, softmax cross-entropy (5 / 4 per logit) and the
// optimizer (OptimizerFlopsPerParam per parameter).
// Bytes: "layerwise-traffic-v3" via LayerLedger; the head split and merge
// are real contiguous copies (counted); views are free.
// Activation and peak memory: LayerLedger (every forward tensor, dropout
// masks included, + states + tokens int64 + two largest gradients).

#include "model/families/transformer.h"

#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kTransformerParams[] = {
    {"batch", 1, kMaxModelBatch, true, "sentence pairs per training step"},
    kDevicesRule,
    kHostsRule,
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    {"length", 1, 65536, false, "source and target sequence length", 128},
    kOverlapRule,
    {"vocab", 2, kMaxVocab, false, "shared source/target vocabulary (tied embeddings)", 32000},
};

void CountAttention(LayerLedger& l, double lq, double lk, bool causal) {
  const double d = kTransformerModel, h = kTransformerHeads;
  l.BeginBranches();  // Q, K and V from their inputs, side by side
  l.Matmul(lq * d * d, lq * d, lq * d, d * d, d, true);  // Q
  l.NextBranch();
  l.Matmul(lk * d * d, lk * d, lk * d, d * d, d, true);  // K
  l.NextBranch();
  l.Matmul(lk * d * d, lk * d, lk * d, d * d, d, true);  // V
  l.EndBranches();
  l.Elementwise(kCopyCost, lq * d);  // split heads of Q, K, V
  l.Elementwise(kCopyCost, lk * d);
  l.Elementwise(kCopyCost, lk * d);
  l.Elementwise(kScaleCost, lq * d);                             // Q / √d_k
  l.ActivationMatmul(lq * lk * d, lq * d, lk * d, h * lq * lk);  // Q·Kᵀ
  if (causal) l.Elementwise(kAddConstantCost, h * lq * lk);
  l.Elementwise(kSoftmaxCost, h * lq * lk);
  l.Elementwise(kDropoutCost, h * lq * lk);
  l.ActivationMatmul(lq * lk * d, h * lq * lk, lk * d, lq * d);  // P·V
  l.Elementwise(kCopyCost, lq * d);                              // merge heads
  l.Matmul(lq * d * d, lq * d, lq * d, d * d, d, true);          // output projection
  l.Elementwise(kDropoutCost, lq * d);
  l.Elementwise(kAddCost, lq * d);
  l.Norm(kLayerNormCost, lq * d, d);
}

void CountFeedForward(LayerLedger& l, double len) {
  const double d = kTransformerModel, f = kTransformerFeedForward;
  l.Fork(len * d, 2);  // FFN and residual
  l.Matmul(len * d * f, len * d, len * f, d * f, f, true);
  l.Elementwise(kReluCost, len * f);
  l.Elementwise(kDropoutCost, len * f);
  l.Matmul(len * f * d, len * f, len * d, f * d, d, true);
  l.Elementwise(kDropoutCost, len * d);
  l.Elementwise(kAddCost, len * d);
  l.Norm(kLayerNormCost, len * d, d);
}

WorkCounts CountTransformer(const ModelSpec& spec) {
  const TransformerShape s = TransformerShapeOf(spec);
  const double len = static_cast<double>(s.length), v = static_cast<double>(s.vocab);
  const double d = kTransformerModel;
  LayerLedger l(spec);
  // The source and target embeddings side by side (the decoder's first
  // self-attention could run beside the encoder too: not counted, so the
  // width is a little low).
  l.BeginBranches();
  for (int side = 0; side < 2; ++side) {  // source, target
    if (side == 1) l.NextBranch();
    l.Embedding(len, d, v, /*tied=*/true);
    l.Elementwise(kScaleCost, len * d);        // · √d
    l.Elementwise(kAddConstantCost, len * d);  // + positions
    l.Elementwise(kDropoutCost, len * d);
  }
  l.EndBranches();
  for (int64_t k = 0; k < kTransformerLayers; ++k) {
    l.Fork(len * d, 4);  // Q, K, V, residual
    CountAttention(l, len, len, /*causal=*/false);
    CountFeedForward(l, len);
  }
  l.Fork(len * d, static_cast<int>(2 * kTransformerLayers));  // memory → K, V of every layer
  for (int64_t k = 0; k < kTransformerLayers; ++k) {
    l.Fork(len * d, 4);
    CountAttention(l, len, len, /*causal=*/true);
    l.Fork(len * d, 2);  // cross-attention Q and residual
    CountAttention(l, len, len, /*causal=*/false);
    CountFeedForward(l, len);
  }
  // Output projection with the tied table (its params are counted here).
  l.Matmul(len * d * v, len * d, len * v, v * d, 0, true);
  l.Loss(len * v, kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit, 2, 2, 1);
  l.AddTargetBytes(l.batch() * (2 * len + 1) * 8);  // source [B, L], target [B, L+1] int64
  return l.Finish();
}

}  // namespace

TransformerShape TransformerShapeOf(const ModelSpec& spec) {
  return TransformerShape{spec.batch(), spec.Param("length"), spec.Param("vocab")};
}

ModelSpec MakeTransformerSpec(const TransformerShape& shape, Precision precision,
                              OptimizerKind optimizer) {
  return ModelSpec{"transformer",
                   {{"batch", shape.batch}, {"length", shape.length}, {"vocab", shape.vocab}},
                   {},
                   precision,
                   optimizer,
                   {}};
}

int64_t TransformerParams(int64_t vocab) {
  const int64_t d = kTransformerModel, f = kTransformerFeedForward;
  const int64_t ffn = 2 * d * f + f + d;
  const int64_t encoder = (4 * d * d + 4 * d) + ffn + 4 * d;
  const int64_t decoder = (8 * d * d + 8 * d) + ffn + 6 * d;
  return vocab * d + kTransformerLayers * (encoder + decoder);
}

extern const FamilyDef kTransformerFamily = {
    "transformer",
    "Transformer base (Vaswani 2017): 6+6 layers, d 512, 8 heads, d_ff 2048, tied embeddings",
    kTransformerParams,
    {},
    kMatmulRoof,
    /*check=*/nullptr,
    CountTransformer};

}  // namespace paradnn::model
