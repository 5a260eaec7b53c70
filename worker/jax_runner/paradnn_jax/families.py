"""The model families' keys, generated from model/family.h by
model/family_tables.cc; do not edit. Regenerate with
PARADNN_UPDATE_GENERATED=1 ctest -R model_test (in the build folder)."""

# family: {"summary": ..., "params": ((name, min, max, required, default or None,
# multiple_of), ...), "options": ((name, allowed values (() = free text), default
# (None = required, "" = none)), ...)}
FAMILIES = {
    "allreduce": {
        "summary": "communication roof: each step one float32 sum all-reduce of `bytes` over hosts ranks",
        "params": (
            ("bytes", 4, 1073741824, True, None, 4),
            ("devices", 1, 1, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("overlap", 1, 1, False, None, 0),
        ),
        "options": (
        ),
    },
    "cnn": {
        "summary": "ResNet v1: stem, four groups of residual or bottleneck blocks, avgpool, Linear(output)",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("block", 1, 64, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("filter", 1, 4096, True, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 193, 4096, True, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, True, None, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("block_fn", ("residual", "bottleneck"), None),
            ("blocks", (), ""),
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "densenet121": {
        "summary": "DenseNet-121 (growth 32, blocks 6-12-24-16), image x image RGB",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 32, 4096, False, 224, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, False, 1000, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "fc": {
        "summary": "fully connected: input -> [Linear(node) + ReLU] x layer -> Linear(output)",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("input", 1, 1048576, True, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("layer", 1, 4096, True, None, 0),
            ("node", 1, 1048576, True, None, 0),
            ("output", 1, 1048576, True, None, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
        ),
    },
    "inception": {
        "summary": "Inception-style: stem, blocks of `branches` parallel 1x1 -> 3x3 branches concatenated, global avgpool, Linear(output)",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("block", 1, 64, True, None, 0),
            ("branches", 1, 16, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("filter", 1, 1024, True, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 2, 4096, True, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, True, None, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "mobilenet_v1": {
        "summary": "MobileNet v1 (width 1.0, depthwise-separable convs), image x image RGB",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 32, 4096, False, 224, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, False, 1000, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "noop": {
        "summary": "harness: an OK result at once; no model is built, nothing is timed",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("index", 0, 1099511627776, True, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
        ),
    },
    "resnet50": {
        "summary": "ResNet-50 (torchvision v1.5: stride on the 3x3 conv), image x image RGB",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 32, 4096, False, 224, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, False, 1000, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "retinanet": {
        "summary": "RetinaNet: ResNet-50 v1.5 + FPN P3-P7 + class/box subnets, focal + smooth-L1 losses",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 64, 4096, False, 512, 32),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 100000, False, 80, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "rnn": {
        "summary": "language model: Embedding -> layer x RNN/LSTM/GRU (hidden = embed) -> Linear(vocab) per step",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("embed", 1, 65536, True, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("layer", 1, 1024, True, None, 0),
            ("length", 1, 65536, True, None, 0),
            ("overlap", 0, 1, False, None, 0),
            ("vocab", 2, 4194304, True, None, 0),
        ),
        "options": (
            ("cell", ("rnn", "lstm", "gru"), None),
        ),
    },
    "squeezenet1_0": {
        "summary": "SqueezeNet 1.0 (fire modules, conv classifier), image x image RGB",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("image", 32, 4096, False, 224, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("output", 1, 1048576, False, 1000, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
            ("memory_format", ("channels_last", "contiguous"), "channels_last"),
        ),
    },
    "torchscript": {
        "summary": "your own TorchScript model, uploaded with its sweep (inputs and loss declared)",
        "params": (
            ("batch", 1, 4194304, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("overlap", 0, 1, False, None, 0),
        ),
        "options": (
        ),
    },
    "transformer": {
        "summary": "Transformer base (Vaswani 2017): 6+6 layers, d 512, 8 heads, d_ff 2048, tied embeddings",
        "params": (
            ("batch", 1, 1048576, True, None, 0),
            ("devices", 1, 16, False, None, 0),
            ("hosts", 1, 64, False, None, 0),
            ("inter_op_threads", 1, 1024, False, None, 0),
            ("intra_op_threads", 1, 1024, False, None, 0),
            ("length", 1, 65536, False, 128, 0),
            ("overlap", 0, 1, False, None, 0),
            ("vocab", 2, 4194304, False, 32000, 0),
        ),
        "options": (
        ),
    },
}
