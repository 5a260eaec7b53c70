#include "worker/runner/models/inception.h"

#include <ATen/Parallel.h>

#include <exception>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "worker/runner/models/conv_layers.h"

namespace paradnn::runner {

InceptionBranchImpl::InceptionBranchImpl(int64_t in_channels, int64_t filter) {
  reduce_ = register_module("reduce", MakeConv(in_channels, filter, 1, 1, 0));
  reduce_bn_ = register_module("reduce_bn", MakeBatchNorm(filter));
  conv_ = register_module("conv", MakeConv(filter, filter, 3, 1, 1));
  conv_bn_ = register_module("conv_bn", MakeBatchNorm(filter));
}

torch::Tensor InceptionBranchImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = reduce_bn_->forward(reduce_->forward(x)).relu_();
  return conv_bn_->forward(conv_->forward(y)).relu_();
}

InceptionBlockImpl::InceptionBlockImpl(int64_t branches, int64_t filter) {
  for (int64_t k = 0; k < branches; ++k) {
    branches_.push_back(
        register_module("branch" + std::to_string(k), InceptionBranch(branches * filter, filter)));
  }
}

torch::Tensor InceptionBlockImpl::forward(const torch::Tensor& x) {
  std::vector<torch::Tensor> outputs(branches_.size());
  if (branches_.size() < 2 || at::get_num_interop_threads() < 2) {
    for (size_t k = 0; k < branches_.size(); ++k) outputs[k] = branches_[k]->forward(x);
    return torch::cat(outputs, 1);
  }
  // Branches 1.. on the inter-op pool (at::launch carries this thread's
  // grad mode and autocast state), branch 0 here; every fork is waited for,
  // even after a failure, before anything is rethrown.
  std::vector<std::promise<torch::Tensor>> forked(branches_.size() - 1);
  std::vector<std::future<torch::Tensor>> results;
  results.reserve(forked.size());  // push_back below cannot throw
  std::exception_ptr failure;
  try {
    for (size_t k = 1; k < branches_.size(); ++k) {
      at::launch([branch = branches_[k], &x, done = &forked[k - 1]]() mutable {
        try {
          done->set_value(branch->forward(x));
        } catch (...) {
          done->set_exception(std::current_exception());
        }
      });
      // Only a launched fork is waited for: one that failed to launch would
      // never set its promise.
      results.push_back(forked[k - 1].get_future());
    }
    outputs[0] = branches_[0]->forward(x);
  } catch (...) {
    failure = std::current_exception();
  }
  // Every fork launched is waited for (it reads x and its promise) before
  // anything is rethrown.
  for (size_t k = 0; k < results.size(); ++k) {
    try {
      outputs[k + 1] = results[k].get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  ++forked_forwards_;
  return torch::cat(outputs, 1);
}

InceptionNetImpl::InceptionNetImpl(const model::InceptionShape& shape) {
  const int64_t channels = model::InceptionChannels(shape);
  stem_ = register_module("stem", MakeConv(3, channels, 3, 2, 1));
  stem_bn_ = register_module("stem_bn", MakeBatchNorm(channels));
  for (int64_t b = 0; b < shape.block; ++b) {
    blocks_.push_back(
        register_module("block" + std::to_string(b), InceptionBlock(shape.branches, shape.filter)));
  }
  head_ =
      register_module("head", torch::nn::Linear(torch::nn::LinearOptions(channels, shape.output)));
}

torch::Tensor InceptionNetImpl::forward(const torch::Tensor& images) {
  torch::Tensor x = stem_bn_->forward(stem_->forward(images)).relu_();
  for (InceptionBlock& block : blocks_) x = block->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1});
  return head_->forward(x.flatten(1));
}

TrainingProblem BuildInceptionProblem(const model::ModelSpec& spec, const BuildContext& context) {
  const model::InceptionShape shape = model::InceptionShapeOf(spec);
  InceptionNet model(shape);
  return SyntheticClassificationProblem(
      model.ptr(), [net = model.get()](const torch::Tensor& x) { return net->forward(x); },
      {shape.batch, 3, shape.image, shape.image}, /*input_low=*/0, shape.output, context);
}

}  // namespace paradnn::runner
