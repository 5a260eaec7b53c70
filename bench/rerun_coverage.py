#!/usr/bin/env python3
"""Re-run coverage: do the intervals paradnn states hold when the
measurement is repeated? 20 configurations (FC, CNN, LSTM; tiny to large)
measured round after round, each round a fresh sweep per family through
the whole system (`paradnn local --fresh` on one database), until at least
--minutes have passed and --rounds rounds are done. Right after each round
the stated intervals are read (`paradnn results --db`), so each is what a
user saw at that time, learned from the rounds before it and its own.

For every pair of rounds i < j of a configuration: does round j's median
step time fall inside round i's stated 95 % re-run interval (and inside its
within-run interval, ±ci95)? Target 90-98 % for the re-run interval, in both
conditions: a quiet host, and --load (a process pinned to CPU 0 taking it
half of the time, 50 ms on, 50 ms off). Printed beside it: the within-run
interval's coverage, the median stated half-width and the host's measured
re-run spread (median |ratio - 1| between rounds), and the coverage of
round 1 (the prior: no re-runs yet) apart from later rounds; and an A/A check: each round against the next with `paradnn
compare` (different verdicts on <= 5 % of configurations).

usage: bench/rerun_coverage.py [--minutes 30] [--rounds 4] [--load] [--keep DIR]
"""
import argparse
import itertools
import json
import math
import multiprocessing
import os
import statistics
import sys
import time

import common

SWEEPS = {
    "fc": """name: coverage-fc
family: fc
params:
  layer: 4
  node: {values: [32, 256, 1024, 4096]}
  input: 1000
  output: 100
  batch: {values: [16, 256]}
run: {max_seconds: 2}
""",
    "cnn": """name: coverage-cnn
family: cnn
params:
  block_fn: residual
  block: 1
  filter: {values: [8, 16]}
  image: 200
  output: 100
  batch: {values: [2, 8]}
run: {max_seconds: 2}
""",
    "lstm": """name: coverage-lstm
family: rnn
params:
  cell: lstm
  layer: 1
  embed: {values: [100, 500]}
  length: {values: [10, 50]}
  vocab: 32
  batch: {values: [16, 128]}
run: {max_seconds: 2}
""",
}

CONFIG_KEYS = ["layer", "node", "batch", "block", "filter", "image", "embed", "length",
               "cell"]


def load(stop):
    """Takes CPU 0 half of the time until `stop` is set."""
    os.sched_setaffinity(0, {0})
    while not stop.is_set():
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            pass
        time.sleep(0.05)


def config_key(row):
    return " ".join(f"{k}={row[k]}" for k in CONFIG_KEYS if k in row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--load", action="store_true")
    common.add_keep_flag(parser)
    args = parser.parse_args()
    tmp = common.work_folder(args.keep, "coverage-")
    db = os.path.join(tmp, "coverage.db")
    stop = multiprocessing.Event()
    loader = None
    if args.load:
        loader = multiprocessing.Process(target=load, args=(stop,), daemon=True)
        loader.start()
    rounds = []  # per round: {config: row}
    sweep_id = 0
    start = time.monotonic()
    try:
        while len(rounds) < args.rounds or time.monotonic() - start < args.minutes * 60:
            ids = []
            for family, text in SWEEPS.items():
                path = common.write_sweep(tmp, f"{family}.yaml", text)
                common.paradnn(["local", path, "--db", db, "--fresh", "--format", "json"])
                sweep_id += 1
                ids.append(sweep_id)
            this_round = {}
            for family, sweep in zip(SWEEPS, ids):
                rows = json.loads(common.paradnn(["results", str(sweep), "--jobs", "--format",
                                                  "json", "--db", db]))
                for row in rows:
                    if row.get("outcome") != "OK" or row.get("step_median_ms") is None:
                        continue
                    this_round[f"{family} {config_key(row)}"] = row
            rounds.append({"rows": this_round, "sweeps": ids})
            print(f"round {len(rounds)}: {len(this_round)} results, "
                  f"{(time.monotonic() - start) / 60:.1f} min", file=sys.stderr)
    finally:
        stop.set()
        if loader:
            loader.join(timeout=2)
    with open(os.path.join(tmp, "rounds.json"), "w") as f:
        json.dump(rounds, f)
    report(args, rounds, db)


def coverage(rounds, first_only):
    inside_rerun = inside_within = pairs = 0
    ratios, widths, log_ratios = [], [], []
    for i, j in itertools.combinations(range(len(rounds)), 2):
        if first_only != (i == 0):
            continue
        for config, a in rounds[i]["rows"].items():
            b = rounds[j]["rows"].get(config)
            if b is None or a.get("rerun_pct") is None:
                continue
            pairs += 1
            ratio = b["step_median_ms"] / a["step_median_ms"]
            ratios.append(abs(ratio - 1))
            log_ratios.append(abs(math.log(ratio)))
            half = a["rerun_pct"] / 100
            widths.append(half)
            # The interval is symmetric in logs: [m / (1 + h), m x (1 + h)].
            inside_rerun += 1 if 1 / (1 + half) <= ratio <= 1 + half else 0
            within = a["step_ci95_pct"] / 100
            inside_within += 1 if abs(ratio - 1) <= within else 0
    if pairs == 0:
        return None
    # The narrowest interval of one width for every result that would have
    # held 95 % of these re-runs: what the host allows an interval that
    # knows nothing of the configuration. Stated widths far above it are
    # padded; far below it, they cannot cover.
    log_ratios.sort()
    oracle = math.expm1(log_ratios[min(len(log_ratios) - 1, int(0.95 * len(log_ratios)))])
    return {"pairs": pairs, "rerun": inside_rerun / pairs, "within": inside_within / pairs,
            "width": statistics.median(widths), "spread": statistics.median(ratios),
            "oracle": oracle}


def report(args, rounds, db):
    condition = "loaded (CPU 0 busy half the time)" if args.load else "quiet"
    print(f"re-run coverage, {condition}: {len(rounds)} rounds of "
          f"{len(rounds[0]['rows']) if rounds else 0} configurations, "
          f"{common.threads()} threads, {os.uname().nodename}")
    header = ["pairs of rounds", "pairs", "re-run interval covers", "target",
              "within-run covers", "median ±re-run", "narrowest one ± covering 95%",
              "median |re-run - 1|"]
    table = []
    for name, first in (("later (i >= 2)", False), ("first (prior)", True)):
        c = coverage(rounds, first)
        if c:
            table.append([name, c["pairs"], f"{c['rerun'] * 100:.1f}%", "90-98%",
                          f"{c['within'] * 100:.1f}%", f"{c['width'] * 100:.1f}%",
                          f"{c['oracle'] * 100:.1f}%", f"{c['spread'] * 100:.1f}%"])
    common.print_table(header, table)

    different = total = 0
    for a, b in zip(rounds, rounds[1:]):
        for x, y in zip(a["sweeps"], b["sweeps"]):
            out = json.loads(common.paradnn(["compare", str(x), str(y), "--format", "json", "--db", db]))
            s = out["speedup"]
            different += int(s.get("faster", 0)) + int(s.get("slower", 0))
            total += len(s.get("points", []))
    if total:
        print(f"A/A: consecutive rounds compared: {different} of {total} configurations called "
              f"different ({different / total * 100:.1f}%; target <= 5%)")


if __name__ == "__main__":
    main()
