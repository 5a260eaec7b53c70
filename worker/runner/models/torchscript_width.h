// A TorchScript model's average operator width (model/model_counts.h,
// OperatorWidth) from its graph, as the paper's tuner computes it: the
// heavy operators (matmuls, convolutions, embedding lookups, recurrent
// layers) of forward, inlined, and the most of them on one chain of data
// dependencies. The analytic families count it from their layer ledgers;
// a TorchScript model has only its graph. LibTorch translation unit.
#ifndef PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_WIDTH_H_
#define PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_WIDTH_H_

#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <string>

#include "model/model_counts.h"

namespace paradnn::runner {

// The width of `graph` (not modified). A node with blocks (prim::If,
// prim::Loop) counts as one step of its blocks' heavy operators and
// longest chain (the larger block's for an If; a loop body once: its trip
// count is not known); prim::fork's subgraph runs beside its caller until
// aten::wait, so forked branches add to the heavy operators, not the chain.
model::OperatorWidth GraphOperatorWidth(const std::shared_ptr<torch::jit::Graph>& graph);

// The width of the serialized module `content`'s forward(), loaded on the
// CPU and inlined. Throws c10::Error where it does not load.
model::OperatorWidth TorchScriptWidth(const std::string& content);

}  // namespace paradnn::runner

#endif  // PARADNN_WORKER_RUNNER_MODELS_TORCHSCRIPT_WIDTH_H_
