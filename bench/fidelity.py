#!/usr/bin/env python3
"""Harness fidelity: for FC shapes from tiny to large, the runner's examples/s
beside a bare hand-written LibTorch loop of the same model
(paradnn-bench-bare-fc) and the same model in PyTorch eager Python
(bench/fc_eager.py on Debian's python3-torch, the same LibTorch).

Targets: runner within 2 % of the bare loop; at least equal to Python
everywhere and >= 1.5x Python on the tiny model.

The three run interleaved, `--reps` times each, and the median of each is
compared (this host is shared and noisy: ratios, not absolute figures).
The runner runs as it ships (GOMP_SPINCOUNT=1000 and its OpenMP threads
pinned, see docs/measurement.md). Each baseline runs under every OpenMP
environment in BASELINE_ENVS and keeps its best median: the OpenMP setting
matters a lot (Python on this 2-core host, FC 4x1024 batch 512: 3,124 ex/s
with libgomp's defaults, 3,860 with OMP_PROC_BIND=true, 5,633 with
GOMP_SPINCOUNT=3000, 6,786 with OMP_WAIT_POLICY=passive), and the runner is
held against the best a careful user would get. Float32, RMSprop; all three
with the same intra-op threads (--threads, default as many as CPUs).

usage: bench/fidelity.py [--reps N] [--quick] [--threads N] [--shapes tiny,small,...]
"""
import argparse
import os
import statistics

import common

# name, layer, node, batch, steps timed by the bare loops, warm-up steps
SHAPES = [
    ("tiny", 4, 32, 64, 2000, 20),
    ("small", 4, 256, 256, 400, 10),
    ("medium", 4, 1024, 512, 20, 3),
    ("large", 8, 2048, 2048, 3, 1),
]
INPUT, OUTPUT = 2000, 200
BASELINE_ENVS = {
    "spin1000": {"GOMP_SPINCOUNT": "1000"},
    "spin1000+bind": {"GOMP_SPINCOUNT": "1000", "OMP_PROC_BIND": "true"},
    "spin3000": {"GOMP_SPINCOUNT": "3000"},
    "passive": {"OMP_WAIT_POLICY": "passive"},
}


# The OpenBLAS core the runner runs on (its stack doctor's choice), which
# the baselines get too: the comparison is of the harness, not the kernels.
RUNNER_BLAS_CORE = {}


def blas_threads(env, threads):
    """`env` with OpenBLAS's own pool sized to `threads`, as the runner sizes
    it (at::set_num_threads and torch.set_num_threads leave it at every
    CPU), on the runner's OpenBLAS core."""
    return dict(env, OPENBLAS_NUM_THREADS=str(threads), **RUNNER_BLAS_CORE)


def bare(layer, node, batch, steps, warmup, threads, env):
    argv = [os.path.join(common.BIN, "paradnn-bench-bare-fc")]
    argv += [str(v) for v in (layer, node, INPUT, OUTPUT, batch, warmup, steps, threads)]
    return common.run_json(argv, blas_threads(env, threads))["examples_per_sec"]


def python(layer, node, batch, steps, warmup, threads, env):
    argv = [common.SYSTEM_PYTHON, os.path.join(common.ROOT, "bench", "fc_eager.py")]
    argv += [str(v) for v in (layer, node, INPUT, OUTPUT, batch, warmup, steps, threads)]
    return common.run_json(argv, blas_threads(env, threads))["examples_per_sec"]


def runner(layer, node, batch, steps, warmup, threads):
    flags = ["--family", "fc", "--layer", str(layer), "--node", str(node), "--input", str(INPUT),
             "--output", str(OUTPUT), "--batch", str(batch), "--intra-op-threads", str(threads),
             "--ci", "0.02",
             "--warmup-steps", str(warmup), "--min-steps", str(max(3, min(steps, 5))),
             "--max-seconds", "3"]
    return common.runner_measure(flags)["examples_per_sec"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the large shape")
    parser.add_argument("--threads", type=int, default=common.threads(),
                        help="intra-op threads of all three (default: as many as CPUs)")
    parser.add_argument("--shapes", default=",".join(s[0] for s in SHAPES),
                        help="comma-separated shapes to run (default: all)")
    args = parser.parse_args()
    chosen = args.shapes.split(",")
    unknown = [name for name in chosen if name not in [s[0] for s in SHAPES]]
    if unknown or args.threads < 1:
        parser.error(f"--shapes: unknown {unknown}, allowed {[s[0] for s in SHAPES]}" if unknown
                     else "--threads: must be at least 1")
    doctor = common.run_json([os.path.join(common.BIN, "paradnn-runner"), "--stack-doctor"])
    if doctor.get("blas_core"):
        RUNNER_BLAS_CORE["OPENBLAS_CORETYPE"] = doctor["blas_core"]
    print(f"fidelity: {args.threads} threads, median of {args.reps} interleaved runs each, "
          f"OpenBLAS core {doctor.get('blas_core', '?')} for all three")
    header = ["shape", "layer", "node", "batch", "runner ex/s", "bare ex/s", "python ex/s",
              "runner/bare", "target", "runner/python", "target"]
    rows = []
    for name, layer, node, batch, steps, warmup in SHAPES:
        if (args.quick and name == "large") or name not in chosen:
            continue
        runs = {("runner", ""): []}
        for env_name in BASELINE_ENVS:
            runs[("bare", env_name)] = []
            runs[("python", env_name)] = []
        for _ in range(args.reps):
            runs[("runner", "")].append(runner(layer, node, batch, steps, warmup, args.threads))
            for env_name, env in BASELINE_ENVS.items():
                runs[("bare", env_name)].append(
                    bare(layer, node, batch, steps, warmup, args.threads, env))
                runs[("python", env_name)].append(
                    python(layer, node, batch, steps, warmup, args.threads, env))
        medians = {key: statistics.median(values) for key, values in runs.items()}
        r = medians[("runner", "")]
        b_env = max(BASELINE_ENVS, key=lambda e: medians[("bare", e)])
        p_env = max(BASELINE_ENVS, key=lambda e: medians[("python", e)])
        b, p = medians[("bare", b_env)], medians[("python", p_env)]
        rows.append([name, layer, node, batch, f"{r:,.0f}", f"{b:,.0f} ({b_env})",
                     f"{p:,.0f} ({p_env})", f"{r / b:.3f}", ">= 0.98", f"{r / p:.2f}",
                     ">= 1.5" if name == "tiny" else ">= 1.0"])
        detail = ", ".join(f"{h}/{e or 'as shipped'} {round(m):,}" for (h, e), m in medians.items())
        print(f"  {name}: medians {detail}", flush=True)
    common.print_table(header, rows)


if __name__ == "__main__":
    main()
