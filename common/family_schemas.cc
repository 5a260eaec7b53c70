// The family table: every model family's hyper-parameters, with ranges,
// defaults and categorical options, as sweeps and the CLI see them. The
// runner's own registry (model/family.cc) lists the same keys; the
// coordinator checks each expanded configuration against it at submit.
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/sweep_validation.h"

namespace paradnn::common {
namespace {

// ---- the family table -------------------------------------------------------
// Sorted by name within a family; families sorted by name. The runner's
// registry (model/family.h) declares the same keys and defaults.

constexpr int64_t kMaxBatch = int64_t{1} << 22;
constexpr int64_t kMaxWidth = int64_t{1} << 20;
constexpr int64_t kMaxVocab = int64_t{1} << 22;

// Framework settings every family takes; they override run.intra_op_threads
// and run.inter_op_threads for the job, and as params analyses pivot on them.
constexpr ParamSchema kInterOpThreads = {
    "inter_op_threads", 1, 1024, false,
    "LibTorch inter-op threads of the job (default: run.inter_op_threads)"};
constexpr ParamSchema kIntraOpThreads = {
    "intra_op_threads", 1, 1024, false,
    "LibTorch intra-op threads of the job (default: run.intra_op_threads)"};
constexpr ParamSchema kBatch = {"batch", 1, kMaxBatch, true, "examples per training step"};
// The real-world models: a smaller cap, as their runner code has.
constexpr ParamSchema kModelBatch = {"batch", 1, int64_t{1} << 20, true,
                                     "examples per training step"};

constexpr ParamSchema kFcParams[] = {
    kBatch,
    {"input", 1, kMaxWidth, true, "input features per example"},
    kInterOpThreads,
    kIntraOpThreads,
    {"layer", 1, 4096, true, "hidden Linear+ReLU layers"},
    {"node", 1, kMaxWidth, true, "units per hidden layer"},
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
};

constexpr ParamSchema kCnnParams[] = {
    kBatch,
    {"block", 1, 64, true, "blocks in each of the four groups (see option blocks)"},
    {"filter", 1, 4096, true, "channels of the stem and the first group (then 2x, 4x, 8x)"},
    {"image", 193, 4096, true, "height and width of the input images", 0, 0,
     "the 7x7 average pool needs a final map of at least 7 (image >= 193)"},
    kInterOpThreads,
    kIntraOpThreads,
    {"output", 1, kMaxWidth, true, "classes (width of the last Linear)"},
};

constexpr const char* kBlockFns[] = {"residual", "bottleneck"};

absl::Status CheckBlockCounts(absl::string_view value) {
  constexpr int64_t kMaxBlocks = 64;
  std::vector<absl::string_view> parts = absl::StrSplit(value, ',');
  bool ok = parts.size() == 4;
  for (absl::string_view part : parts) {
    int64_t count = 0;
    // Canonical decimal only ("3", not "03", " 3" or "+3"), so that equal
    // counts are equal strings in stored configs.
    ok = ok && !part.empty() && part.front() >= '1' && part.front() <= '9' &&
         absl::SimpleAtoi(part, &count) && absl::StrCat(count) == part && count <= kMaxBlocks;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("is not four comma-separated block counts 1..",
                                                 kMaxBlocks, " like \"3,4,6,3\""));
}

// What a tuned user runs: channels_last on CPU (oneDNN's native blocked
// layouts start from NHWC) and on CUDA (cuDNN's tensor-core kernels).
constexpr const char* kMemoryFormats[] = {"channels_last", "contiguous"};
#define PARADNN_MEMORY_FORMAT_OPTION                                                        \
  {                                                                                          \
    "memory_format", kMemoryFormats, "channels_last",                                        \
        "layout of images, activations and conv weights: channels_last (NHWC, what a tuned " \
        "user runs on CPU and CUDA) or contiguous (NCHW)"                                    \
  }

constexpr OptionSchema kCnnOptions[] = {
    {"block_fn", kBlockFns, nullptr, "residual (two 3x3 convs) or bottleneck (1x1, 3x3, 1x1 x4)"},
    {"blocks",
     {},
     "",
     "blocks per group as four counts, e.g. \"3,4,6,3\" (ResNet-50); overrides block",
     CheckBlockCounts},
    PARADNN_MEMORY_FORMAT_OPTION,
};

constexpr OptionSchema kVisionOptions[] = {PARADNN_MEMORY_FORMAT_OPTION};
#undef PARADNN_MEMORY_FORMAT_OPTION

constexpr ParamSchema kRnnParams[] = {
    kBatch,
    {"embed", 1, 65536, true, "embedding width = hidden size of every cell"},
    kInterOpThreads,
    kIntraOpThreads,
    {"layer", 1, 1024, true, "stacked recurrent layers"},
    {"length", 1, 65536, true, "time steps per sequence"},
    {"vocab", 2, kMaxVocab, true, "vocabulary size (embedding rows, classes)"},
};

constexpr const char* kCells[] = {"rnn", "lstm", "gru"};
constexpr OptionSchema kRnnOptions[] = {
    {"cell", kCells, nullptr, "recurrent cell: rnn (tanh), lstm or gru"},
};

// ResNet-50, DenseNet-121, MobileNet v1, SqueezeNet 1.0: adaptive pooling
// before the classifier lets them take any image of at least 32.
constexpr ParamSchema kImageModelParams[] = {
    kModelBatch,
    {"image", 32, 4096, false, "height and width of the input images", 224},
    kInterOpThreads,
    kIntraOpThreads,
    {"output", 1, kMaxWidth, false, "classes", 1000},
};

constexpr ParamSchema kRetinaNetParams[] = {
    kModelBatch,
    {"image", 64, 4096, false, "height and width of the input images", 512, 32,
     "the FPN adds upsampled maps to the backbone's stride-8, -16 and -32 maps, which line "
     "up only when image is a multiple of 32"},
    kInterOpThreads,
    kIntraOpThreads,
    {"output", 1, 100000, false, "object classes", 80},
};

constexpr ParamSchema kTransformerParams[] = {
    kModelBatch,
    kInterOpThreads,
    kIntraOpThreads,
    {"length", 1, 65536, false, "source and target sequence length", 128},
    {"vocab", 2, kMaxVocab, false, "shared source/target vocabulary", 32000},
};

constexpr ParamSchema kTorchScriptParams[] = {
    kBatch,
    kInterOpThreads,
    kIntraOpThreads,
};

// The harness family: no model is built and nothing is timed (docs/
// operations.md, load bench). `index` only tells otherwise identical jobs
// apart, so that a sweep can hold many.
constexpr ParamSchema kNoopParams[] = {
    {"batch", 1, kMaxBatch, true, "unused (nothing runs); every family takes it"},
    {"index", 0, int64_t{1} << 40, true, "any number; tells otherwise identical jobs apart"},
    kInterOpThreads,
    kIntraOpThreads,
};

constexpr FamilySchema kFamilies[] = {
    {"cnn", "ResNet v1 with residual or bottleneck blocks (PARADNN_MODELS.md)", kCnnParams,
     kCnnOptions, "conv"},
    {"densenet121", "DenseNet-121 (7.98 M parameters at 1000 classes)", kImageModelParams,
     kVisionOptions, "conv"},
    {"fc", "fully connected: [Linear + ReLU] x layer, then Linear(output)", kFcParams},
    {"mobilenet_v1", "MobileNet v1, width 1.0 (4.23 M parameters at 1000 classes)",
     kImageModelParams, kVisionOptions, "conv"},
    {"noop", "harness: returns an OK result at once; no model, no timing (load tests)",
     kNoopParams},
    {"resnet50", "ResNet-50 (25.56 M parameters at 1000 classes)", kImageModelParams,
     kVisionOptions, "conv"},
    {"retinanet", "RetinaNet: ResNet-50 + FPN, focal and smooth-L1 losses", kRetinaNetParams,
     kVisionOptions, "conv"},
    {"rnn", "embedding, stacked RNN/LSTM/GRU cells, Linear(vocab) on every step", kRnnParams,
     kRnnOptions},
    {"squeezenet1_0", "SqueezeNet 1.0 (1.25 M parameters at 1000 classes)", kImageModelParams,
     kVisionOptions, "conv"},
    {"torchscript", "your own TorchScript model (torchscript: file, inputs, loss)",
     kTorchScriptParams},
    {"transformer", "Transformer base: 6+6 layers, d_model 512, 8 heads, ff 2048",
     kTransformerParams},
};

}  // namespace

absl::Span<const FamilySchema> Families() { return kFamilies; }

}  // namespace paradnn::common
