"""The timing harness on JAX: builds the model of one job, warms it up and
times jitted training steps with block_until_ready under the same rules as
paradnn-runner (stop_rule.py, a port of worker/runner/stop_rule.cc; the
loop mirrors worker/runner/trainer.cc TrainAndTime). Imports JAX."""
import time

import jax
import jax.numpy as jnp

from . import jax_models
from .stop_rule import TimingStopRule, WarmupRule, block_steps_for, compute_step_stats

LR = 0.1
RMS_ALPHA = 0.9
RMS_EPS = 1.0
MOMENTUM = 0.9

# precision -> (parameter/data dtype, compute dtype)
_DTYPES = {
    "float32": (jnp.float32, jnp.float32),
    "bfloat16": (jnp.bfloat16, jnp.bfloat16),
    "float16": (jnp.float16, jnp.float16),
    "mixed_bf16": (jnp.float32, jnp.bfloat16),
    "mixed_fp16": (jnp.float32, jnp.float16),
}


def optimizer(kind):
    """(init(params) -> state, update(params, grads, state) -> (params, state)),
    LibTorch's RMSprop(lr 0.1, alpha 0.9, eps 1.0, momentum 0.9), SGD(lr 0.1)
    and SGD(lr 0.1, momentum 0.9) written out; state in the parameters'
    dtype."""
    tmap = jax.tree_util.tree_map
    if kind == "sgd":
        return (lambda p: (), lambda p, g, s: (tmap(lambda w, d: w - LR * d, p, g), s))
    if kind == "momentum":
        def update(p, g, buf):
            buf = tmap(lambda b, d: MOMENTUM * b + d, buf, g)
            return tmap(lambda w, b: w - LR * b, p, buf), buf
        return (lambda p: tmap(jnp.zeros_like, p), update)

    def init(p):
        return (tmap(jnp.zeros_like, p), tmap(jnp.zeros_like, p))

    def update(p, g, state):
        sq, buf = state
        sq = tmap(lambda s, d: RMS_ALPHA * s + (1 - RMS_ALPHA) * d * d, sq, g)
        buf = tmap(lambda b, d, s: MOMENTUM * b + d / (jnp.sqrt(s) + RMS_EPS), buf, g, sq)
        return tmap(lambda w, b: w - LR * b, p, buf), (sq, buf)
    return init, update


def select_device(requested):
    """The jax.Device for a job's device string ("", cpu, cuda, cuda:N, tpu,
    tpu:N), or raises LookupError naming what this host has."""
    kind, _, index = (requested or "cpu").partition(":")
    backend = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu"}.get(kind)
    try:
        devices = jax.devices(backend) if backend else []
    except RuntimeError:
        devices = []
    n = int(index) if index.isdigit() else 0
    if n >= len(devices):
        have = ", ".join(sorted({d.platform for d in jax.devices()}))
        raise LookupError("device '%s': JAX %s has no such device here (backends: %s)"
                          % (requested, jax.__version__, have))
    return devices[n]


def build_step(spec, seed, device):
    """(step, params, opt_state, data) of one job on `device`: the jitted
    training step, step(params, opt_state, *data) -> (params, opt_state,
    loss), which donates the parameters and optimizer state passed to it,
    and its first arguments, made on the device."""
    param_dtype, compute_dtype = _DTYPES[spec.precision]
    with jax.default_device(device):
        params, data, loss_fn = jax_models.build(spec, jax.random.PRNGKey(seed), param_dtype)
        opt_init, opt_update = optimizer(spec.optimizer)
        opt_state = opt_init(params)

        def step(params, opt_state, *data):
            loss, grads = jax.value_and_grad(loss_fn)(params, *data, compute_dtype)
            params, opt_state = opt_update(params, grads, opt_state)
            return params, opt_state, loss

        step = jax.jit(step, donate_argnums=(0, 1))
        data = jax.device_put(data, device)
    return step, params, opt_state, data


def step_flops(spec, seed, device):
    """The FLOPs of one training step of `spec` as XLA's cost analysis of
    the compiled step counts them: every operation it executes, matmuls and
    convolutions at 2 per multiply-accumulate, element-wise work at 1 per
    element. A while loop (the RNN's lax.scan) is counted once, not once per
    iteration."""
    step, params, opt_state, data = build_step(spec, seed, device)
    cost = step.lower(params, opt_state, *data).compile().cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jaxlib: one dict per computation
        cost = cost[0]
    return float(cost["flops"])


def train_and_time(spec, settings, device, on_step, on_log, m):
    """Warm-up and timed steps; fills the timing fields of Measurement `m`,
    whose counts are the job's. Raises what JAX raises."""
    build_start = time.perf_counter()
    step, params, opt_state, data = build_step(spec, settings.seed, device)
    built = jax_models.param_count(params)
    if m.counts.params and built != m.counts.params:
        raise AssertionError("the JAX %s model has %d parameters, the job's count %d"
                             % (spec.family, built, m.counts.params))
    jax.block_until_ready((params, opt_state, data))
    m.build_seconds = time.perf_counter() - build_start

    state = [params, opt_state]

    def run(n):
        loss = None
        for _ in range(n):
            state[0], state[1], loss = step(state[0], state[1], *data)
        # Reading the loss waits for the device: it belongs inside the timing.
        return float(loss.block_until_ready())

    step_no = 0
    warmup = WarmupRule(settings.warmup_steps, settings.max_seconds)
    warmup_start = time.perf_counter()
    done = False
    while not done:
        t0 = time.perf_counter()
        loss = run(1)  # the first call compiles: warm-up absorbs it
        seconds = time.perf_counter() - t0
        if step_no == 0:
            m.first_loss = loss
        step_no += 1
        on_step(step_no, seconds, True, loss)
        done = warmup.add(seconds)
    m.warmup_seconds = time.perf_counter() - warmup_start
    on_log("warm-up: %d steps in %.3f s (the first includes XLA compilation)"
           % (warmup.steps, m.warmup_seconds))

    block = block_steps_for(warmup.fastest_seconds(), settings.max_steps, settings.min_steps)
    if block > 1:
        on_log("timing in blocks of %d steps (fastest warm-up step %.1f us)"
               % (block, warmup.fastest_seconds() * 1e6))
    rule = TimingStopRule(settings.ci, settings.max_seconds, settings.min_steps,
                          max(2, settings.max_steps // block))
    samples = []
    timed_start = time.perf_counter()
    done = False
    while not done:
        t0 = time.perf_counter()
        loss = run(block)
        seconds = (time.perf_counter() - t0) / block
        samples.append(seconds)
        m.last_loss = loss
        step_no += block
        on_step(step_no, seconds, False, loss)
        done = rule.add(seconds, block)
    m.timed_seconds = time.perf_counter() - timed_start

    stats = compute_step_stats(samples)
    for key, value in stats.items():
        setattr(m.stats, key, value)
    m.stats.warmup_steps = warmup.steps
    m.stats.stop_reason = rule.reason
    m.stats.block_steps = block
    m.step_seconds.extend(samples)
    median = m.stats.median_s
    if median > 0:
        m.examples_per_sec = spec.batch / median
        m.model_flops_per_sec = m.counts.model_flops / median
        m.executed_flops_per_sec = m.counts.executed_flops / median
