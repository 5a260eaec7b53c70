#!/usr/bin/env python3
"""Repeatability: the same configuration measured 5 times on one worker,
through the whole system (`paradnn local`: coordinator, worker, runner, a
sweep with `repeats: 5`, interleaved with a second configuration so that the
repeats are not back to back). Prints the spread of the reported examples/s
across the repeats. Target: CV <= 2 %.

Then, to tell the host's own drift from the harness's, the same
configurations measured by the bare LibTorch loop (paradnn-bench-bare-fc,
as in bench/fidelity.py) and by the runner alone, interleaved, N times
each: when the bare loop spreads as much as the runner, the spread is the
host's, not the harness's.

usage: bench/repeatability.py [--repeats N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import common

# Bare-loop steps per configuration (about a second each) and its warm-up.
BARE_STEPS = {(256, 256): (300, 10), (1024, 256): (30, 3), (256, 512): (150, 10),
              (1024, 512): (15, 3)}

SWEEP = """name: repeatability
family: fc
params:
  layer: 4
  node: {{values: [256, 1024]}}
  input: 2000
  output: 200
  batch: {{values: [256, 512]}}
repeats: {repeats}
run: {{ci: 0.02, max_seconds: 3}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep = os.path.join(tmp, "repeatability.yaml")
        with open(sweep, "w") as f:
            f.write(SWEEP.format(repeats=args.repeats))
        done = subprocess.run([os.path.join(common.BIN, "paradnn"), "local", sweep, "--db",
                               os.path.join(tmp, "r.db"), "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"paradnn local failed:\n{done.stderr[-2000:]}")
        rows = json.loads(done.stdout)
    print(f"repeatability: {args.repeats} repeats per configuration, one local worker, "
          f"{common.threads()} threads")
    header = ["layer", "node", "batch", "ok", "ex/s median", "min", "max", "spread", "CV",
              "target CV"]
    table = []
    for row in rows:
        table.append([row["layer"], row["node"], row["batch"], row["repeats_ok"],
                      f"{row['examples_per_sec_median']:,.0f}", f"{row['examples_per_sec_min']:,.0f}",
                      f"{row['examples_per_sec_max']:,.0f}", f"{row['spread_pct']:.2f}%",
                      f"{row['cv_pct']:.2f}%", "<= 2%"])
    common.print_table(header, table)

    print(f"\nhost drift vs harness: {args.repeats} interleaved runs of the bare loop and of "
          "the runner alone (GOMP_SPINCOUNT=1000 for both, as the runner ships)")
    header = ["layer", "node", "batch", "bare ex/s median", "bare CV", "runner ex/s median",
              "runner CV"]
    table = []
    for (node, batch), (steps, warmup) in BARE_STEPS.items():
        bare, runner = [], []
        for _ in range(args.repeats):
            argv = [os.path.join(common.BIN, "paradnn-bench-bare-fc")]
            argv += [str(v) for v in (4, node, 2000, 200, batch, warmup, steps, common.threads())]
            bare.append(common.run_json(argv, {"GOMP_SPINCOUNT": "1000"})["examples_per_sec"])
            runner.append(common.runner_measure(
                ["--family", "fc", "--layer", "4", "--node", str(node), "--input", "2000",
                 "--output", "200", "--batch", str(batch), "--ci", "0.02",
                 "--max-seconds", "3"])["examples_per_sec"])
        table.append([4, node, batch, f"{statistics.median(bare):,.0f}",
                      f"{common.cv(bare):.2%}", f"{statistics.median(runner):,.0f}",
                      f"{common.cv(runner):.2%}"])
    common.print_table(header, table)


if __name__ == "__main__":
    main()
