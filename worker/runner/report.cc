#include "worker/runner/report.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model/op_profile.h"

namespace paradnn::runner {

// From the model library (model/), which the runner builds models from.
using model::DescribeSpec;
using model::FieldStyle;
using model::kBytesMethod;
using model::ModelSpec;
using model::ParseModelSpec;
using model::WorkBreakdown;
using model::WorkCounts;
namespace {

std::string ConfigLine(const v1::ModelConfig& config) {
  absl::StatusOr<ModelSpec> spec = ParseModelSpec(config, FieldStyle::kProto);
  if (spec.ok()) return DescribeSpec(*spec);
  std::string line = config.family();
  for (const auto& [key, value] : config.params()) absl::StrAppend(&line, " ", key, "=", value);
  for (const auto& [key, value] : config.options()) absl::StrAppend(&line, " ", key, "=", value);
  absl::StrAppend(&line, " ", config.precision(), " ", config.optimizer());
  return line;
}

std::string Bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    return absl::StrFormat("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024));
}

}  // namespace

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) return absl::InternalError(std::string(status.message()));
  return out;
}

std::string DescribeJson(const v1::ModelConfig& config, const WorkCounts& work) {
  const v1::ModelCounts& c = work.counts;
  const WorkBreakdown& b = work.breakdown;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [key, value] : config.params()) params[key] = value;
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  for (const auto& [key, value] : config.options()) options[key] = value;
  nlohmann::ordered_json j;
  j["config"] = {{"family", config.family()},
                 {"params", params},
                 {"options", options},
                 {"precision", config.precision()},
                 {"optimizer", config.optimizer()}};
  j["params"] = c.params();
  j["macs_per_example"] = c.macs_per_example();
  j["model_flops"] = c.model_flops();
  j["executed_flops"] = c.executed_flops();
  j["other_flops"] = c.other_flops();
  j["bytes_per_step"] = c.bytes_per_step();
  j["activation_bytes"] = c.activation_bytes();
  j["peak_memory_estimate_bytes"] = c.peak_memory_estimate_bytes();
  j["bytes_method"] = kBytesMethod;
  j["arithmetic_intensity"] = {
      {"model_flops_per_byte", c.bytes_per_step() > 0 ? c.model_flops() / c.bytes_per_step() : 0},
      {"executed_flops_per_byte",
       c.bytes_per_step() > 0 ? c.executed_flops() / c.bytes_per_step() : 0}};
  j["bytes_breakdown"] = {{"weights", b.weight_bytes},
                          {"weight_gradients", b.gradient_bytes},
                          {"optimizer", b.optimizer_bytes},
                          {"activations_forward", b.activation_fwd_bytes},
                          {"activations_backward", b.activation_bwd_bytes}};
  j["other_flops_breakdown"] = {
      {"bias_relu", b.bias_relu_flops}, {"loss", b.loss_flops}, {"optimizer", b.optimizer_flops}};
  // Heavy operators over the longest chain of them (model_counts.h): the
  // inter-op pools the thread guideline starts from.
  j["operator_width"] = {{"heavy_ops", work.width.heavy_ops},
                         {"longest_path", work.width.longest_path},
                         {"average", work.width.average()}};
  return j.dump(2) + "\n";
}

std::string FormatOpProfile(const v1::Measurement& m, size_t max_rows) {
  const std::vector<v1::OpProfile> ops =
      model::SumByName({m.op_profile().begin(), m.op_profile().end()});
  std::string out = absl::StrFormat("  operators (%d profiled steps, per step, by self time):\n",
                                    m.profiled_steps());
  absl::StrAppend(&out, absl::StrFormat("    %-36s %7s %6s %11s %11s %10s\n", "operator", "share",
                                        "calls", "self", "total", "GFLOP/s"));
  for (size_t i = 0; i < ops.size() && i < max_rows; ++i) {
    const v1::OpProfile& op = ops[i];
    const std::string rate = op.flops() > 0 && op.total_seconds() > 0
                                 ? absl::StrFormat("%.1f", op.flops() / op.total_seconds() / 1e9)
                                 : std::string("-");
    absl::StrAppend(&out, absl::StrFormat("    %-36s %6.1f%% %6d %8.3f ms %8.3f ms %10s\n",
                                          op.name(), op.self_share() * 100, op.calls(),
                                          op.self_seconds() * 1e3, op.total_seconds() * 1e3, rate));
  }
  return out;
}

std::string FormatSummary(const v1::Measurement& m) {
  std::string out = absl::StrCat(ConfigLine(m.config()), "\n");
  const v1::ModelCounts& c = m.counts();
  const v1::StepStats& s = m.stats();
  auto row = [&out](const char* label, const std::string& value) {
    absl::StrAppend(&out, absl::StrFormat("  %-15s %s\n", label, value));
  };
  row("outcome", v1::Outcome_Name(m.outcome()));
  if (m.outcome() != v1::OK) {
    row("error", m.error());
    row("params", absl::StrCat(c.params()));
    row("memory est.", Bytes(c.peak_memory_estimate_bytes()));
    return out;
  }
  row("params", absl::StrFormat("%d (%.3f GFLOP model, %.3f GFLOP executed per step)", c.params(),
                                c.model_flops() / 1e9, c.executed_flops() / 1e9));
  row("throughput", absl::StrFormat("%.1f examples/s", m.examples_per_sec()));
  row("step time",
      absl::StrFormat("median %.3f ms, mean %.3f ms ± %.2f %% (95 %% CI), CV %.2f %%",
                      s.median_s() * 1e3, s.mean_s() * 1e3, s.ci95_rel() * 100, s.cv() * 100));
  row("", absl::StrFormat("p10 %.3f ms, p90 %.3f ms, min %.3f ms, max %.3f ms", s.p10_s() * 1e3,
                          s.p90_s() * 1e3, s.min_s() * 1e3, s.max_s() * 1e3));
  if (s.stalled_samples() > 0) {
    row("", absl::StrFormat("%d samples stalled (> 3x the median): %.1f %% of the timed time",
                            s.stalled_samples(), s.stall_share() * 100));
  }
  row("GFLOP/s", absl::StrFormat("%.1f model (6 x MACs), %.1f executed",
                                 m.model_flops_per_sec() / 1e9, m.executed_flops_per_sec() / 1e9));
  row("steps", absl::StrFormat("%d timed after %d warm-up; stopped by %s", s.steps(),
                               s.warmup_steps(), s.stop_reason()));
  if (s.block_steps() > 1) {
    row("", absl::StrFormat("each timed sample is a block of %d steps (%d steps in all)",
                            s.block_steps(), s.steps() * s.block_steps()));
  }
  row("threads",
      absl::StrFormat("intra-op %d, inter-op %d", m.intra_op_threads(), m.inter_op_threads()));
  row("memory",
      absl::StrFormat("peak RSS %s (estimate %s)", Bytes(static_cast<double>(m.peak_rss_bytes())),
                      Bytes(c.peak_memory_estimate_bytes())));
  row("wall time", absl::StrFormat("build %.3f s, warm-up %.3f s, timed %.3f s", m.build_seconds(),
                                   m.warmup_seconds(), m.timed_seconds()));
  row("loss", absl::StrFormat("%.4f -> %.4f", m.first_loss(), m.last_loss()));
  for (int i = 0; i < m.suspect_size(); ++i) row(i == 0 ? "suspect" : "", m.suspect(i));
  if (m.op_profile_size() > 0) {
    absl::StrAppend(&out, FormatOpProfile(m, kSummaryOps));
  }
  return out;
}

}  // namespace paradnn::runner
