// The paradnn-runner command line (docs/contracts.md), parsed into a
// RunnerCommand. Torch-free so that flag validation is tested without
// LibTorch.
#ifndef PARADNN_WORKER_RUNNER_CLI_H_
#define PARADNN_WORKER_RUNNER_CLI_H_

#include <string>

#include "absl/status/statusor.h"
#include "model/model_spec.h"
#include "paradnn/v1/metrics.pb.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::ModelSpec;

enum class RunnerMode {
  kJobStdin,     // --job-stdin: one framed RunnerJob in, framed RunnerEvents out
  kPlatform,     // --platform [--framed]
  kCalibrate,    // --calibrate [--framed]: the Platform with measured roofs
  kMeasure,      // --family fc --layer ... : time one model, print a summary or --json
  kDescribe,     // --describe with the model flags: counts as JSON, no training
  kBlasTrial,    // --blas-trial: one stack-doctor trial of the BLAS core in effect, as JSON
  kAtenTrial,    // --aten-trial: the same for ATen's CPU capability
  kStackDoctor,  // --stack-doctor [--framed]: try BLAS cores and ATen capabilities; the
                 // Platform with findings
  kHelp,         // --help / --version: print `text` to stdout, exit 0
};

struct RunnerCommand {
  RunnerMode mode = RunnerMode::kHelp;
  v1::RunnerJob job;    // kMeasure, kDescribe: config and settings from the flags
  ModelSpec spec;       // kMeasure, kDescribe: the validated config
  bool json = false;    // kMeasure: print the Measurement as JSON
  bool framed = false;  // kPlatform, kCalibrate: one frame instead of JSON
  std::string log_level = "info";
  // --blas-core: "auto" (the doctor's fastest correct core, the default),
  // "as-installed" or an OPENBLAS_CORETYPE name. Measure, calibrate,
  // platform and doctor modes; the worker decides for --job-stdin.
  std::string blas_core = "auto";
  // --aten-capability: the same for ATen's CPU kernels (ATEN_CPU_CAPABILITY:
  // default, avx2, avx512).
  std::string aten_capability = "auto";
  // --device: the device kPlatform and kCalibrate describe and kMeasure
  // trains on: cpu, cuda (the first GPU) or cuda:N. kJobStdin takes the
  // job's.
  std::string device = "cpu";
  std::string text;  // kHelp
};

// Parses argv. Returns InvalidArgument for every usage error (the caller
// prints it and exits 2); the message names the flag and the allowed values,
// e.g. "--family: 'cnn' is not a family this runner builds; allowed: fc".
absl::StatusOr<RunnerCommand> ParseCommandLine(int argc, const char* const* argv);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_CLI_H_
