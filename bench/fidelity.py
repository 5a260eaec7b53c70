#!/usr/bin/env python3
"""Harness fidelity: for FC shapes from tiny to large, the runner's examples/s
beside a bare hand-written LibTorch loop of the same model
(paradnn-bench-bare-fc) and the same model in PyTorch eager Python
(bench/fc_eager.py on Debian's python3-torch, the same LibTorch).

Targets: runner within 2 % of the bare loop; at least equal to Python
everywhere and >= 1.5x Python on the tiny model.

The three run interleaved, `--reps` times each, and the median of each is
compared (this host is shared and noisy: ratios, not absolute figures).
All three get the same OpenMP setting: GOMP_SPINCOUNT=3000 (the runner's
default, see worker/runner/openmp_env.cc) and threads pinned one per CPU
(the runner pins its own; the others get OMP_PROC_BIND=true). Float32,
RMSprop, as many intra-op threads as CPUs.

usage: bench/fidelity.py [--reps N] [--quick]
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
ENV = {"GOMP_SPINCOUNT": "3000", "OMP_PROC_BIND": "true"}


def bare(layer, node, batch, steps, warmup):
    argv = [os.path.join(common.BIN, "paradnn-bench-bare-fc")]
    argv += [str(v) for v in (layer, node, INPUT, OUTPUT, batch, warmup, steps, common.threads())]
    return common.run_json(argv, ENV)["examples_per_sec"]


def python(layer, node, batch, steps, warmup):
    argv = [common.SYSTEM_PYTHON, os.path.join(common.ROOT, "bench", "fc_eager.py")]
    argv += [str(v) for v in (layer, node, INPUT, OUTPUT, batch, warmup, steps, common.threads())]
    return common.run_json(argv, ENV)["examples_per_sec"]


def runner(layer, node, batch, steps, warmup):
    flags = ["--family", "fc", "--layer", str(layer), "--node", str(node), "--input", str(INPUT),
             "--output", str(OUTPUT), "--batch", str(batch), "--ci", "0.02",
             "--warmup-steps", str(warmup), "--min-steps", str(max(3, min(steps, 5))),
             "--max-seconds", "3"]
    return common.runner_measure(flags)["examples_per_sec"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the large shape")
    args = parser.parse_args()
    print(f"fidelity: {common.threads()} threads, median of {args.reps} interleaved runs each")
    header = ["shape", "layer", "node", "batch", "runner ex/s", "bare ex/s", "python ex/s",
              "runner/bare", "target", "runner/python", "target"]
    rows = []
    for name, layer, node, batch, steps, warmup in SHAPES:
        if args.quick and name == "large":
            continue
        got = {"runner": [], "bare": [], "python": []}
        for _ in range(args.reps):
            got["runner"].append(runner(layer, node, batch, steps, warmup))
            got["bare"].append(bare(layer, node, batch, steps, warmup))
            got["python"].append(python(layer, node, batch, steps, warmup))
        r, b, p = (statistics.median(got[k]) for k in ("runner", "bare", "python"))
        rows.append([name, layer, node, batch, f"{r:,.0f}", f"{b:,.0f}", f"{p:,.0f}",
                     f"{r / b:.3f}", "0.98-1.02+", f"{r / p:.2f}",
                     ">= 1.5" if name == "tiny" else ">= 1.0"])
        print(f"  {name}: runner {sorted(round(x) for x in got['runner'])}, bare "
              f"{sorted(round(x) for x in got['bare'])}, python {sorted(round(x) for x in got['python'])}",
              flush=True)
    common.print_table(header, rows)


if __name__ == "__main__":
    main()
