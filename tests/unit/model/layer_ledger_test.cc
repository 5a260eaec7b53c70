#include "model/layer_ledger.h"

#include <gtest/gtest.h>

#include "model/families/fc.h"
#include "model/model_counts.h"
#include "model/model_spec.h"

namespace paradnn::model {
namespace {

// A spec the ledger reads batch, precision and optimizer from.
ModelSpec LedgerSpec(Precision precision, int64_t batch = 8) {
  return MakeFcSpec(FcShape{1, 4, 4, 4, batch}, precision);
}

void ExpectSameCounts(const WorkCounts& a, const WorkCounts& b) {
  EXPECT_EQ(a.counts.params(), b.counts.params());
  EXPECT_DOUBLE_EQ(a.counts.macs_per_example(), b.counts.macs_per_example());
  EXPECT_DOUBLE_EQ(a.counts.executed_flops(), b.counts.executed_flops());
  EXPECT_DOUBLE_EQ(a.counts.other_flops(), b.counts.other_flops());
  EXPECT_DOUBLE_EQ(a.counts.bytes_per_step(), b.counts.bytes_per_step());
  EXPECT_DOUBLE_EQ(a.counts.activation_bytes(), b.counts.activation_bytes());
  EXPECT_DOUBLE_EQ(a.counts.peak_memory_estimate_bytes(), b.counts.peak_memory_estimate_bytes());
}

// A recurrence's matmul in one call counts what its steps would one by one:
// the first step without an input gradient, the others as reuses of the
// same weights that read them for the input gradient.
TEST(LayerLedgerTest, RecurrentMatmulIsItsStepsOneByOne) {
  for (Precision precision : {Precision::kFloat32, Precision::kBFloat16, Precision::kMixedBf16}) {
    SCOPED_TRACE(PrecisionName(precision));
    const double steps = 7, e = 16, ge = 64;
    LayerLedger at_once(LedgerSpec(precision));
    at_once.RecurrentMatmul(steps, e * ge, e, ge, ge * e, ge);
    LayerLedger by_step(LedgerSpec(precision));
    for (int t = 0; t < steps; ++t) {
      by_step.Matmul(e * ge, e, ge, ge * e, ge, /*input_grad=*/t > 0, /*first_use=*/t == 0);
    }
    ExpectSameCounts(at_once.Finish(), by_step.Finish());
  }
}

TEST(LayerLedgerTest, ElementwiseOverStepsIsItsStepsOneByOne) {
  LayerLedger at_once(LedgerSpec(Precision::kFloat32));
  at_once.Elementwise(kDropoutCost, 100, 5);
  LayerLedger by_step(LedgerSpec(Precision::kFloat32));
  for (int t = 0; t < 5; ++t) by_step.Elementwise(kDropoutCost, 100);
  ExpectSameCounts(at_once.Finish(), by_step.Finish());
}

// Autocast copies only matmul weights: a norm's parameters add no cast bytes
// in mixed precision, a Linear's do.
TEST(LayerLedgerTest, NormParametersAreNeverAutocast) {
  LayerLedger norm(LedgerSpec(Precision::kMixedBf16));
  norm.Norm(kBatchNormCost, 1000, 10);
  const WorkCounts n = norm.Finish();
  EXPECT_EQ(n.counts.params(), 20);
  EXPECT_DOUBLE_EQ(n.breakdown.weight_bytes, 20 * 4.0);    // read at float32
  EXPECT_DOUBLE_EQ(n.breakdown.gradient_bytes, 20 * 4.0);  // written at float32
  LayerLedger linear(LedgerSpec(Precision::kMixedBf16));
  linear.Matmul(20, 2, 10, 20, 0, /*input_grad=*/false);
  EXPECT_DOUBLE_EQ(linear.Finish().breakdown.weight_bytes, 20 * (4.0 + 2 * 2.0));
}

TEST(LayerLedgerTest, MaxPoolComparesWindowMinusOneAndKeepsIndices) {
  LayerLedger l(LedgerSpec(Precision::kFloat32, /*batch=*/2));
  l.MaxPool(/*in=*/400, /*out=*/100, /*window=*/9);
  const WorkCounts w = l.Finish();
  EXPECT_DOUBLE_EQ(w.breakdown.bias_relu_flops, 2 * 100 * (8 + 1));
  // The output (4 bytes) and its int64 indices, per example.
  EXPECT_DOUBLE_EQ(w.counts.activation_bytes(), 2 * 100 * (4 + kIndexElementBytes));
  EXPECT_DOUBLE_EQ(w.breakdown.activation_fwd_bytes, 2 * (400 * 4 + 100 * (4 + 8)));
}

// Peak memory adds the largest workspace, not their sum.
TEST(LayerLedgerTest, WorkspaceAddsItsLargestToPeakMemory) {
  LayerLedger without(LedgerSpec(Precision::kFloat32, /*batch=*/2));
  without.Elementwise(kReluCost, 10);
  LayerLedger with(LedgerSpec(Precision::kFloat32, /*batch=*/2));
  with.Elementwise(kReluCost, 10);
  with.Workspace(300);
  with.Workspace(500);
  with.Workspace(100);
  EXPECT_DOUBLE_EQ(with.Finish().counts.peak_memory_estimate_bytes() -
                       without.Finish().counts.peak_memory_estimate_bytes(),
                   2 * 500 * 4.0);
}

// An untied embedding reads only its looked-up rows, at the table's dtype
// (autocast leaves embeddings alone), and zero-fills a table-sized gradient.
TEST(LayerLedgerTest, EmbeddingReadsItsRowsAtTheTableDtype) {
  LayerLedger l(LedgerSpec(Precision::kMixedBf16, /*batch=*/3));
  l.Embedding(/*rows=*/5, /*width=*/8, /*table_rows=*/1000, /*tied=*/false);
  const WorkCounts w = l.Finish();
  EXPECT_EQ(w.counts.params(), 8000);
  EXPECT_DOUBLE_EQ(w.breakdown.weight_bytes, 3 * 5 * 8 * 4.0);
  EXPECT_DOUBLE_EQ(w.breakdown.gradient_bytes, 8000 * 4.0 + 2 * 3 * 5 * 8 * 4.0);
  EXPECT_DOUBLE_EQ(w.counts.activation_bytes(), 3 * 5 * 8 * 4.0);
}

}  // namespace
}  // namespace paradnn::model
