"""Command line of paradnn_jax_runner.py (docs/contracts.md, docs/backends.md):
  --job-stdin            one framed RunnerJob on stdin; framed RunnerEvents
                         (steps, logs, one result) on stdout; exit 0 whenever
                         a result was written. A job without counts is
                         counted by the paradnn-runner beside this script
                         or named by $PARADNN_RUNNER (counts.py).
  --platform [--framed]  the Platform (JSON, or one frame); exit 3 without JAX.
  --calibrate [--framed] the Platform with matmul roofs and bandwidth; exit 3
                         without JAX.
Human logs go to stderr."""
import argparse
import os
import sys

EXIT_NO_JAX = 3


def _log(line):
    sys.stderr.write("paradnn_jax_runner: %s\n" % line)
    sys.stderr.flush()


def job_stdin(stdin, stdout, script_dir):
    from . import counts, framing, runner
    from .pb import metrics_pb2
    job = metrics_pb2.RunnerJob()
    try:
        if not framing.read_frame(stdin, job):
            _log("no RunnerJob on stdin")
            return 2
    except framing.FrameError as e:
        _log("reading the RunnerJob: %s" % e)
        return 2

    def emit(event):
        framing.write_frame(stdout, event)

    def on_step(step, seconds, warmup, loss):
        event = metrics_pb2.RunnerEvent()
        event.step.step = step
        event.step.seconds = seconds
        event.step.warmup = warmup
        event.step.loss = loss
        emit(event)

    def on_log(line):
        _log(line)
        event = metrics_pb2.RunnerEvent()
        event.log = line
        emit(event)

    result = runner.run_job(job, on_step, on_log, counts.counting_runner(script_dir))
    event = metrics_pb2.RunnerEvent()
    event.result.CopyFrom(result)
    emit(event)
    return 0


def platform_mode(calibrate, framed, stdout):
    from . import framing, platform_info
    try:
        p = platform_info.calibrate() if calibrate else platform_info.platform()
    except ImportError as e:
        from .runner import JAX_MISSING
        _log("%s (%s)" % (JAX_MISSING % sys.executable, e))
        return EXIT_NO_JAX
    if framed:
        framing.write_frame(stdout, p)
    else:
        from google.protobuf import json_format
        stdout.write(json_format.MessageToJson(p).encode("utf-8") + b"\n")
        stdout.flush()
    return 0


def main(argv):
    parser = argparse.ArgumentParser(
        prog="paradnn_jax_runner.py",
        description="paradnn's JAX runner: measures one ParaDnn model (fc, cnn, rnn) with JAX, "
                    "speaking paradnn-runner's framed protocol")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--job-stdin", action="store_true",
                      help="read one framed RunnerJob on stdin, write framed RunnerEvents")
    mode.add_argument("--platform", action="store_true", help="print this host's Platform")
    mode.add_argument("--calibrate", action="store_true",
                      help="measure matmul roofs and memory bandwidth with JAX")
    parser.add_argument("--framed", action="store_true",
                        help="with --platform/--calibrate: one length-prefixed frame, not JSON")
    # The worker names a CUDA device as it does to paradnn-runner; JAX
    # describes and measures its default backend's first device.
    parser.add_argument("--device", default="cpu",
                        help="with --platform/--calibrate: cpu, cuda or cuda:N (the worker's)")
    args = parser.parse_args(argv)
    if args.job_stdin:
        # The script's folder: paradnn-runner sits beside it (counts.py).
        script_dir = os.path.dirname(os.path.realpath(sys.argv[0]))
        return job_stdin(sys.stdin.buffer, sys.stdout.buffer, script_dir)
    return platform_mode(args.calibrate, args.framed, sys.stdout.buffer)
