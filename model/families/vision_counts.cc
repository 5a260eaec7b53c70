// The analytic counts of the four vision families: a walk over the layer
// records (VisionLayers) that the LibTorch models are checked against, so
// counts and networks describe one network.
#include <optional>
#include <vector>

#include "model/families/vision.h"
#include "model/family.h"
#include "model/layer_ledger.h"

namespace paradnn::model {
namespace {

using Kind = VisionLayer::Kind;

// A convolution or linear layer through the ledger; the conv that reads the
// image reads its 16-bit copy in mixed precision and needs no input gradient.
void CountVisionMatmul(const VisionLayer& l, LayerLedger* ledger) {
  const double bias = l.bias ? static_cast<double>(l.out.c) : 0;
  ledger->Matmul(static_cast<double>(l.Macs()), static_cast<double>(l.in.elements()),
                 static_cast<double>(l.out.elements()), static_cast<double>(l.Params()) - bias,
                 bias, /*input_grad=*/!l.reads_image, /*first_use=*/true,
                 l.reads_image ? ledger->input_element_bytes() : 0);
  // im2col columns of a dense conv (depthwise convs have kernels of their own).
  if (l.kind == Kind::kConv && l.kernel > 1 && l.groups == 1) {
    ledger->Workspace(static_cast<double>(l.kernel * l.kernel * l.in.c * l.out.h * l.out.w));
  }
}

// One layer's FLOPs and bytes, forward and backward.
void CountVisionLayer(const VisionLayer& l, LayerLedger* ledger) {
  const double n_in = static_cast<double>(l.in.elements());
  const double n_out = static_cast<double>(l.out.elements());
  const double window = static_cast<double>(l.kernel * l.kernel);
  switch (l.kind) {
    case Kind::kConv:
    case Kind::kLinear:
      CountVisionMatmul(l, ledger);
      break;
    case Kind::kBatchNorm:
      ledger->Norm(kBatchNormCost, n_out, static_cast<double>(l.out.c));
      break;
    case Kind::kRelu:
      ledger->Elementwise(kReluInPlaceCost, n_out);
      break;
    case Kind::kMaxPool:
      ledger->MaxPool(n_in, n_out, window);
      break;
    case Kind::kAvgPool:
      ledger->Pool(n_in, n_out, window, window);
      break;
    case Kind::kGlobalAvgPool:
      // n_in / n_out adds per output forward, as many spreads backward.
      ledger->Pool(n_in, n_out, n_in / n_out, n_in / n_out);
      break;
    case Kind::kAdd:
      ledger->Elementwise(kAddCost, n_out);
      break;
    case Kind::kConcat:
      ledger->Elementwise(kConcatCost, n_out);
      break;
    case Kind::kDropout:
      ledger->Elementwise(kDropoutCost, n_out);
      break;
    case Kind::kFork:
      ledger->Fork(n_in, static_cast<int>(l.operands));
      break;
    case Kind::kBranches:
      ledger->BeginBranches();
      break;
    case Kind::kNextBranch:
      ledger->NextBranch();
      break;
    case Kind::kEndBranches:
      ledger->EndBranches();
      break;
  }
}

}  // namespace

WorkCounts CountVision(const ModelSpec& spec) {
  const std::optional<VisionArch> arch = VisionArchOf(spec.family);
  const VisionShape s = VisionShapeOf(spec);
  LayerLedger ledger(spec);
  const double batch = ledger.batch();
  ledger.NetworkInput(3 * static_cast<double>(s.image * s.image));
  for (const VisionLayer& l : VisionLayers(*arch, s.image, s.output)) CountVisionLayer(l, &ledger);
  ledger.Loss(static_cast<double>(s.output), kLossForwardFlopsPerLogit, kLossBackwardFlopsPerLogit,
              /*fwd_passes=*/2, /*bwd_passes=*/2, /*kept=*/1);
  ledger.AddTargetBytes(batch * kIndexElementBytes);  // int64 labels
  return ledger.Finish();
}

}  // namespace paradnn::model
