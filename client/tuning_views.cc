#include "client/tuning_views.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/analysis_kind_views.h"
#include "client/analysis_views.h"
#include "client/output_format.h"

namespace paradnn::client::internal {
namespace {

// The metric's unit for HumanValue, after ToDisplayUnits.
std::string TuningUnit(const v1::TuningResponse& t) { return DisplayUnitOfMetric(t.metric()); }

std::string TuningWidthText(const v1::TuningConfig& c) {
  return c.has_width() ? absl::StrFormat("%.2f", c.width()) : "-";
}

// The findings' counts, one row per finding and family.
std::string TuningFindingCounts(const v1::TuningResponse& t) {
  const std::vector<std::string> header = {"finding",  "family",        "applies",     "agree",
                                           "disagree", "no difference", "not measured"};
  const std::vector<bool> right = {false, false, true, true, true, true, true};
  Rows rows;
  for (const v1::TuningFinding& f : t.findings()) {
    rows.push_back({f.finding(), f.family(), absl::StrCat(f.applies()), absl::StrCat(f.agree()),
                    absl::StrCat(f.disagree()), absl::StrCat(f.no_difference()),
                    absl::StrCat(f.not_measured())});
  }
  return AlignColumns(header, rows, right);
}

// Each finding's statement and the outcome of every check behind it.
std::string TuningFindingChecks(const v1::TuningResponse& t) {
  std::string out;
  for (const v1::TuningFinding& f : t.findings()) {
    absl::StrAppend(&out, "\n", f.finding(), " (", f.family(), "): ", f.statement(), "\n");
    for (const v1::TuningCheck& check : f.checks()) {
      absl::StrAppend(&out, "  ", check.outcome(), ": ", check.config(), "\n    ", check.detail(),
                      "\n");
    }
  }
  return out;
}

// One row per configuration: the measurements the findings rest on.
std::string TuningConfigRows(const v1::TuningResponse& t) {
  const std::string unit = TuningUnit(t);
  const std::vector<std::string> header = {"configuration", "platform",  "width",
                                           "best setting",  "best",      "one pool",
                                           "pools",         "pool gain", "verdict (pools vs one)"};
  const std::vector<bool> right = {false, false, true, false, true, true, true, true, false};
  Rows rows;
  for (const v1::TuningConfig& c : t.configs()) {
    rows.push_back({c.config(), c.platform(), TuningWidthText(c), c.best_setting(),
                    HumanValue(c.best_value(), unit),
                    c.one_pool_setting().empty() ? "-" : HumanValue(c.one_pool_value(), unit),
                    c.pools_setting().empty() ? "-" : HumanValue(c.pools_value(), unit),
                    c.pool_gain() > 0 ? Times(c.pool_gain()) : "-",
                    c.pools_verdict().empty() ? "-" : c.pools_verdict()});
  }
  return AlignColumns(header, rows, right);
}

}  // namespace

std::string TuningTable(const v1::TuningResponse& t) {
  std::string out = absl::StrFormat(
      "the thread-setting findings of Wang et al. (TACO 2021) on these results: %s, the median "
      "over each setting's repeat rounds; verdicts as `paradnn compare` gives them (paired by "
      "round, false discovery rate %s)\n\n",
      WithUnit(t.metric(), TuningUnit(t)), Percent(t.fdr()));
  if (t.findings_size() == 0) {
    absl::StrAppend(&out,
                    "no finding applies: no configuration has a known operator width or batch "
                    "sizes to compare\n");
  } else {
    absl::StrAppend(&out, TuningFindingCounts(t), TuningFindingChecks(t));
  }
  absl::StrAppend(&out, "\nconfigurations (one pool: inter-op 1; pools: inter-op > 1; pool gain: ",
                  t.lower_is_better() ? "the best one pool's value over the best pools'"
                                      : "the best pools' value over the best one pool's",
                  ", > 1 when pools help):\n", TuningConfigRows(t));
  return out;
}

std::string TuningCsv(const v1::TuningResponse& t) {
  std::map<std::pair<std::string, std::string>, const v1::TuningConfig*> configs;
  for (const v1::TuningConfig& c : t.configs()) configs[{c.config(), c.platform()}] = &c;
  std::string out =
      CsvLine({"finding_key", "finding", "family", "statement", "config", "platform", "outcome",
               "detail", "width", "best_setting", "best_value", "one_pool_setting",
               "one_pool_value", "pools_setting", "pools_value", "pool_gain", "pools_verdict"});
  for (const v1::TuningFinding& f : t.findings()) {
    for (const v1::TuningCheck& check : f.checks()) {
      std::vector<std::string> fields = {f.key(),         f.finding(),    f.family(),
                                         f.statement(),   check.config(), check.platform(),
                                         check.outcome(), check.detail()};
      const auto it = configs.find({check.config(), check.platform()});
      if (it == configs.end()) {
        fields.resize(fields.size() + 9);  // a batch group: its details say what it rests on
      } else {
        const v1::TuningConfig& c = *it->second;
        fields.insert(
            fields.end(),
            {c.has_width() ? ShortestDouble(c.width()) : "", c.best_setting(),
             ShortestDouble(c.best_value()), c.one_pool_setting(),
             c.one_pool_setting().empty() ? "" : ShortestDouble(c.one_pool_value()),
             c.pools_setting(), c.pools_setting().empty() ? "" : ShortestDouble(c.pools_value()),
             c.pool_gain() > 0 ? ShortestDouble(c.pool_gain()) : "", c.pools_verdict()});
      }
      absl::StrAppend(&out, CsvLine(fields));
    }
  }
  return out;
}

void TuningToDisplayUnits(v1::TuningResponse* t) {
  if (!IsFractionMetric(t->metric())) return;
  for (v1::TuningConfig& c : *t->mutable_configs()) {
    c.set_best_value(c.best_value() * kPercentPerFraction);
    c.set_one_pool_value(c.one_pool_value() * kPercentPerFraction);
    c.set_pools_value(c.pools_value() * kPercentPerFraction);
    for (v1::TuningSetting& setting : *c.mutable_settings()) {
      setting.set_value(setting.value() * kPercentPerFraction);
    }
  }
}

}  // namespace paradnn::client::internal
