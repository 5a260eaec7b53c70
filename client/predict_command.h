// `paradnn predict SWEEP --config layer=16,node=4096,...`: one
// configuration's step time as the sweep's model predicts it, with its
// interval and the nearest measured configurations (docs/prediction.md).
#ifndef PARADNN_CLIENT_PREDICT_COMMAND_H_
#define PARADNN_CLIENT_PREDICT_COMMAND_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/output_format.h"
#include "paradnn/v1/sweep.pb.h"

namespace paradnn::client {

// "layer=16,node=4096,block_fn=bottleneck,precision=bfloat16": integers
// become hyper-parameters, other values options; precision and optimizer
// set those fields. InvalidArgument names the part that is not KEY=VALUE
// or a key given twice.
absl::StatusOr<v1::ModelConfig> ParseConfigAssignments(const std::string& text);

// The table form of a prediction.
std::string FormatPrediction(int64_t sweep_id, const v1::PredictResponse& response);

int RunPredict(const CommandContext& ctx, int64_t sweep_id, const std::string& config,
               int neighbours, OutputFormat format);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_PREDICT_COMMAND_H_
