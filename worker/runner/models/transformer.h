// The transformer family in LibTorch: Transformer base, encoder-decoder,
// built layer by layer so that every op is one that model/families/transformer.cc
// counts (see there for the architecture).
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_TRANSFORMER_H_
#define PARADNN_WORKER_RUNNER_MODELS_TRANSFORMER_H_

#include <torch/torch.h>

#include <vector>

#include "model/families/transformer.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

// Multi-head attention with separate Q, K, V and output projections; then
// dropout, residual add and LayerNorm (post-LN sublayer).
class AttentionSublayerImpl : public torch::nn::Module {
 public:
  AttentionSublayerImpl();
  // x: [B, Lq, d] (queries and residual), memory: [B, Lk, d] (keys/values);
  // mask: additive [Lq, Lk] or undefined.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const torch::Tensor& mask);

 private:
  torch::nn::Linear q_{nullptr}, k_{nullptr}, v_{nullptr}, out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(AttentionSublayer);

// Linear(d, F) → ReLU → dropout → Linear(F, d) → dropout, residual, LayerNorm.
class FeedForwardSublayerImpl : public torch::nn::Module {
 public:
  FeedForwardSublayerImpl();
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear in_{nullptr}, out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(FeedForwardSublayer);

class TransformerBaseImpl : public torch::nn::Module {
 public:
  // Positions and causal mask for up to `length` tokens.
  TransformerBaseImpl(int64_t vocab, int64_t length);
  // source, target: [B, L ≤ length] int64 tokens; returns logits [B, L, vocab].
  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& target);

 private:
  torch::Tensor Embed(const torch::Tensor& tokens);

  torch::nn::Embedding embedding_{nullptr};  // tied with the output projection
  torch::Tensor positions_;                  // [length, d], sinusoidal
  torch::Tensor causal_mask_;                // [length, length], additive
  std::vector<AttentionSublayer> encoder_attention_;
  std::vector<FeedForwardSublayer> encoder_ffn_;
  std::vector<AttentionSublayer> decoder_self_;
  std::vector<AttentionSublayer> decoder_cross_;
  std::vector<FeedForwardSublayer> decoder_ffn_;
};
TORCH_MODULE(TransformerBase);

// Tokens uniform in [0, vocab): source [B, L] and target [B, L+1]; the decoder
// reads target[:, :L] (teacher forcing, causal mask) and predicts
// target[:, 1:]; cross-entropy averaged over every target position.
// LibTorch's default Linear/Embedding/LayerNorm initialization (the tied
// table N(0, 1), so the first logits have scale ~√d and the first loss is
// far above ln V).
TrainingProblem BuildTransformerProblem(const ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_TRANSFORMER_H_
