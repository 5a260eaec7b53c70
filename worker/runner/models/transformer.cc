#include "worker/runner/models/transformer.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::kTransformerDropout;
using model::kTransformerFeedForward;
using model::kTransformerHeads;
using model::kTransformerLayers;
using model::kTransformerModel;
using model::ModelSpec;
using model::TransformerShape;
using model::TransformerShapeOf;
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kD = kTransformerModel;
constexpr int64_t kHeads = kTransformerHeads;
constexpr int64_t kHeadDim = kD / kHeads;

torch::Tensor Dropout(const torch::Tensor& x, bool training) {
  return torch::dropout(x, kTransformerDropout, training);
}

// [B, L, d] → [B, h, L, d_k], contiguous (a real copy, as counted).
torch::Tensor SplitHeads(const torch::Tensor& x) {
  return x.view({x.size(0), x.size(1), kHeads, kHeadDim}).transpose(1, 2).contiguous();
}

// Sinusoidal positions [L, d] (Vaswani et al. 3.5), not trainable.
torch::Tensor Positions(int64_t length) {
  auto pos = torch::arange(length, torch::kFloat32).unsqueeze(1);
  auto i = torch::arange(0, kD, 2, torch::kFloat32);
  auto angle = pos * torch::exp(i * (-std::log(10000.0) / static_cast<double>(kD)));
  auto pe = torch::zeros({length, kD}, torch::kFloat32);
  pe.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)},
                torch::sin(angle));
  pe.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                torch::cos(angle));
  return pe;
}

}  // namespace

AttentionSublayerImpl::AttentionSublayerImpl() {
  q_ = register_module("q", torch::nn::Linear(kD, kD));
  k_ = register_module("k", torch::nn::Linear(kD, kD));
  v_ = register_module("v", torch::nn::Linear(kD, kD));
  out_ = register_module("out", torch::nn::Linear(kD, kD));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kD})));
}

torch::Tensor AttentionSublayerImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                             const torch::Tensor& mask) {
  const int64_t batch = x.size(0), lq = x.size(1);
  auto q = SplitHeads(q_->forward(x)) * (1.0 / std::sqrt(static_cast<double>(kHeadDim)));
  auto k = SplitHeads(k_->forward(memory));
  auto v = SplitHeads(v_->forward(memory));
  auto scores = torch::matmul(q, k.transpose(-2, -1));  // [B, h, Lq, Lk]
  if (mask.defined()) scores = scores + mask.to(scores.scalar_type());
  auto probs = Dropout(torch::softmax(scores, -1), is_training());
  auto context = torch::matmul(probs, v).transpose(1, 2).contiguous().view({batch, lq, kD});
  return norm_->forward(x + Dropout(out_->forward(context), is_training()));
}

FeedForwardSublayerImpl::FeedForwardSublayerImpl() {
  in_ = register_module("in", torch::nn::Linear(kD, kTransformerFeedForward));
  out_ = register_module("out", torch::nn::Linear(kTransformerFeedForward, kD));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kD})));
}

torch::Tensor FeedForwardSublayerImpl::forward(const torch::Tensor& x) {
  auto h = Dropout(torch::relu(in_->forward(x)), is_training());
  return norm_->forward(x + Dropout(out_->forward(h), is_training()));
}

TransformerBaseImpl::TransformerBaseImpl(int64_t vocab, int64_t length) {
  embedding_ = register_module("embedding", torch::nn::Embedding(vocab, kD));
  // As the Transformer initializes its shared embedding (Vaswani et al.;
  // tensor2tensor): N(0, d^-1/2), so that x sqrt(d) gives unit-scale inputs.
  // LibTorch's N(0, 1) default with the tied output projection gave logits
  // of std ~22.6 whose softmax gradients were 28 % subnormal: the output
  // layer's backward matmuls then ran ~34x slower on denormal arithmetic.
  {
    torch::NoGradGuard no_grad;
    embedding_->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(kD)));
  }
  // Constants of the step, made once (buffers follow the module's device and
  // dtype): positions and the additive causal mask (−inf above the diagonal).
  positions_ = register_buffer("positions", Positions(length));
  causal_mask_ = register_buffer(
      "causal_mask",
      torch::full({length, length}, -std::numeric_limits<float>::infinity()).triu(1));
  for (int64_t i = 0; i < kTransformerLayers; ++i) {
    const std::string n = std::to_string(i);
    encoder_attention_.push_back(register_module("encoder_attention" + n, AttentionSublayer()));
    encoder_ffn_.push_back(register_module("encoder_ffn" + n, FeedForwardSublayer()));
  }
  for (int64_t i = 0; i < kTransformerLayers; ++i) {
    const std::string n = std::to_string(i);
    decoder_self_.push_back(register_module("decoder_self" + n, AttentionSublayer()));
    decoder_cross_.push_back(register_module("decoder_cross" + n, AttentionSublayer()));
    decoder_ffn_.push_back(register_module("decoder_ffn" + n, FeedForwardSublayer()));
  }
}

torch::Tensor TransformerBaseImpl::Embed(const torch::Tensor& tokens) {
  const torch::Tensor& table = embedding_->weight;
  auto x = F::embedding(tokens, table) * std::sqrt(static_cast<double>(kD));
  x = x + positions_.index({torch::indexing::Slice(0, tokens.size(1))});
  return Dropout(x, is_training());
}

torch::Tensor TransformerBaseImpl::forward(const torch::Tensor& source,
                                           const torch::Tensor& target) {
  auto memory = Embed(source);
  const torch::Tensor none;
  for (int64_t i = 0; i < kTransformerLayers; ++i) {
    memory = encoder_ffn_[i]->forward(encoder_attention_[i]->forward(memory, memory, none));
  }
  const int64_t lt = target.size(1);
  using torch::indexing::Slice;
  const torch::Tensor causal = causal_mask_.index({Slice(0, lt), Slice(0, lt)});
  auto y = Embed(target);
  for (int64_t i = 0; i < kTransformerLayers; ++i) {
    y = decoder_self_[i]->forward(y, y, causal);
    y = decoder_cross_[i]->forward(y, memory, none);
    y = decoder_ffn_[i]->forward(y);
  }
  // Output projection tied with the embedding table, no bias.
  return F::linear(y, embedding_->weight);
}

TrainingProblem BuildTransformerProblem(const ModelSpec& spec, const BuildContext& context) {
  const TransformerShape shape = TransformerShapeOf(spec);
  struct State {
    TransformerBase model{nullptr};
    torch::Tensor source, decoder_input, labels;
  };
  auto state = std::make_shared<State>();
  state->model = TransformerBase(shape.vocab, shape.length);
  TrainingProblem problem;
  problem.parameters = PrepareModule(*state->model, context);
  const auto tokens = torch::TensorOptions().device(context.device).dtype(torch::kLong);
  state->source = torch::randint(0, shape.vocab, {shape.batch, shape.length}, tokens);
  auto target = torch::randint(0, shape.vocab, {shape.batch, shape.length + 1}, tokens);
  using torch::indexing::Slice;
  state->decoder_input = target.index({Slice(), Slice(0, shape.length)}).contiguous();
  state->labels = target.index({Slice(), Slice(1, torch::indexing::None)}).reshape({-1});
  State* s = state.get();
  const int64_t vocab = shape.vocab;
  problem.forward_loss = [s, vocab] {
    auto logits = s->model->forward(s->source, s->decoder_input);
    return F::cross_entropy(logits.reshape({-1, vocab}), s->labels);
  };
  problem.owner = state;
  return problem;
}

}  // namespace paradnn::runner
