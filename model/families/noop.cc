// Family noop (model/families/noop.h): its hyper-parameters, its all-zero counts and
// the result of a job that does nothing.
#include "model/families/noop.h"

#include "model/family.h"

namespace paradnn::model {
namespace {

constexpr ParamRule kNoopParams[] = {
    {"batch", 1, int64_t{1} << 24, 0, "examples per step (unused: nothing runs)"},
    {"index", 0, int64_t{1} << 40, 0, "any number; tells otherwise identical jobs apart"},
};

// Nothing is built: no parameters, no work, no memory.
WorkCounts CountNoop(const ModelSpec& /*spec*/) { return WorkCounts{}; }

}  // namespace

void FinishNoopMeasurement(v1::Measurement* m) {
  m->set_outcome(v1::OK);
  m->clear_error();
  m->clear_step_seconds();
  m->set_examples_per_sec(0);
  m->set_model_flops_per_sec(0);
  m->set_executed_flops_per_sec(0);
  v1::StepStats* stats = m->mutable_stats();
  stats->Clear();
  stats->set_stop_reason(kNoopStopReason);
}

extern const FamilyDef kNoopFamily = {
    kNoopFamilyName, "harness: an OK result at once; no model is built, nothing is timed",
    kNoopParams, {}, /*check=*/nullptr, CountNoop};

}  // namespace paradnn::model
