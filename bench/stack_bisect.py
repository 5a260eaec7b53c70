#!/usr/bin/env python3
"""Bisect: does `paradnn bisect` name the one setting of three that slows
fp32 FC by 2x or more, and in how many measurements?

Stacks A and B differ in three settings a worker can switch: blas_core (A:
`auto`, the stack doctor's fastest correct OpenBLAS core; B: Prescott,
OpenBLAS's SSE3 kernels, what it falls back to on CPUs it does not know),
env.OMP_WAIT_POLICY (active -> passive) and inter_op_threads (1 -> 2). One
FC configuration (4 x 1024, input 2000, output 200, batch 256, 2 intra-op
threads), each measurement a fresh job of the real runner through
`paradnn bisect` without --coordinator (a private coordinator and one local
worker, as `paradnn local`).

Printed: the host, the culprit bisect names with its effect and interval,
its share of B's effect, the decisions, the measurements it needed, and
beside them what testing one setting at a time would need for the same
rounds: A and A-with-the-setting in each of the reference's 4 rounds, 8 a
setting, 24 for three (16 if every round measured A once for all three).

usage: bench/stack_bisect.py [--keep DIR] [--good-core auto] [--bad-core Prescott]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import time

import common

SWEEP = """name: bisect-fc
family: fc
params: {layer: 4, node: 1024, input: 2000, output: 200, batch: 256, intra_op_threads: 2}
run: {max_seconds: 2, ci: 0.02}
"""
REFERENCE_ROUNDS = 4


def cpu_model():
    for line in subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True,
                               check=False).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def in_effect(db, sweep_id):
    """What the job of `sweep_id` asked for and ran with: the BLAS core and ATen capability
    its process found in effect, its threads (the database, read-only)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        row = con.execute("SELECT r.blas_core, r.aten_capability, r.intra_op_threads, "
                          "r.inter_op_threads FROM results r JOIN jobs j ON r.job_id = j.id "
                          "WHERE j.sweep_id = ?", (sweep_id,)).fetchone()
    if row is None:
        return "no result"
    return (f"BLAS core {row[0]}, ATen {row[1]}, intra-op threads {row[2]}, inter-op "
            f"threads {row[3]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_keep_flag(parser)
    parser.add_argument("--good-core", default="auto")
    parser.add_argument("--bad-core", default="Prescott")
    args = parser.parse_args()
    tmp = common.work_folder(args.keep, "bisect-")
    db = os.path.join(tmp, "bisect.db")
    sweep = common.write_sweep(tmp, "fc.yaml", SWEEP)
    good = f"blas_core={args.good_core},env.OMP_WAIT_POLICY=active,inter_op_threads=1"
    bad = f"blas_core={args.bad_core},env.OMP_WAIT_POLICY=passive,inter_op_threads=2"
    command = ["bisect", sweep, "--good", good, "--bad", bad, "--db", db, "--format", "json"]
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    out = common.paradnn(command, timeout=3600)
    wall = time.monotonic() - start
    load_after = os.getloadavg()[0]
    report = json.loads(out)
    result, measured = report["result"], report["measurements"]

    print(f"bisect: fp32 FC 4x1024 (input 2000, output 200, batch 256, 2 intra-op threads) on "
          f"{cpu_model()}, {common.threads()} CPUs, {os.uname().nodename}; load average "
          f"{load_before:.1f} before, {load_after:.1f} after")
    print(f"  paradnn {' '.join(command)}")
    by_mix = {}
    for m in measured:
        by_mix.setdefault(m["mix"], []).append(m["median_step_s"] * 1e3)
    for label in ("A", "B"):
        steps = by_mix.get(label, [])
        if not steps:
            continue
        first = next(m["sweep_id"] for m in measured if m["mix"] == label)
        print(f"  {label}: median step {sorted(steps)[len(steps) // 2]:.1f} ms over "
              f"{len(steps)} measurements; {in_effect(db, first)}")
    print(f"outcome: {result['outcome']}")
    culprits = ", ".join(result.get("culprits", [])) or "none"
    effect = result.get("culprit_effect", {})
    stacks = result.get("stack_effect", {})
    if result.get("culprits"):
        print(f"culprit: {culprits}: step time x{effect['ratio']:.2f} "
              f"[{effect['low']:.2f}, {effect['high']:.2f}], share of B's effect "
              f"{result.get('culprit_share', 0):.2f}")
    if stacks.get("basis"):
        print(f"B over A: x{stacks['ratio']:.2f} [{stacks['low']:.2f}, {stacks['high']:.2f}]")
    rows = [[", ".join(d.get("from_bad", [])), "yes" if d.get("carries") else "no",
             f"{d.get('share', 0):.2f}", d.get("rounds", 0)] for d in result.get("decisions", [])]
    if rows:
        print("decisions:")
        common.print_table(["probe: A +", "carries", "share", "rounds"], rows)
    differing = len(result.get("differing", []))
    probes = sum(1 for m in measured if m["mix"] not in ("A", "B"))
    print(f"measurements bisect needed: {len(measured)} "
          f"({sum(1 for m in measured if m['mix'] == 'A')} A, "
          f"{sum(1 for m in measured if m['mix'] == 'B')} B, {probes} "
          f"probe{'' if probes == 1 else 's'}), {wall:.0f} s")
    print(f"one setting at a time, {REFERENCE_ROUNDS} rounds each: "
          f"{2 * REFERENCE_ROUNDS * differing} measurements "
          f"({(differing + 1) * REFERENCE_ROUNDS} with A shared per round), and B itself "
          f"still to measure")
    print(f"database: {db}")


if __name__ == "__main__":
    main()
