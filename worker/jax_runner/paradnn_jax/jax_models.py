"""The ParaDnn families in plain JAX (jax.numpy, jax.lax): FC, CNN
(ResNet v1, residual or bottleneck) and RNN/LSTM/GRU, exactly as
docs/models.md defines them and worker/runner/models/{fc,cnn,rnn}.cc build
them: same layer shapes, same trainable parameters (the job's params count,
model/model_counts.h's, holds for the parameter pytrees built here;
jax_train.py checks that before timing). Imports JAX: only jax_train.py
imports this module.

Initialization follows LibTorch's defaults (Linear and conv: Kaiming-uniform
with a = sqrt(5), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and
biases; Embedding N(0, 1); RNN cells U(-1/sqrt(E), 1/sqrt(E)); BN gamma 1,
beta 0). The cost of a step does not depend on it."""
import math

import jax
import jax.numpy as jnp

from .config import parse_block_counts

RNN_GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def _uniform(key, shape, bound, dtype):
    return jax.random.uniform(key, shape, jnp.float32, -bound, bound).astype(dtype)


def _linear(key, fan_in, fan_out, dtype):
    kw, kb = jax.random.split(key)
    bound = 1.0 / math.sqrt(fan_in)
    return {"w": _uniform(kw, (fan_in, fan_out), bound, dtype),
            "b": _uniform(kb, (fan_out,), bound, dtype)}


def _cross_entropy(logits, labels):
    """Mean softmax cross-entropy, computed in float32."""
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))


# ---------------------------------------------------------------- FC
def fc_init(spec, key, dtype):
    p = spec.params
    widths = [p["input"]] + [p["node"]] * p["layer"] + [p["output"]]
    keys = jax.random.split(key, len(widths) - 1)
    return [_linear(keys[i], widths[i], widths[i + 1], dtype) for i in range(len(widths) - 1)]


def fc_data(spec, key, dtype):
    kx, ky = jax.random.split(key)
    b = spec.params["batch"]
    x = jax.random.uniform(kx, (b, spec.params["input"]), jnp.float32, -0.5, 0.5).astype(dtype)
    y = jax.random.randint(ky, (b,), 0, spec.params["output"], jnp.int32)
    return x, y


def fc_loss(params, x, y, compute_dtype):
    h = x.astype(compute_dtype)
    for i, layer in enumerate(params):
        h = h @ layer["w"].astype(compute_dtype) + layer["b"].astype(compute_dtype)
        if i + 1 < len(params):
            h = jax.nn.relu(h)
    return _cross_entropy(h, y)


# ---------------------------------------------------------------- CNN
_BN_EPS = 1e-5


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


def _conv_init(key, k, cin, cout, dtype):
    bound = 1.0 / math.sqrt(cin * k * k)
    return _uniform(key, (cout, cin, k, k), bound, dtype)  # OIHW


def _bn_init(c, dtype):
    return {"gamma": jnp.ones((c,), dtype), "beta": jnp.zeros((c,), dtype)}


def cnn_init(spec, key, dtype):
    """{"convs": [w...], "bns": [{gamma, beta}...], "head": linear}, one BN per
    conv, in cnn_conv_layers order."""
    layers = cnn_conv_layers(spec)
    keys = jax.random.split(key, len(layers) + 1)
    convs = [_conv_init(keys[i], c[0], c[3], c[4], dtype) for i, c in enumerate(layers)]
    bns = [_bn_init(c[4], dtype) for c in layers]
    head = _linear(keys[-1], cnn_head_features(spec), spec.params["output"], dtype)
    return {"convs": convs, "bns": bns, "head": head}


def cnn_data(spec, key, dtype):
    kx, ky = jax.random.split(key)
    b, s = spec.params["batch"], spec.params["image"]
    x = jax.random.uniform(kx, (b, 3, s, s), jnp.float32, 0.0, 1.0).astype(dtype)
    y = jax.random.randint(ky, (b,), 0, spec.params["output"], jnp.int32)
    return x, y


def _conv(x, w, stride, pad):
    return jax.lax.conv_general_dilated(x, w, (stride, stride), ((pad, pad), (pad, pad)),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))


def _bn(x, bn):
    """Training-mode batch norm over N, H, W (batch statistics; running
    statistics are buffers, not parameters, and do not change the step's
    cost materially)."""
    xf = x.astype(jnp.float32)
    mean = jnp.mean(xf, axis=(0, 2, 3), keepdims=True)
    var = jnp.var(xf, axis=(0, 2, 3), keepdims=True)
    y = (xf - mean) * jax.lax.rsqrt(var + _BN_EPS)
    y = y * bn["gamma"].astype(jnp.float32)[None, :, None, None] + \
        bn["beta"].astype(jnp.float32)[None, :, None, None]
    return y.astype(x.dtype)


def cnn_loss_fn(spec):
    layers = cnn_conv_layers(spec)
    bottleneck = spec.options["block_fn"] == "bottleneck"
    main = 3 if bottleneck else 2

    def loss(params, x, y, compute_dtype):
        convs = [w.astype(compute_dtype) for w in params["convs"]]
        bns = params["bns"]
        h = x.astype(compute_dtype)
        k, s, pad = layers[0][0], layers[0][1], layers[0][2]
        h = jax.nn.relu(_bn(_conv(h, convs[0], s, pad), bns[0]))
        h = jax.lax.reduce_window(h, jnp.array(-jnp.inf, h.dtype), jax.lax.max,
                                  (1, 1, 3, 3), (1, 1, 2, 2), ((0, 0), (0, 0), (1, 1), (1, 1)))
        i = 1
        while i < len(layers):
            block_in = h
            for j in range(main):
                _, s, pad = layers[i][0], layers[i][1], layers[i][2]
                h = _bn(_conv(h, convs[i], s, pad), bns[i])
                if j + 1 < main:
                    h = jax.nn.relu(h)
                i += 1
            shortcut = block_in
            if i < len(layers) and layers[i][7]:
                _, s, pad = layers[i][0], layers[i][1], layers[i][2]
                shortcut = _bn(_conv(block_in, convs[i], s, pad), bns[i])
                i += 1
            h = jax.nn.relu(h + shortcut)
        h = jax.lax.reduce_window(h, jnp.array(0, h.dtype), jax.lax.add, (1, 1, 7, 7),
                                  (1, 1, 1, 1), "VALID") / 49.0
        h = h.reshape(h.shape[0], -1)
        head = params["head"]
        logits = h @ head["w"].astype(compute_dtype) + head["b"].astype(compute_dtype)
        return _cross_entropy(logits, y)

    return loss


# ---------------------------------------------------------------- RNN
def rnn_init(spec, key, dtype):
    p = spec.params
    E, V, L = p["embed"], p["vocab"], p["layer"]
    g = RNN_GATES[spec.options["cell"]]
    keys = jax.random.split(key, L + 2)
    bound = 1.0 / math.sqrt(E)
    cells = []
    for layer in range(L):
        k = jax.random.split(keys[layer], 4)
        cells.append({"w_ih": _uniform(k[0], (E, g * E), bound, dtype),
                      "w_hh": _uniform(k[1], (E, g * E), bound, dtype),
                      "b_ih": _uniform(k[2], (g * E,), bound, dtype),
                      "b_hh": _uniform(k[3], (g * E,), bound, dtype)})
    embedding = jax.random.normal(keys[L], (V, E), jnp.float32).astype(dtype)
    return {"embedding": embedding, "cells": cells, "head": _linear(keys[L + 1], E, V, dtype)}


def rnn_data(spec, key, dtype):
    p = spec.params
    tokens = jax.random.randint(key, (p["batch"], p["length"] + 1), 0, p["vocab"], jnp.int32)
    return tokens[:, :-1], tokens[:, 1:]


def _cell_step(kind, E):
    """One time step of LibTorch's cell (gate order i,f,g,o for LSTM; r,z,n
    for GRU, n = tanh(W_in x + b_in + r * (W_hn h + b_hn)))."""
    def step(cell, carry, xg):  # xg: x W_ih + b_ih for this step, [B, gE]
        if kind == "lstm":
            h, c = carry
            gates = xg + h @ cell["w_hh"] + cell["b_hh"]
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        h = carry
        hh = h @ cell["w_hh"] + cell["b_hh"]
        if kind == "gru":
            xr, xz, xn = jnp.split(xg, 3, axis=-1)
            hr, hz, hn = jnp.split(hh, 3, axis=-1)
            r = jax.nn.sigmoid(xr + hr)
            z = jax.nn.sigmoid(xz + hz)
            n = jnp.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
            return h, h
        h = jnp.tanh(xg + hh)
        return h, h
    return step


def rnn_loss_fn(spec):
    kind = spec.options["cell"]
    E = spec.params["embed"]
    step = _cell_step(kind, E)

    def loss(params, tokens, targets, compute_dtype):
        x = jnp.take(params["embedding"], tokens, axis=0).astype(compute_dtype)  # [B, T, E]
        x = jnp.swapaxes(x, 0, 1)  # time-major [T, B, E], as LibTorch's RNN runs
        B = x.shape[1]
        for cell in params["cells"]:
            c = jax.tree_util.tree_map(lambda a: a.astype(compute_dtype), cell)
            xg = x @ c["w_ih"] + c["b_ih"]  # input gates of every step at once
            h0 = jnp.zeros((B, E), compute_dtype)
            carry = (h0, h0) if kind == "lstm" else h0
            _, x = jax.lax.scan(lambda carry, xt: step(c, carry, xt), carry, xg)
        head = params["head"]
        logits = x @ head["w"].astype(compute_dtype) + head["b"].astype(compute_dtype)
        return _cross_entropy(logits, jnp.swapaxes(targets, 0, 1))

    return loss


def build(spec, key, param_dtype):
    """(params, data, loss(params, *data, compute_dtype)) for a valid Spec."""
    kp, kd = jax.random.split(key)
    if spec.family == "fc":
        return fc_init(spec, kp, param_dtype), fc_data(spec, kd, param_dtype), fc_loss
    if spec.family == "cnn":
        return cnn_init(spec, kp, param_dtype), cnn_data(spec, kd, param_dtype), cnn_loss_fn(spec)
    if spec.family == "rnn":
        return rnn_init(spec, kp, param_dtype), rnn_data(spec, kd, param_dtype), rnn_loss_fn(spec)
    raise ValueError("no JAX model for family %s" % spec.family)


def param_count(params):
    return sum(int(a.size) for a in jax.tree_util.tree_leaves(params))
