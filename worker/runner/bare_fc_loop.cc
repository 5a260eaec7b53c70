// paradnn-bench-bare-fc: the FC model of the suite trained by the plainest
// LibTorch loop there is, for bench/fidelity.py to hold the runner's harness
// against. Same model, data, loss and optimizer as worker/runner/models/fc.cc and
// model_builder.cc; no statistics, no stopping rule, no profiler, no
// streaming: `steps` steps timed as one interval after `warmup` steps.
// Prints one JSON object: {"examples_per_sec": ..., "seconds_per_step": ...}.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "worker/runner/fused_optimizer.h"

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: %s LAYER NODE INPUT OUTPUT BATCH WARMUP STEPS THREADS\n"
                 "(float32, RMSprop lr 0.1 alpha 0.9 momentum 0.9 eps 1.0, cross-entropy)\n",
                 argv[0]);
    return 2;
  }
  const int64_t layer = std::atoll(argv[1]), node = std::atoll(argv[2]);
  const int64_t input = std::atoll(argv[3]), output = std::atoll(argv[4]);
  const int64_t batch = std::atoll(argv[5]);
  const int warmup = std::atoi(argv[6]), steps = std::atoi(argv[7]);
  at::set_num_threads(std::atoi(argv[8]));
  torch::manual_seed(0);

  torch::nn::Sequential model;
  int64_t in = input;
  for (int64_t k = 0; k < layer; ++k) {
    model->push_back(torch::nn::Linear(in, node));
    model->push_back(torch::nn::ReLU());
    in = node;
  }
  model->push_back(torch::nn::Linear(in, output));
  std::vector<torch::Tensor> parameters = model->parameters();
  // The runner's update (fused on the CPU): the same work as the runner.
  std::unique_ptr<paradnn::runner::TrainingOptimizer> optimizer =
      paradnn::runner::MakeTrainingOptimizer(paradnn::model::OptimizerKind::kRmsProp, parameters);
  const torch::Tensor x = torch::rand({batch, input}) - 0.5;
  const torch::Tensor y = torch::randint(0, output, {batch}, torch::kLong);

  auto step = [&] {
    // Gradients set to none, as the runner's Trainer::Step does.
    for (torch::Tensor& p : parameters) p.mutable_grad().reset();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer->Step();
    return loss;
  };
  for (int i = 0; i < warmup; ++i) (void)step().item<double>();
  const auto start = std::chrono::steady_clock::now();
  torch::Tensor loss;
  for (int i = 0; i < steps; ++i) loss = step();
  (void)loss.item<double>();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"examples_per_sec\": %.6g, \"seconds_per_step\": %.6g}\n",
              static_cast<double>(batch) * steps / seconds, seconds / steps);
  return 0;
}
