#include "client/compare_command.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/analyze_command.h"
#include "client/analyze_flags.h"
#include "common/analysis_metrics.h"

namespace paradnn::client {

CLI::App* AddCompareCommand(CLI::App& app, CompareFlags* flags, std::string* format) {
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Is one side faster, configuration by configuration, and is the difference real?\n"
      "  paradnn compare 3 5                                  sweep 5 against sweep 3\n"
      "  paradnn compare --field blas_core Prescott Zen --sweep 3   two values of a field\n"
      "Per configuration: the speedup with its 95 % interval (paired by repeat round where\n"
      "both sides ran in one, so drift cannot fake a difference; the platform's re-run model\n"
      "where a side ran once) and a verdict, false discoveries held at --fdr across\n"
      "configurations (Benjamini-Hochberg), and the geometric mean with its interval.");
  compare
      ->add_option("BASELINE CANDIDATE", flags->sides,
                   "Two sweep ids, or with --field two values of that field")
      ->required()
      ->expected(2);
  compare->add_option("--field", flags->field,
                      "The field whose two values are compared (blas_core, precision, "
                      "intra_op_threads, libtorch_version, device_kind, worker, ...)");
  compare->add_option("--sweep", flags->sweeps, "With --field: the sweeps to look in (repeatable)")
      ->check(PositiveInteger("a sweep id"));
  compare->add_option("--where", flags->where,
                      "Only results whose FIELD equals VALUE (repeatable)");
  compare->add_option("--metric", flags->metric, common::AnalysisMetricHelp())
      ->capture_default_str();
  compare->add_option("--fdr", flags->fdr, "False discovery rate across configurations")
      ->capture_default_str();
  compare
      ->add_option("--format", *format,
                   "table, csv (one row per configuration) or json (the AnalyzeResponse)")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  AddDbFile(compare, &flags->db);
  return compare;
}

absl::StatusOr<v1::AnalyzeRequest> BuildCompareRequest(const CompareFlags& flags) {
  if (flags.sides.size() != 2) {
    return absl::InvalidArgumentError("compare: give BASELINE and CANDIDATE");
  }
  if (flags.sides[0] == flags.sides[1]) {
    return absl::InvalidArgumentError(
        absl::StrCat("compare: BASELINE and CANDIDATE are both '", flags.sides[0], "'"));
  }
  if (!(flags.fdr > 0 && flags.fdr < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fdr ", flags.fdr, ": a false discovery rate between 0 and 1 (e.g. 0.05)"));
  }
  std::vector<int64_t> sweep_ids = flags.sweeps;
  std::string field = flags.field;
  if (field.empty()) {
    if (!flags.sweeps.empty()) {
      return absl::InvalidArgumentError(
          "compare: --sweep goes with --field; without it BASELINE and CANDIDATE are sweeps");
    }
    for (const std::string& side : flags.sides) {
      int64_t id = 0;
      if (!absl::SimpleAtoi(side, &id) || id <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "compare: '", side,
            "' is not a sweep id (a positive integer); to compare two values of a field, "
            "give --field FIELD and --sweep ID"));
      }
      sweep_ids.push_back(id);
    }
    field = "sweep";
  } else if (sweep_ids.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compare --field ", field, ": give the sweeps to look in (--sweep ID)"));
  }
  absl::StatusOr<v1::ResultSelection> selection = ParseSelection(sweep_ids, flags.where);
  if (!selection.ok()) return selection.status();
  v1::AnalyzeRequest request;
  v1::SpeedupRequest* speedup = request.mutable_speedup();
  *request.mutable_selection() = *std::move(selection);
  speedup->set_metric(flags.metric);
  speedup->set_field(field);
  speedup->set_baseline(flags.sides[0]);
  speedup->set_candidate(flags.sides[1]);
  speedup->set_fdr(flags.fdr);
  return request;
}

}  // namespace paradnn::client
