#include "fleet/model_cost.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::fleet {

std::optional<StepCost> ParadnnStepCost(const v1::TrainingEvent& submitted) {
  const auto model = submitted.attributes().find("model");
  if (model == submitted.attributes().end()) return std::nullopt;
  v1::ModelConfig config;
  config.set_family(model->second);
  for (const auto& [name, value] : submitted.model_params()) {
    // Parameters are integers; a fraction is not a configuration paradnn has.
    if (value != std::floor(value) || value > 9e15) return std::nullopt;
    (*config.mutable_params())[name] = static_cast<int64_t>(value);
  }
  if (const auto precision = submitted.attributes().find("precision");
      precision != submitted.attributes().end()) {
    config.set_precision(precision->second);
  }
  absl::StatusOr<model::ModelSpec> spec = model::ParseModelSpec(config, model::FieldStyle::kProto);
  if (!spec.ok()) return std::nullopt;
  const v1::ModelCounts counts = model::CountModel(*spec);
  if (!(counts.model_flops() > 0)) return std::nullopt;
  return StepCost{counts.model_flops(), counts.bytes_per_step(),
                  absl::StrCat("paradnn counts (", model->second, ")")};
}

}  // namespace paradnn::fleet
