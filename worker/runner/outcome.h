// Mapping from what a model raised to a Measurement outcome. Torch-free: the
// harness passes the exception's message, the rule lives here and is tested
// without LibTorch.
#ifndef PARADNN_WORKER_RUNNER_OUTCOME_H_
#define PARADNN_WORKER_RUNNER_OUTCOME_H_

#include <string>

#include "absl/strings/string_view.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// OOM when the message says an allocation failed ("not enough memory",
// "out of memory", "can't allocate memory", "Cannot allocate memory",
// "bad_alloc", "allocation failed"); UNSUPPORTED when LibTorch has no kernel
// for the requested dtype/device ("not implemented for", "not supported",
// "only support", "NotImplementedError", "Could not run"); ERROR otherwise.
v1::Outcome ClassifyModelError(absl::string_view message);

// The first line of a LibTorch error message, without the C++ stack trace
// and "Exception raised from" tail that c10::Error::what() appends.
std::string FirstErrorLine(absl::string_view message);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_OUTCOME_H_
