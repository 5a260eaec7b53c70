// The smallest FC model the runner's LibTorch tests train: 2 layers of 16
// nodes, 32 inputs, 4 outputs, batch 8 (33 * 16 + 17 * 16 + 17 * 4
// parameters); a step takes about a millisecond on any CPU.
#ifndef PARADNN_TESTS_UNIT_WORKER_RUNNER_TINY_FC_H_
#define PARADNN_TESTS_UNIT_WORKER_RUNNER_TINY_FC_H_

#include <string>

#include "paradnn/v1/sweep.pb.h"

namespace paradnn::runner {

// The tiny FC model's configuration in `precision`.
inline v1::ModelConfig TinyFcConfig(const std::string& precision = "float32") {
  v1::ModelConfig config;
  config.set_family("fc");
  (*config.mutable_params())["layer"] = 2;
  (*config.mutable_params())["node"] = 16;
  (*config.mutable_params())["input"] = 32;
  (*config.mutable_params())["output"] = 4;
  (*config.mutable_params())["batch"] = 8;
  config.set_precision(precision);
  return config;
}

}  // namespace paradnn::runner

#endif  // PARADNN_TESTS_UNIT_WORKER_RUNNER_TINY_FC_H_
