// The inception family in LibTorch (docs/models.md "Inception"): blocks of
// `branches` parallel branches, trained with softmax cross-entropy on one
// synthetic batch. With more than one inter-op thread, each block's
// branches 1.. run forked on LibTorch's inter-op pool (at::launch) while the
// calling thread runs branch 0: the forward pass uses inter-op parallelism
// as a graph executor or TorchScript's fork would. Backward runs as
// LibTorch's autograd engine runs a CPU graph, on the calling thread.
// LibTorch translation unit: include only where LibTorch is needed.
#ifndef PARADNN_WORKER_RUNNER_MODELS_INCEPTION_H_
#define PARADNN_WORKER_RUNNER_MODELS_INCEPTION_H_

#include <torch/torch.h>

#include <vector>

#include "model/families/inception.h"
#include "worker/runner/model_builder.h"

namespace paradnn::runner {

// One branch: conv 1x1 -> BN -> ReLU -> conv 3x3 pad 1 -> BN -> ReLU.
class InceptionBranchImpl : public torch::nn::Module {
 public:
  InceptionBranchImpl(int64_t in_channels, int64_t filter);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d reduce_{nullptr};
  torch::nn::BatchNorm2d reduce_bn_{nullptr};
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d conv_bn_{nullptr};
};
TORCH_MODULE(InceptionBranch);

// The branches of one block, their outputs concatenated on channels.
class InceptionBlockImpl : public torch::nn::Module {
 public:
  InceptionBlockImpl(int64_t branches, int64_t filter);
  torch::Tensor forward(const torch::Tensor& x);
  // Forward passes whose branches ran forked on the inter-op pool.
  int64_t forked_forwards() const { return forked_forwards_; }
  const std::vector<InceptionBranch>& branches() const { return branches_; }

 private:
  std::vector<InceptionBranch> branches_;
  int64_t forked_forwards_ = 0;
};
TORCH_MODULE(InceptionBlock);

// stem conv 3x3/2 pad 1 -> BN -> ReLU -> blocks -> global average pool ->
// Linear(output).
class InceptionNetImpl : public torch::nn::Module {
 public:
  explicit InceptionNetImpl(const model::InceptionShape& shape);
  torch::Tensor forward(const torch::Tensor& images);
  const std::vector<InceptionBlock>& blocks() const { return blocks_; }

 private:
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<InceptionBlock> blocks_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(InceptionNet);

// LibTorch's default initialization; images [batch, 3, image, image]
// uniform in [0, 1), labels uniform in [0, output).
TrainingProblem BuildInceptionProblem(const model::ModelSpec& spec, const BuildContext& context);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_INCEPTION_H_
