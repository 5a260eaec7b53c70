#include "model/layer_ledger.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace paradnn::model {

LayerLedger::LayerLedger(const ModelSpec& spec)
    : spec_(spec),
      batch_(static_cast<double>(spec.batch())),
      mixed_(spec.precision == Precision::kMixedBf16 || spec.precision == Precision::kMixedFp16),
      e_w_(WeightElementBytes(spec.precision)),
      e_c_(mixed_ ? 2.0 : WeightElementBytes(spec.precision)),
      e_a_(ActivationElementBytes(spec.precision)) {}

void LayerLedger::FirstUse(double n, bool autocast) {
  params_ += static_cast<int64_t>(std::llround(n));
  if (mixed_ && autocast) {
    cast_params_ += n;
    // Forward: read the float32 master, write the copy, read the copy.
    b_.weight_bytes += n * (e_w_ + 2 * e_c_);
    // Gradient written at the copy's width, then cast to float32.
    b_.gradient_bytes += n * e_c_ + n * (e_c_ + e_w_);
  } else {
    b_.weight_bytes += n * e_w_;
    b_.gradient_bytes += n * e_w_;
  }
}

void LayerLedger::Reuse(double n, double times) {
  // Autocast reuses its cached copy; each use writes its own gradient and
  // autograd adds it into the accumulated one (read, read, write).
  b_.weight_bytes += times * n * e_c_;
  b_.gradient_bytes += times * (n * e_c_ + 3 * n * e_c_);
  b_.bias_relu_flops += times * n;
}

void LayerLedger::Params(double n, bool first_use, bool read_for_input_grad) {
  if (first_use) {
    FirstUse(n, /*autocast=*/true);
  } else {
    Reuse(n, 1);
  }
  if (read_for_input_grad) b_.weight_bytes += n * e_c_;
}

void LayerLedger::Track(double elems, double times, double element_bytes) {
  const double bytes = elems * batch_ * (element_bytes > 0 ? element_bytes : e_a_);
  activation_bytes_ += times * bytes;
  if (times <= 0) return;
  if (bytes > largest_) {
    second_ = times >= 2 ? bytes : largest_;
    largest_ = bytes;
  } else if (bytes > second_) {
    second_ = bytes;
  }
}

void LayerLedger::Matmul(double macs, double in, double out, double weights, double bias,
                         bool input_grad, bool first_use, double in_bytes) {
  const double e_in = in_bytes > 0 ? in_bytes : e_a_;
  macs_ += macs;
  executed_ += 2 * batch_ * macs * (input_grad ? 3 : 2);
  Params(weights, first_use, input_grad);
  if (bias > 0) {
    Params(bias, first_use, false);
    b_.bias_relu_flops += 2 * batch_ * out;          // bias add, bias gradient
    b_.activation_bwd_bytes += batch_ * out * e_a_;  // db reads dY
  }
  b_.activation_fwd_bytes += batch_ * (in * e_in + out * e_a_);
  b_.activation_bwd_bytes += batch_ * (out * e_a_ + in * e_in);           // dW: read dY and X
  if (input_grad) b_.activation_bwd_bytes += batch_ * (out + in) * e_a_;  // dX
  Track(out);
  Heavy();
}

void LayerLedger::ActivationMatmul(double macs, double a, double b, double out) {
  macs_ += macs;
  executed_ += 2 * batch_ * macs * 3;
  b_.activation_fwd_bytes += batch_ * (a + b + out) * e_a_;
  b_.activation_bwd_bytes += batch_ * ((out + b + a) + (out + a + b)) * e_a_;  // dA, dB
  Track(out);
  Heavy();
}

void LayerLedger::RecurrentMatmul(double steps, double macs, double in, double out, double weights,
                                  double bias) {
  macs_ += steps * macs;
  executed_ += 2 * batch_ * macs * (3 * steps - 1);
  FirstUse(weights, /*autocast=*/true);
  Reuse(weights, steps - 1);
  b_.weight_bytes += (steps - 1) * weights * e_c_;  // W read for dX, steps 2..T
  if (bias > 0) {
    FirstUse(bias, /*autocast=*/true);
    Reuse(bias, steps - 1);
    b_.bias_relu_flops += 2 * steps * batch_ * out;
    b_.activation_bwd_bytes += steps * batch_ * out * e_a_;
  }
  b_.activation_fwd_bytes += steps * batch_ * (in + out) * e_a_;
  b_.activation_bwd_bytes += steps * batch_ * (out + in) * e_a_;        // dW
  b_.activation_bwd_bytes += (steps - 1) * batch_ * (out + in) * e_a_;  // dX
  Track(out, steps);
  Heavy(static_cast<int64_t>(steps));  // step t needs step t - 1's state
}

void LayerLedger::Elementwise(const ElementwiseCost& cost, double elems, double steps) {
  const double n = batch_ * elems * steps;
  b_.bias_relu_flops += n * (cost.fwd_flops + cost.bwd_flops);
  b_.activation_fwd_bytes += n * cost.fwd_passes * e_a_;
  b_.activation_bwd_bytes += n * cost.bwd_passes * e_a_;
  Track(elems, cost.kept * steps);
}

void LayerLedger::Norm(const ElementwiseCost& cost, double elems, double channels) {
  FirstUse(2 * channels, /*autocast=*/false);
  Elementwise(cost, elems);
}

void LayerLedger::Pool(double in, double out, double fwd_flops, double bwd_flops) {
  const double n_out = batch_ * out;
  b_.bias_relu_flops += n_out * (fwd_flops + bwd_flops);
  b_.activation_fwd_bytes += batch_ * (in + out) * e_a_;
  b_.activation_bwd_bytes += batch_ * (out + in) * e_a_;
  Track(out);
}

void LayerLedger::MaxPool(double in, double out, double window) {
  Pool(in, out, window - 1, 1);
  const double indices = batch_ * out * kIndexElementBytes;
  b_.activation_fwd_bytes += indices;
  b_.activation_bwd_bytes += indices;
  activation_bytes_ += indices;
}

void LayerLedger::NetworkInput(double elems) {
  const double n = batch_ * elems;
  if (mixed_) {
    activation_bytes_ += n * (4.0 + e_c_);
    b_.activation_fwd_bytes += n * (4.0 + e_c_);  // the cast
  } else {
    activation_bytes_ += n * e_a_;
  }
}

void LayerLedger::Workspace(double elems) {
  workspace_ = std::max(workspace_, batch_ * elems * e_a_);
}

void LayerLedger::Fork(double elems, int consumers) {
  if (consumers < 2) return;
  const double n = batch_ * elems * (consumers - 1);
  b_.bias_relu_flops += n;
  b_.activation_bwd_bytes += 3 * n * e_a_;
}

void LayerLedger::Embedding(double rows, double width, double table_rows, bool tied) {
  const double table = table_rows * width;
  // Only the looked-up rows are read and the table gradient is written
  // below, so an untied table adds its parameters and no bytes of FirstUse.
  if (!tied) params_ += static_cast<int64_t>(std::llround(table));
  const double n = batch_ * rows * width;
  // Forward gather: read the rows, write the output (the table's dtype).
  b_.activation_fwd_bytes += n * e_w_;
  b_.weight_bytes += n * e_w_;
  // Backward: zero-filled table gradient, then each row's gradient read and
  // added into it (read-modify-write); a tied table's gradient is then summed
  // with the projection's (counted by its Matmul as a reuse).
  b_.gradient_bytes += table * e_w_ + 2 * n * e_w_;
  b_.activation_bwd_bytes += n * e_w_;
  b_.bias_relu_flops += n;
  if (tied) {
    b_.gradient_bytes += 3 * table * e_w_;
    b_.bias_relu_flops += table;
  }
  Track(rows * width, 1, e_w_);
  Heavy();
}

void LayerLedger::Loss(double elems, double fwd_flops, double bwd_flops, double fwd_passes,
                       double bwd_passes, double kept) {
  const double n = batch_ * elems;
  b_.loss_flops += n * (fwd_flops + bwd_flops);
  b_.activation_fwd_bytes += n * fwd_passes * e_a_;
  b_.activation_bwd_bytes += n * bwd_passes * e_a_;
  for (int k = 0; k < static_cast<int>(kept); ++k) Track(elems);
}

void LayerLedger::Heavy(int64_t count) {
  heavy_ops_ += count;
  path_ += count;
}

void LayerLedger::BeginBranches() {
  regions_.push_back({path_, 0});
  path_ = 0;
}

void LayerLedger::NextBranch() {
  assert(!regions_.empty());
  regions_.back().longest_branch = std::max(regions_.back().longest_branch, path_);
  path_ = 0;
}

void LayerLedger::EndBranches() {
  assert(!regions_.empty());
  const BranchRegion region = regions_.back();
  regions_.pop_back();
  path_ = region.path_before + std::max(region.longest_branch, path_);
}

OperatorWidth LayerLedger::width() const {
  // Regions still open count as closed here.
  int64_t path = path_;
  for (auto region = regions_.rbegin(); region != regions_.rend(); ++region) {
    path = region->path_before + std::max(region->longest_branch, path);
  }
  return {heavy_ops_, path};
}

WorkCounts LayerLedger::Finish() const {
  WorkCounts out;
  out.width = width();
  out.breakdown = b_;
  WorkBreakdown& b = out.breakdown;
  StepTotals t;
  t.params = params_;
  t.macs_per_example = macs_;
  t.batch = batch_;
  t.executed_flops = executed_;
  t.activation_bytes = activation_bytes_;
  t.weight_element_bytes = e_w_;
  t.optimizer = spec_.optimizer;
  if (mixed_) {
    t.cast_params = cast_params_;
    t.cast_element_bytes = e_c_;
  }
  const double state = FillStepCounts(t, &b, &out.counts);
  out.counts.set_peak_memory_estimate_bytes(state + activation_bytes_ + target_bytes_ + largest_ +
                                            second_ + workspace_);
  return out;
}

}  // namespace paradnn::model
