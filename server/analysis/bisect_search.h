// Which settings make stack B slower (or faster) than stack A for one
// configuration (issue 37, "regressions found and bisected"): A and B
// differ in named settings (a BLAS core type, OMP_WAIT_POLICY, a thread
// count, ...); the search measures A with some of B's settings applied and
// narrows down to the smallest set that carries the effect, with as few
// measurements as it can. Thread-compatible.
//
// The search, in three parts:
//  - Reference: `reference_rounds` rounds of A and B, the order alternating
//    (A B, B A, ...) so that a host drifting steadily within a round
//    cancels over a pair of rounds. No difference there (a t test at
//    `significance`, on log step times, blocked by round): "no difference
//    detected between the stacks", and nothing more is measured.
//  - Probes: a probe is A with a subset S of B's differing settings. It is
//    measured in rounds with one reference (A and B by turns) and decided
//    "carries the effect" when its log step time is significantly closer to
//    B's than to A's (past the midpoint, a t test), "does not" when
//    significantly on A's side, or measured again; after
//    `max_rounds_per_probe` rounds the point estimate decides and the
//    decision is marked unclear (a setting carrying about half the effect).
//    Which probe comes next is QuickXplain's (Junker, AAAI 2004): the
//    smallest subset whose mix carries the effect, with one probe per level
//    of a bisection when one setting is guilty (about log2 d + 1 probes for
//    d settings) and k log(d / k) probes when k settings are needed
//    together (an interaction: each alone does nothing). It assumes that
//    adding settings from B to a mix that carries the effect keeps it so.
//  - Confirmation: the set found is measured as a probe if it has not
//    been; a set that does not carry the effect then, or a mix of every
//    setting that does not, is "not reproduced": the cause is elsewhere
//    (a setting that cannot be mixed, or a difference not among the
//    settings).
// Every decision uses all measurements so far: log step times (the median
// of each measurement's repeats) fitted with an effect per round (the
// host's drift, which cancels) and one per mix, the residual spread pooled
// over all rounds. That makes one round per probe enough when the effect is
// clear, where a paired test per probe would need several. The t quantiles
// use the pooled spread's degrees of freedom, which grow as the search goes.
// With two mixes only (the reference rounds) this is EstimateRatio's
// "paired rounds" t interval (comparison_stats.h); the fit extends it to
// many mixes sharing rounds, which EstimateRatio's pairs cannot express.
//
// Measurements in one round are meant to run one after another on the same
// host (one worker), in the order given: the round effect assumes they saw
// the same host state.
#ifndef PARADNN_SERVER_ANALYSIS_BISECT_SEARCH_H_
#define PARADNN_SERVER_ANALYSIS_BISECT_SEARCH_H_

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/analysis/comparison_stats.h"

namespace paradnn::server::analysis {

// A stack's settings by name. A setting absent from a stack differs from
// one present in the other; "applying B's value" of it removes it.
using StackSettings = std::map<std::string, std::string>;

struct BisectOptions {
  // Rounds of A and B measured first; at least 2 (the t test's spread).
  int reference_rounds = 4;
  // At most this many rounds per probe; at least 1.
  int max_rounds_per_probe = 4;
  // For "the stacks differ" and for each probe's decision (two-sided).
  double significance = 0.05;
  double interval_level = 0.95;
  // The search stops (kBudgetExhausted) rather than ask for more.
  size_t max_measurements = 200;
  // Differing settings that cannot be applied one by one (another build,
  // another machine): every mix keeps A's value of them. With any, the
  // reference rounds also measure A with every other setting from B.
  std::set<std::string> unmixable;
};

// One measurement the search asks for: A's settings with those named in
// `from_bad` taken from B.
struct MixRequest {
  size_t round = 0;                   // measurements in one round run back to back on one host
  std::vector<std::string> from_bad;  // sorted; empty: A; every difference: B
  StackSettings settings;
};

struct BisectMeasurement {
  MixRequest mix;
  std::vector<double> step_times;  // as recorded
};

// What the search decided about one probe.
struct ProbeDecision {
  std::vector<std::string> from_bad;
  bool carries = false;  // closer to B than to A
  bool clear = true;     // false: decided by the point estimate at the round limit
  double share = 0;      // of B's effect on the log step time: 0 like A, 1 like B
  int rounds = 0;
};

enum class BisectOutcome {
  kSearching,
  kCulpritsFound,
  kNoDifference,    // A and B do not differ measurably
  kNotReproduced,   // no mix of the (mixable) settings carries the effect
  kBudgetExhausted  // max_measurements reached first
};

// "searching", "culprits found", "no difference detected between the
// stacks", "not reproduced by the settings", "measurement budget exhausted".
const char* BisectOutcomeName(BisectOutcome outcome);

struct BisectResult {
  BisectOutcome outcome = BisectOutcome::kSearching;
  // The smallest set found (sorted); more than one: needed together, or
  // each carrying a part.
  std::vector<std::string> culprits;
  RatioEstimate stack_effect;                   // B over A
  RatioEstimate culprit_effect;                 // A with the culprits from B, over A
  double culprit_share = 0;                     // of the stack effect, in log terms
  std::vector<ProbeDecision> decisions;         // in the order made
  std::vector<BisectMeasurement> measurements;  // every one, in the order asked
  // One line for a person, e.g. "blas_core carries the effect: step time
  // +20.1 % [14.2 %, 26.3 %] (B over A: +19.8 % [...]); 14 measurements".
  std::string summary;
};

// The search as a state machine, for a caller that submits jobs: measure
// every request of Pending() (a whole batch may be submitted at once; one
// round's requests back to back on one host), Record() each result, and
// Pending() holds the next batch once the last is in. Done() when the
// result is final.
class BisectSearch {
 public:
  // InvalidArgument when the stacks do not differ in any setting or an
  // option is out of range (naming it).
  static absl::StatusOr<BisectSearch> Create(StackSettings good, StackSettings bad,
                                             BisectOptions options = {});

  // The measurements to make next; empty once Done().
  const std::vector<MixRequest>& Pending() const { return pending_; }

  // The step times (repeats) of Pending()[index]; an empty vector for a
  // measurement that failed (it is asked for again if it was needed).
  // InvalidArgument for an index out of range, FailedPrecondition when it
  // was recorded already or the search is done.
  absl::Status Record(size_t index, std::vector<double> step_times);

  bool Done() const { return result_.outcome != BisectOutcome::kSearching; }

  // Final once Done(); before, the measurements and decisions so far.
  const BisectResult& result() const { return result_; }

  // The differing settings, sorted.
  const std::vector<std::string>& differing() const { return differing_; }

 private:
  struct Observation {
    size_t round = 0;
    size_t mix = 0;  // index into mixes_
    double log_step_time = 0;
  };
  struct Fit;

  BisectSearch(StackSettings good, StackSettings bad, BisectOptions options,
               std::vector<std::string> differing);

  size_t MixId(const std::vector<std::string>& from_bad);
  void Schedule(std::vector<std::vector<std::string>> mixes_in_order);
  void ScheduleReferenceRound();
  void ScheduleProbeRound();
  // Acts on a completed batch: a decision, the next batch, or the end.
  void Advance();
  void AfterReference(const Fit& fit);
  // Decides the current probe if the data allow (always at the round
  // limit); true when decided.
  bool DecideProbe(const Fit& fit);
  // Replays QuickXplain on the decisions: the next probe or the end.
  void NextProbe();
  void Finish(BisectOutcome outcome);
  RatioEstimate Estimate(const Fit& fit, size_t mix) const;
  void Summarize();

  StackSettings good_;
  StackSettings bad_;
  BisectOptions options_;
  std::vector<std::string> differing_;
  std::vector<std::string> mixable_;
  std::vector<std::vector<std::string>> mixes_;  // 0: A, 1: B
  std::vector<Observation> observations_;
  std::map<std::vector<std::string>, bool> carries_;  // decided probes
  std::vector<MixRequest> pending_;
  std::vector<std::vector<double>> pending_results_;
  std::vector<bool> pending_recorded_;
  size_t rounds_ = 0;
  bool in_reference_ = true;
  std::vector<std::string> probe_;  // the probe being measured
  int probe_rounds_ = 0;
  BisectResult result_;
};

// Measures the step times (several repeats) of the configuration under
// the given settings.
using StepTimeMeasurer = std::function<std::vector<double>(const StackSettings& settings)>;

// The whole search with a blocking measurer, one measurement at a time in
// the order asked.
absl::StatusOr<BisectResult> RunBisect(StackSettings good, StackSettings bad,
                                       const StepTimeMeasurer& measure, BisectOptions options = {});

}  // namespace paradnn::server::analysis

#endif  // PARADNN_SERVER_ANALYSIS_BISECT_SEARCH_H_
