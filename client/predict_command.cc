#include "client/predict_command.h"

#include <google/protobuf/util/json_util.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paradnn::client {

absl::StatusOr<v1::ModelConfig> ParseConfigAssignments(const std::string& text) {
  v1::ModelConfig config;
  std::vector<std::string> seen;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    const size_t equals = part.find('=');
    if (equals == absl::string_view::npos || equals == 0 || equals + 1 == part.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--config: '", part, "' is not KEY=VALUE (e.g. layer=16,node=4096)"));
    }
    const std::string key(absl::StripAsciiWhitespace(part.substr(0, equals)));
    const std::string value(absl::StripAsciiWhitespace(part.substr(equals + 1)));
    for (const std::string& earlier : seen) {
      if (earlier == key) {
        return absl::InvalidArgumentError(absl::StrCat("--config: '", key, "' is given twice"));
      }
    }
    seen.push_back(key);
    int64_t number = 0;
    if (key == "precision") {
      config.set_precision(value);
    } else if (key == "optimizer") {
      config.set_optimizer(value);
    } else if (absl::SimpleAtoi(value, &number)) {
      (*config.mutable_params())[key] = number;
    } else {
      (*config.mutable_options())[key] = value;
    }
  }
  if (seen.empty()) {
    return absl::InvalidArgumentError("--config: empty; give KEY=VALUE,... (e.g. layer=16)");
  }
  return config;
}

namespace {

std::string DescribeConfig(const v1::ModelConfig& config) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : config.params()) parts.push_back(absl::StrCat(key, "=", value));
  for (const auto& [key, value] : config.options()) parts.push_back(absl::StrCat(key, "=", value));
  return absl::StrCat(config.family(), ": ", absl::StrJoin(parts, " "), " (",
                      config.precision().empty() ? "float32" : config.precision(), ", ",
                      config.optimizer().empty() ? "rmsprop" : config.optimizer(), ")");
}

}  // namespace

std::string FormatPrediction(int64_t sweep_id, const v1::PredictResponse& response) {
  const v1::PredictedStep& p = response.prediction();
  std::string out = absl::StrCat("sweep ", sweep_id, ", ",
                                 EscapeForTerminal(DescribeConfig(response.config())), "\n");
  absl::StrAppend(&out, "predicted step time ", HumanMillis(p.step_seconds() * 1e3), " (",
                  Significant3(p.interval() * 100), " % interval of a re-measurement ",
                  HumanMillis(p.step_seconds_low() * 1e3), " .. ",
                  HumanMillis(p.step_seconds_high() * 1e3), "); ", HumanCount(p.examples_per_sec()),
                  " examples/s, ", HumanCount(p.model_flops_per_sec() / 1e9), " model GFLOP/s\n");
  absl::StrAppend(&out, "model ", p.model(), ", fitted on ", p.measurements(),
                  " measured configurations of platform ",
                  EscapeForTerminal(p.platform_fingerprint().substr(0, 12)), "\n");
  if (!response.description().empty()) {
    absl::StrAppend(&out, "learned: ", EscapeForTerminal(response.description()), "\n");
  }
  for (const std::string& warning : response.warnings()) {
    absl::StrAppend(&out, "warning: ", EscapeForTerminal(warning), "\n");
  }
  if (response.nearest_size() > 0) {
    absl::StrAppend(&out, "nearest measured (closest first):\n");
    const std::vector<v1::ResultRow> rows(response.nearest().begin(), response.nearest().end());
    absl::StrAppend(&out, FormatNarrowTable(BuildResultTable(rows)));
  }
  return out;
}

int RunPredict(const CommandContext& ctx, int64_t sweep_id, const std::string& config_text,
               int neighbours, OutputFormat format) {
  absl::StatusOr<v1::ModelConfig> config = ParseConfigAssignments(config_text);
  if (!config.ok()) {
    *ctx.err << "paradnn: " << config.status().message() << "\n" << std::flush;
    return kExitUsage;
  }
  v1::PredictRequest request;
  request.set_sweep_id(sweep_id);
  *request.mutable_config() = *std::move(config);
  request.set_neighbours(neighbours);
  CoordinatorClient client(ctx.address, ctx.timeout_seconds);
  absl::StatusOr<v1::PredictResponse> response = client.Predict(request);
  if (!response.ok()) return ReportError(ctx, response.status());
  if (format == OutputFormat::kTable) {
    *ctx.out << FormatPrediction(sweep_id, *response) << std::flush;
    return kExitOk;
  }
  if (format == OutputFormat::kCsv) {
    const v1::PredictedStep& p = response->prediction();
    *ctx.out << CsvLine({"step_seconds", "step_seconds_low", "step_seconds_high", "interval",
                         "examples_per_sec", "model_flops_per_sec", "measurements", "model",
                         "platform_fingerprint"})
             << CsvLine({ShortestDouble(p.step_seconds()), ShortestDouble(p.step_seconds_low()),
                         ShortestDouble(p.step_seconds_high()), ShortestDouble(p.interval()),
                         ShortestDouble(p.examples_per_sec()),
                         ShortestDouble(p.model_flops_per_sec()), absl::StrCat(p.measurements()),
                         p.model(), p.platform_fingerprint()})
             << std::flush;
    return kExitOk;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(*response, &json, options).ok()) {
    return ReportError(ctx, absl::InternalError("could not print the prediction as JSON"));
  }
  *ctx.out << json << "\n" << std::flush;
  return kExitOk;
}

}  // namespace paradnn::client
