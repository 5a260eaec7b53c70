"""A job's analytic counts: params, macs_per_example, model_flops and
executed_flops of one training step. They are counted once, in C++, by the
model library (model/model_counts.h, docs/models.md "Counting work"): the
coordinator sends them with every job (RunnerJob.counts). A job written by
hand carries none; it gets them from `paradnn-runner --describe`, the same
count, run from $PARADNN_RUNNER or from beside this runner's script. With
neither the job is an ERROR that says so: a measurement without counts has
no FLOP rates and no check that the model built is the model counted.

The other ModelCounts fields (other_flops, bytes_per_step,
activation_bytes, peak_memory_estimate_bytes) describe LibTorch 1.13's
kernels one by one; XLA fuses differently, so the JAX runner leaves them 0
(unknown) rather than report LibTorch's figures as its own."""
import json
import os
import subprocess

# The ModelCounts fields a JAX measurement reports.
REPORTED = ("params", "macs_per_example", "model_flops", "executed_flops")
# Run settings on paradnn-runner's command line, not model flags; they
# change no count.
THREAD_PARAMS = ("intra_op_threads", "inter_op_threads")
DESCRIBE_TIMEOUT_S = 60
MAX_STDERR_CHARS = 600


class CountsUnavailable(Exception):
    """The job carries no counts and `paradnn-runner --describe` gave none."""


def counting_runner(script_dir):
    """The paradnn-runner that counts a job without counts: $PARADNN_RUNNER,
    else the one beside the runner's script (`script_dir`: build/bin/ or
    PREFIX/bin/, where the build and the install put both)."""
    return os.environ.get("PARADNN_RUNNER") or os.path.join(script_dir, "paradnn-runner")


def describe_argv(runner, config):
    """`runner --describe` with the model flags of a v1.ModelConfig."""
    argv = [runner, "--describe", "--family", config.family]
    for key, value in sorted(config.params.items()):
        if key not in THREAD_PARAMS:
            argv += ["--" + key, str(value)]
    for key, value in sorted(config.options.items()):
        argv += ["--" + key, value]
    if config.precision:
        argv += ["--precision", config.precision]
    if config.optimizer:
        argv += ["--optimizer", config.optimizer]
    return argv


def describe(runner, config):
    """Every count `runner --describe` prints for `config`, as a dict; raises
    CountsUnavailable saying why there is none."""
    argv = describe_argv(runner, config)
    try:
        out = subprocess.run(argv, capture_output=True, timeout=DESCRIBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CountsUnavailable("%s --describe: %s" % (runner, e)) from e
    if out.returncode != 0:
        why = out.stderr.decode("utf-8", "replace").strip()[-MAX_STDERR_CHARS:]
        raise CountsUnavailable("%s --describe exited with %d: %s" % (runner, out.returncode, why))
    try:
        return json.loads(out.stdout)
    except ValueError as e:
        raise CountsUnavailable("%s --describe printed no JSON: %s" % (runner, e)) from e


def job_counts(job, runner):
    """The REPORTED counts of a v1.RunnerJob as a dict: the job's own, else
    `runner --describe`'s. Raises CountsUnavailable naming both sources."""
    if job.HasField("counts"):
        return {key: getattr(job.counts, key) for key in REPORTED}
    try:
        described = describe(runner, job.config)
        missing = [key for key in REPORTED if key not in described]
        if missing:
            raise CountsUnavailable("%s --describe printed no %s" % (runner, ", ".join(missing)))
    except CountsUnavailable as e:
        raise CountsUnavailable(
            "the job carries no counts (RunnerJob.counts, which the coordinator sets) and "
            "paradnn-runner could not count it (%s): run it through a coordinator or point "
            "PARADNN_RUNNER at a paradnn-runner" % e) from e
    return {key: described[key] for key in REPORTED}
