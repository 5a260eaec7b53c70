"""Analytic counts of one training step: params, macs_per_example,
model_flops (6 x forward MACs x batch) and executed_flops, computed exactly
as paradnn's torch-free model library does (model/families/fc.cc,
cnn.cc, rnn.cc; docs/models.md "Counting work"), with the
same floating-point operations in the same order so the doubles agree bit
for bit. tests/unit/worker/jax_runner checks them against
`paradnn-runner --describe`.

The other ModelCounts fields (other_flops, bytes_per_step,
activation_bytes, peak_memory_estimate_bytes) describe LibTorch 1.13's
kernels one by one; XLA fuses differently, so the JAX runner leaves them 0
(unknown) rather than report LibTorch's figures as its own."""
from .config import parse_block_counts

RNN_GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def _counts(params, macs, batch, executed):
    macs_d = float(macs)
    return dict(params=int(params), macs_per_example=int(round(macs_d)),
                model_flops=6.0 * macs_d * float(batch), executed_flops=executed)


def fc_counts(spec):
    p = spec.params
    d = [float(p["input"])] + [float(p["node"])] * p["layer"] + [float(p["output"])]
    batch = float(p["batch"])
    params = 0
    macs = 0
    executed = 0.0
    layers = len(d) - 1
    for k in range(1, layers + 1):
        w = d[k - 1] * d[k]
        params += int((d[k - 1] + 1) * d[k])
        macs += int(w)
        executed += 2 * batch * w * (2 if k == 1 else 3)
    return _counts(params, macs, batch, executed)


def cnn_output_size(size, kernel, stride, padding):
    return (size + 2 * padding - kernel) // stride + 1


def cnn_blocks(spec):
    blocks = spec.options.get("blocks", "")
    return parse_block_counts(blocks) if blocks else [spec.params["block"]] * 4


def cnn_conv_layers(spec):
    """Every conv as (kernel, stride, pad, cin, cout, in_size, out_size,
    projection), in model/families/cnn.cc CnnConvLayers order: the stem,
    then per block its main-path convs followed by its projection (first
    block of a group)."""
    convs = []

    def add(k, stride, pad, cin, cout, size, projection):
        out = cnn_output_size(size, k, stride, pad)
        convs.append((k, stride, pad, cin, cout, size, out, projection))
        return out

    f = spec.params["filter"]
    bottleneck = spec.options["block_fn"] == "bottleneck"
    size = add(7, 2, 3, 3, f, spec.params["image"], False)
    size = cnn_output_size(size, 3, 2, 1)  # max-pool
    channels = f
    for g, count in enumerate(cnn_blocks(spec)):
        width = f << g
        group_stride = 1 if g == 0 else 2
        for j in range(count):
            stride = group_stride if j == 0 else 1
            in_size, in_channels, out_channels = size, channels, width
            if not bottleneck:
                size = add(3, stride, 1, in_channels, width, in_size, False)
                size = add(3, 1, 1, width, width, size, False)
            else:
                out_channels = 4 * width
                size = add(1, 1, 0, in_channels, width, in_size, False)
                size = add(3, stride, 1, width, width, size, False)
                size = add(1, 1, 0, width, out_channels, size, False)
            if j == 0:
                add(1, stride, 0, in_channels, out_channels, in_size, True)
            channels = out_channels
    return convs


def cnn_head_features(spec):
    convs = cnn_conv_layers(spec)
    tail = convs[-2] if convs[-1][7] else convs[-1]
    side = cnn_output_size(tail[6], 7, 1, 0)
    return tail[4] * side * side


def cnn_counts(spec):
    batch = float(spec.params["batch"])
    convs = cnn_conv_layers(spec)
    # Accumulated in model/families/cnn.cc's order: stem, then per block
    # main-path convs + BNs, projection conv + BN, then the head.
    params = 0.0
    macs = 0.0
    executed = 0.0
    for i, (k, _, _, cin, cout, _, out_size, _) in enumerate(convs):
        p = float(k * k * cin * cout)
        m = p * float(out_size * out_size)
        params += p
        macs += m
        executed += 2 * batch * m * (2 if i == 0 else 3)
        params += 2.0 * float(cout)  # its BN's gamma and beta
    in_f = float(cnn_head_features(spec))
    out_f = float(spec.params["output"])
    w = in_f * out_f
    params += (in_f + 1) * out_f
    macs += w
    executed += 2 * batch * w * 3
    return _counts(int(params), macs, batch, executed)


def rnn_counts(spec):
    p = spec.params
    L, E, T, V, B = p["layer"], p["embed"], p["length"], p["vocab"], p["batch"]
    g = RNN_GATES[spec.options["cell"]]
    params = V * E + L * g * (2 * E * E + 2 * E) + E * V + V
    macs = T * (L * g * (E + E) * E + E * V)
    gE = float(g) * float(E)
    executed = 6.0 * float(macs) * float(B) - 2.0 * float(B) * float(L) * gE * float(E)
    return _counts(params, macs, B, executed)


def noop_counts(spec):
    return dict(params=0, macs_per_example=0, model_flops=0.0, executed_flops=0.0)


def count_model(spec):
    """dict(params, macs_per_example, model_flops, executed_flops) of a valid
    Spec."""
    return {"fc": fc_counts, "cnn": cnn_counts, "rnn": rnn_counts,
            "noop": noop_counts}[spec.family](spec)
