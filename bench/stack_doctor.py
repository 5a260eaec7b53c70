#!/usr/bin/env python3
"""The stack doctor's gain: the same jobs with the software stack as
installed and as paradnn-runner tunes it, interleaved, as ratios.

As installed: OpenBLAS's own core pick (--blas-core as-installed, or what
OPENBLAS_CORETYPE says), LibTorch's own ATen CPU capability
(--aten-capability as-installed), glibc's malloc defaults (PARADNN_RUNNER_MALLOC=
as-installed), no flush-to-zero (PARADNN_FLUSH_DENORMAL=off), contiguous
NCHW convolutions. Tuned: the runner's defaults (the doctor's fastest
correct BLAS core and ATen capability, the heap thresholds, FTZ/DAZ,
channels_last). For the CNN the two settings that matter to it are also
switched one at a time, and every job once with only ATen as installed.

Each round runs every variant of every job back to back (in reverse order
every other round); each variant's ratio to "as installed" is paired by
round, so the host's drift between rounds cancels, and is given with the
min-max of the rounds' ratios (a 96.9 % interval of their median at 6
rounds) and a verdict: faster, slower or no difference shown.

  bench/stack_doctor.py [--reps N]          # as this host installs it
  OPENBLAS_CORETYPE=Prescott bench/stack_doctor.py   # the Intel model-207 fallback
"""
import argparse
import os
import statistics

import common

JOBS = {
    "fp32 FC 4x1024 b512": ["--family", "fc", "--layer", "4", "--node", "1024", "--input",
                            "2000", "--output", "200", "--batch", "512"],
    "ParaDnn CNN bottleneck b16": ["--family", "cnn", "--block_fn", "bottleneck", "--block",
                                   "1", "--filter", "16", "--image", "224", "--output", "1000",
                                   "--batch", "16"],
    "LSTM 2x256 len 32 b64": ["--family", "rnn", "--cell", "lstm", "--layer", "2", "--embed",
                              "256", "--length", "32", "--vocab", "1000", "--batch", "64"],
    "bf16 FC 4x1024 b512": ["--family", "fc", "--precision", "bfloat16", "--layer", "4",
                            "--node", "1024", "--input", "2000", "--output", "200", "--batch",
                            "512"],
}
AS_INSTALLED_ENV = {"PARADNN_RUNNER_MALLOC": "as-installed", "PARADNN_FLUSH_DENORMAL": "off"}
TIMING = ["--ci", "0.02", "--max-seconds", "4", "--min-steps", "5"]


def variants(name):
    """(label, flags, env) per stack variant of a job; the first is as installed."""
    cnn = "CNN" in name
    installed_flags = ["--blas-core", "as-installed", "--aten-capability", "as-installed"] + (
        ["--memory_format", "contiguous"] if cnn else [])
    out = [("as installed", installed_flags, AS_INSTALLED_ENV), ("tuned", [], {}),
           ("tuned, ATen as installed", ["--aten-capability", "as-installed"], {})]
    if cnn:
        out.append(("tuned, contiguous", ["--memory_format", "contiguous"], {}))
        out.append(("tuned, glibc malloc", [], {"PARADNN_RUNNER_MALLOC": "as-installed"}))
    return out


def measure(job, flags, env):
    m = common.run_json([os.path.join(common.BIN, "paradnn-runner"), "--json"] + job + TIMING
                        + flags, env=env)
    return m["examples_per_sec"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=6,
                        help="rounds (default 6: fewer give no verdict)")
    args = parser.parse_args()
    platform = common.run_json([os.path.join(common.BIN, "paradnn-runner"), "--stack-doctor"])
    print(f"stack doctor: {platform['device_name']}, {common.threads()} threads, "
          f"{platform['blas_backend'].split(' (')[0]}, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    for f in platform.get("stack_findings", []):
        workload = "GFLOP/s fp32 GEMM" if f["component"] == "blas_core" else "G op/s elementwise"
        print(f"  {f['component']:15} {f['setting']:15} {f['flops_per_sec'] / 1e9:7.1f} "
              f"{workload}, error {f['max_relative_error']:.1e}"
              + (" (as installed)" if f.get("as_installed") else "")
              + (" <- chosen" if f.get("chosen") else "")
              + (f" [{f['note']}]" if f.get("note") else ""))
    rates = {}
    for round_index in range(args.reps):
        for name, job in JOBS.items():
            # Reversed every other round: a variant is not always the one
            # that runs first (or last) in a round.
            ordered = variants(name)[::-1 if round_index % 2 else 1]
            for label, flags, env in ordered:
                rates.setdefault((name, label), []).append(measure(job, flags, env))
    header = ["job", "variant", "examples/s", "vs as installed", "rounds' range", "verdict"]
    rows = []
    for name in JOBS:
        base = rates[(name, "as installed")]
        for label, _, _ in variants(name):
            value = statistics.median(rates[(name, label)])
            if label == "as installed":
                rows.append([name, label, f"{value:,.1f}", "1.00x", "", ""])
                continue
            median, low, high, _, verdict = common.paired_ratios(base, rates[(name, label)])
            rows.append([name, label, f"{value:,.1f}", f"{median:.2f}x",
                         f"{low:.2f}-{high:.2f}x", verdict])
    common.print_table(header, rows)
    confidence = 1 - 2 * 0.5 ** args.reps
    print(f"examples/s: the median of {args.reps} rounds; vs as installed: the median of the "
          f"rounds' paired ratios; range: their min-max, which holds that median with "
          f"{confidence:.1%} confidence (sign test)")


if __name__ == "__main__":
    main()
