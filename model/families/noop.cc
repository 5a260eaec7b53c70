// Family noop (model/families/noop.h): its hyper-parameters, its all-zero counts and
// the result of a job that does nothing.
#include "model/families/noop.h"

#include "model/family.h"

namespace paradnn::model {
namespace {

// `index` only tells otherwise identical jobs apart, so that a sweep can
// hold many (docs/operations.md, the load bench).
constexpr ParamRule kNoopParams[] = {
    {"batch", 1, kMaxBatch, true, "unused (nothing runs); every family takes it"},
    kDevicesRule,
    kHostsRule,
    {"index", 0, int64_t{1} << 40, true, "any number; tells otherwise identical jobs apart"},
    kInterOpThreadsRule,
    kIntraOpThreadsRule,
    kOverlapRule,
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
    kNoopParams,     {},
    kMatmulRoof,     /*check=*/nullptr,
    CountNoop};

}  // namespace paradnn::model
