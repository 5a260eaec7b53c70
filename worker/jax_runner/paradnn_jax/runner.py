"""One job: RunnerJob in, Measurement out, never raising. JAX is imported
only here, lazily, after the configuration has been validated and its
counts taken (counts.py: the job's, which the coordinator sends), so a host
without JAX still answers with a well-formed result."""
import os
import resource

from . import config as config_lib
from . import counts as counts_lib

MAX_ERROR_CHARS = 4000
NOISY_STEPS_CV = 0.10  # worker/runner/suspect_conditions.cc
JAX_MISSING = ("JAX is not installed for %s: pip install 'jax[cuda12]' (NVIDIA GPU) or "
               "'jax[tpu]' (TPU) into that Python, or point PARADNN_JAX_PYTHON at one that has "
               "it (docs/backends.md)")


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def classify_error(message):
    """OOM for XLA's RESOURCE_EXHAUSTED and allocation failures, UNSUPPORTED
    for what the backend has no kernel for, else ERROR (cf.
    worker/runner/outcome.cc)."""
    from .pb import metrics_pb2 as m
    text = message.lower()
    if "resource_exhausted" in text or "out of memory" in text or "memoryerror" in text \
            or "failed to allocate" in text:
        return m.OOM
    if "unimplemented" in text or "not implemented" in text or "not supported" in text \
            or "unsupported" in text:
        return m.UNSUPPORTED
    return m.ERROR


def _fail(m, outcome, error):
    if len(error) > MAX_ERROR_CHARS:
        error = error[:MAX_ERROR_CHARS] + " [...]"
    m.outcome = outcome
    m.error = error
    m.peak_rss_bytes = peak_rss_bytes()
    return m


def gang_refusal(job, spec):
    """Why this runner cannot run `job` as one rank of a data-parallel gang
    (RunnerJob.gang set, or params.hosts > 1), else "". Before the counts:
    no rank waits on a rendezvous this runner never joins, and the other
    ranks end GANG_BROKEN when it answers."""
    hosts = spec.params.get("hosts", 1)
    if not job.HasField("gang") and hosts <= 1:
        return ""
    hosts = max(hosts, job.gang.hosts)
    what = "hosts %d" % hosts if hosts > 1 else "a gang role (rank %d)" % job.gang.host_rank
    return ("%s: data-parallel gangs (params.hosts > 1) need the LibTorch runner "
            "(paradnn-worker --backend libtorch); the JAX runner measures one process on one "
            "device (docs/backends.md)" % what)


def run_job(job, on_step, on_log, counting_runner, import_jax=None):
    """The Measurement of `job`. on_step(step, seconds, warmup, loss) only if
    job.stream_steps; on_log(line). `counting_runner`: the paradnn-runner
    that counts a job that carries no counts (counts.job_counts).
    `import_jax` (tests) replaces the import of the JAX harness."""
    from .pb import metrics_pb2 as mp
    import sys
    m = mp.Measurement()
    m.device = job.device or "cpu"
    m.config.CopyFrom(config_lib.normalized_config(job.config))
    try:
        config_lib.validate_run_settings(job.settings)
        spec = config_lib.parse_model_spec(job.config)
    except config_lib.ConfigError as e:
        return _fail(m, mp.ERROR, str(e))
    except config_lib.UnsupportedFamily as e:
        return _fail(m, mp.UNSUPPORTED, str(e))
    gang = gang_refusal(job, spec)
    if gang:
        return _fail(m, mp.UNSUPPORTED, gang)
    try:
        counts = counts_lib.job_counts(job, counting_runner)
    except counts_lib.CountsUnavailable as e:
        return _fail(m, mp.ERROR, str(e))
    for key, value in counts.items():
        setattr(m.counts, key, value)
    if spec.family == "noop":
        m.outcome = mp.OK
        m.stats.stop_reason = "noop"
        m.peak_rss_bytes = peak_rss_bytes()
        on_log("noop: no model built, no steps timed")
        return m
    if spec.params.get("devices", 1) > 1:
        return _fail(m, mp.UNSUPPORTED,
                     "devices %d: the JAX runner measures one device; data-parallel replicas "
                     "run on the LibTorch runner (docs/backends.md)" % spec.params["devices"])
    settings = config_lib.with_run_defaults(job.settings)
    if "intra_op_threads" in spec.params:
        settings.intra_op_threads = spec.params["intra_op_threads"]
    if "inter_op_threads" in spec.params:
        settings.inter_op_threads = spec.params["inter_op_threads"]
    # XLA sizes its own thread pools; the settings are recorded, not applied.
    m.intra_op_threads = os.cpu_count() or 1
    m.inter_op_threads = settings.inter_op_threads
    on_log("threads: XLA uses its own pools (%d logical CPUs); requested intra-op %d, inter-op "
           "%d are not applied" % (m.intra_op_threads, settings.intra_op_threads,
                                   settings.inter_op_threads))
    try:
        if import_jax is not None:
            jax_train = import_jax()
        else:
            from . import jax_train
    except ImportError as e:
        return _fail(m, mp.ERROR, "%s (%s)" % (JAX_MISSING % sys.executable, e))
    try:
        device = jax_train.select_device(job.device)
    except LookupError as e:
        return _fail(m, mp.UNSUPPORTED, str(e))
    m.device = job.device or "cpu"

    def step(n, seconds, warmup, loss):
        if job.stream_steps:
            on_step(n, seconds, warmup, loss)
    try:
        jax_train.train_and_time(spec, settings, device, step, on_log, m)
    except MemoryError as e:
        return _fail(m, mp.OOM, "MemoryError: %s" % e)
    except Exception as e:  # XlaRuntimeError, TypeError from lowering, ...
        message = "%s: %s" % (type(e).__name__, e)
        outcome = classify_error(message)
        if outcome == mp.UNSUPPORTED:
            message = "precision %s is not supported on %s by JAX: %s" % (
                spec.precision, m.device, message.splitlines()[0] if message else "")
        return _fail(m, outcome, message)
    m.outcome = mp.OK
    m.peak_rss_bytes = peak_rss_bytes()
    if m.stats.cv > NOISY_STEPS_CV:
        condition = "noisy steps: CV %.0f %%" % (m.stats.cv * 100)
        on_log("suspect: " + condition)
        m.suspect.append(condition)
    return m
