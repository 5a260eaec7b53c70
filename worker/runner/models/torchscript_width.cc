#include "worker/runner/models/torchscript_width.h"

#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <unordered_map>

namespace paradnn::runner {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// The operators the guideline counts as heavy: what model/layer_ledger.h
// counts for the analytic families (matmuls, convolutions, embedding
// lookups, recurrent layers), by their ATen names.
bool IsHeavyOperator(const Node* node) {
  static const auto* heavy = new std::set<std::string>{"aten::linear",
                                                       "aten::matmul",
                                                       "aten::mm",
                                                       "aten::addmm",
                                                       "aten::bmm",
                                                       "aten::baddbmm",
                                                       "aten::einsum",
                                                       "aten::conv1d",
                                                       "aten::conv2d",
                                                       "aten::conv3d",
                                                       "aten::convolution",
                                                       "aten::_convolution",
                                                       "aten::conv_transpose1d",
                                                       "aten::conv_transpose2d",
                                                       "aten::conv_transpose3d",
                                                       "aten::embedding",
                                                       "aten::embedding_bag",
                                                       "aten::lstm",
                                                       "aten::gru",
                                                       "aten::rnn_tanh",
                                                       "aten::rnn_relu",
                                                       "aten::lstm_cell",
                                                       "aten::gru_cell"};
  return heavy->count(node->kind().toQualString()) > 0;
}

// Heavy operators on the longest chain ending at each value; Walk returns
// how many heavy operators one pass runs.
class WidthWalker {
 public:
  int64_t longest() const { return longest_; }

  // Walks `block`, whose inputs start at `start` heavy operators; returns
  // the heavy operators one pass of it runs.
  int64_t Walk(const Block* block, int64_t start) {
    for (const Value* input : block->inputs()) depth_[input] = start;
    int64_t heavy = 0;
    for (const Node* node : block->nodes()) heavy += Step(node);
    return heavy;
  }

 private:
  int64_t DepthOf(const Value* value) const {
    const auto it = depth_.find(value);
    return it == depth_.end() ? 0 : it->second;
  }

  void SetOutputs(const Node* node, int64_t depth) {
    for (const Value* output : node->outputs()) depth_[output] = depth;
    longest_ = std::max(longest_, depth);
  }

  // One node: its outputs' depths; returns the heavy operators it runs.
  int64_t Step(const Node* node) {
    int64_t in = 0;
    for (const Value* input : node->inputs()) in = std::max(in, DepthOf(input));
    if (node->kind() == c10::prim::fork && node->hasAttribute(c10::attr::Subgraph)) {
      // The forked graph runs beside this one: its chain starts at the
      // fork's inputs; aten::wait passes its future's depth on.
      const std::shared_ptr<torch::jit::Graph> sub = node->g(c10::attr::Subgraph);
      const int64_t heavy = Walk(sub->block(), in);
      int64_t out = in;
      for (const Value* output : sub->outputs()) out = std::max(out, DepthOf(output));
      SetOutputs(node, out);
      return heavy;
    }
    if (!node->blocks().empty()) {
      // One block runs (an If's larger one; a loop body once).
      int64_t heavy = 0, out = in;
      for (const Block* block : node->blocks()) {
        heavy = std::max(heavy, Walk(block, in));
        for (const Value* output : block->outputs()) out = std::max(out, DepthOf(output));
      }
      SetOutputs(node, out);
      return heavy;
    }
    const int64_t own = IsHeavyOperator(node) ? 1 : 0;
    SetOutputs(node, in + own);
    return own;
  }

  std::unordered_map<const Value*, int64_t> depth_;
  int64_t longest_ = 0;
};

}  // namespace

model::OperatorWidth GraphOperatorWidth(const std::shared_ptr<torch::jit::Graph>& graph) {
  WidthWalker walker;
  model::OperatorWidth width;
  width.heavy_ops = walker.Walk(graph->block(), 0);
  width.longest_path = walker.longest();
  return width;
}

model::OperatorWidth TorchScriptWidth(const std::string& content) {
  std::istringstream stream(content);
  torch::jit::Module module = torch::jit::load(stream, torch::kCPU);
  std::shared_ptr<torch::jit::Graph> graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  return GraphOperatorWidth(graph);
}

}  // namespace paradnn::runner
