"""`--platform` and `--calibrate` for the JAX runner: a v1.Platform whose
device and software fields come from JAX, the host fields from /proc as
paradnn-runner reads them, and the fingerprint computed as
worker/runner/platform.cc PlatformFingerprint does: 64-bit FNV-1a (hex) of
"name=value\\n" for every non-repeated field in field-number order except
hostname, fingerprint and calibrated_unix_ms.

Platform has no JAX field: libtorch_version carries "jax X, jaxlib Y"
(never a LibTorch version, so the two stacks cannot be confused),
blas_backend "XLA <backend> (platform_version)", parallel_backend "XLA".
Needs JAX (platform() raises ImportError without it)."""
import os
import platform as py_platform
import socket
import time


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def _field_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        # absl::StrCat(double): six significant digits, like %g.
        return "%g" % value
    return str(value)


def fingerprint(platform):
    fields = sorted(platform.DESCRIPTOR.fields, key=lambda f: f.number)
    canonical = ""
    for f in fields:
        if f.name in ("hostname", "fingerprint", "calibrated_unix_ms") or \
                f.label == f.LABEL_REPEATED:
            continue
        canonical += "%s=%s\n" % (f.name, _field_text(getattr(platform, f.name)))
    return "%016x" % fnv1a64(canonical.encode("utf-8"))


def _host_facts(p):
    sockets, cores, logical, model, phys = set(), set(), 0, "", None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "processor":
                    logical += 1
                elif key == "model name" and not model:
                    model = value
                elif key == "physical id":
                    phys = value
                    sockets.add(value)
                elif key == "core id":
                    cores.add((phys, value))
    except OSError:
        pass
    p.sockets = len(sockets) or 1
    p.logical_cpus = logical or (os.cpu_count() or 0)
    p.cores = len(cores) or p.logical_cpus
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    p.memory_bytes = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    uname = os.uname()
    p.os = uname.release
    p.hostname = socket.gethostname()
    return model


def platform(device=""):
    """The Platform of this host as the JAX runner sees it."""
    import jax
    import jaxlib
    from . import jax_train
    from .pb import metrics_pb2
    p = metrics_pb2.Platform()
    cpu_model = _host_facts(p)
    try:
        dev = jax_train.select_device(device) if device else jax.devices()[0]
    except LookupError:
        dev = jax.devices()[0]
    kind = {"gpu": "cuda"}.get(dev.platform, dev.platform)
    p.device_kind = kind
    p.device_name = cpu_model if kind == "cpu" else getattr(dev, "device_kind", kind)
    p.libtorch_version = "jax %s, jaxlib %s" % (jax.__version__, jaxlib.__version__)
    try:
        backend_version = jax.extend.backend.get_backend().platform_version
    except Exception:  # older JAX
        backend_version = ""
    p.blas_backend = ("XLA %s (%s)" % (dev.platform, backend_version)).replace(" ()", "")
    p.compiler = "python %s" % py_platform.python_version()
    p.parallel_backend = "XLA"
    p.default_intra_op_threads = os.cpu_count() or 0
    p.fingerprint = fingerprint(p)
    return p


def calibrate(device="", seconds_per_dtype=4.0):
    """Platform with matmul roofs (float32, bfloat16, float16; jnp.dot over
    1024..4096 shapes, best of repeated timed calls) and copy/triad
    bandwidth, measured with JAX on the device."""
    import jax
    import jax.numpy as jnp
    from .pb import metrics_pb2
    p = platform(device)
    dev = jax.devices()[0]
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
              (4096, 4096, 1024), (1024, 4096, 4096)]
    for dtype_name, dtype in (("float32", jnp.float32), ("bfloat16", jnp.bfloat16),
                              ("float16", jnp.float16)):
        best = None
        deadline = time.perf_counter() + seconds_per_dtype
        for m_, n_, k_ in shapes:
            if time.perf_counter() > deadline:
                break
            try:
                a = jax.device_put(jnp.ones((m_, k_), dtype), dev)
                b = jax.device_put(jnp.ones((k_, n_), dtype), dev)
                mm = jax.jit(jnp.dot)
                mm(a, b).block_until_ready()
                for _ in range(5):
                    t0 = time.perf_counter()
                    mm(a, b).block_until_ready()
                    rate = 2.0 * m_ * n_ * k_ / (time.perf_counter() - t0)
                    if best is None or rate > best[0]:
                        best = (rate, m_, n_, k_)
            except Exception:
                break
        if best is not None:
            p.matmul_roofs.add(dtype=dtype_name, flops_per_sec=best[0], m=best[1], n=best[2],
                               k=best[3])
    copy = jax.jit(lambda x: x + 0)
    triad = jax.jit(lambda b, c: b + 3 * c)
    for size in (32 << 10, 1 << 20, 32 << 20, 256 << 20):
        n = size // 4
        x = jax.device_put(jnp.ones((n,), jnp.float32), dev)
        y = jax.device_put(jnp.ones((n,), jnp.float32), dev)
        copy(x).block_until_ready()
        triad(x, y).block_until_ready()
        best_copy = best_triad = float("inf")
        for _ in range(10):
            t0 = time.perf_counter()
            copy(x).block_until_ready()
            best_copy = min(best_copy, time.perf_counter() - t0)
            t0 = time.perf_counter()
            triad(x, y).block_until_ready()
            best_triad = min(best_triad, time.perf_counter() - t0)
        p.bandwidth.add(kernel="copy", bytes=2 * size, bytes_per_sec=2 * size / best_copy)
        p.bandwidth.add(kernel="triad", bytes=3 * size, bytes_per_sec=3 * size / best_triad)
    p.calibrated_unix_ms = int(time.time() * 1000)
    return p
