#!/usr/bin/env python3
"""A/B: does `paradnn compare` find a known change, and only where it is?

One sweep through the whole system (`paradnn local`): FC configurations
from tiny to large, each with 1 and 2 intra-op threads, `repeats: 3`
(each round shuffled, so the two sides of a configuration run close in
time). `paradnn compare --field intra_op_threads 1 2` gives each
configuration's speedup with its 95 % interval and verdict. Two threads
speed up large matmuls by up to 2x and tiny ones not at all (waking a
thread costs more than it saves), so the sweep holds effects of every size.

Printed: per configuration the speedup, its interval and verdict; the share
of configurations with an effect of at least 1.3x (by the estimate) that
were called different (target >= 95 %); and the smallest effect the
default repeats detect with 80 % power, from the measured spread of the
stated intervals: exp(half-width x (z_0.975 + z_0.8) / z_0.975).

usage: bench/compare_ab.py [--repeats 3] [--keep DIR]
"""
import argparse
import json
import math
import os
import statistics

import common

SWEEP = """name: compare-ab
family: fc
params:
  layer: 4
  node: {{values: [32, 128, 512, 1024, 2048, 4096]}}
  input: 1000
  output: 100
  batch: {{values: [16, 256]}}
  intra_op_threads: {{values: [1, 2]}}
repeats: {repeats}
run: {{max_seconds: 2}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    common.add_keep_flag(parser)
    args = parser.parse_args()
    tmp = common.work_folder(args.keep, "compare-ab-")
    db = os.path.join(tmp, "ab.db")
    sweep = common.write_sweep(tmp, "ab.yaml", SWEEP.format(repeats=args.repeats))
    common.paradnn(["local", sweep, "--db", db, "--fresh", "--format", "json"])
    out = json.loads(common.paradnn(["compare", "--field", "intra_op_threads", "1", "2", "--sweep", "1",
                              "--format", "json", "--db", db]))["speedup"]
    points = out["points"]
    print(f"A/B: intra-op threads 1 -> 2 on fp32 FC, {args.repeats} shuffled repeat rounds, "
          f"{common.threads()} CPUs, {os.uname().nodename}")
    rows = []
    log_sds = []
    for p in points:
        rows.append([p["config"].replace(" precision=float32 optimizer=rmsprop", ""),
                     f"{p['speedup']:.3f}x", f"[{p.get('speedup_low', 0):.3f}, "
                     f"{p.get('speedup_high', 0):.3f}]", p.get("verdict", ""),
                     p.get("interval_basis", "")])
        low, high = p.get("speedup_low", 0), p.get("speedup_high", 0)
        if low > 0 and high > 0:
            # Each stated interval's half-width in logs; with the spread
            # pooled across configurations its degrees of freedom are many.
            log_sds.append(math.log(high / low) / 2)
    common.print_table(["config", "speedup", "95 % interval", "verdict", "basis"], rows)
    large = [p for p in points if max(p["speedup"], 1 / p["speedup"]) >= 1.3]
    found = [p for p in large if p.get("verdict") in ("faster", "slower")]
    print(f"\neffects >= 1.3x: {len(found)} of {len(large)} called different "
          f"({(len(found) / len(large) * 100) if large else 0:.0f}%; target >= 95%)")
    print(f"geomean {out['geomean_speedup']:.3f}x [{out.get('geomean_low', 0):.3f}, "
          f"{out.get('geomean_high', 0):.3f}]; verdicts: {out.get('faster', 0)} faster, "
          f"{out.get('slower', 0)} slower, {out.get('no_difference', 0)} no difference")
    if log_sds:
        half = statistics.median(log_sds)
        # 80 % power: the effect sits (z_0.975 + z_0.8) standard errors from
        # 1, the half-width is z_0.975 of them (normal quantiles: the pooled
        # spread's degrees of freedom are many; with few, this understates).
        mde = math.exp(half * (1.960 + 0.842) / 1.960)
        print(f"median stated 95 % half-width x{math.exp(half):.3f}: the smallest effect "
              f"detected with 80 % power at {args.repeats} repeats is about {mde:.2f}x "
              f"(before the false-discovery correction)")


if __name__ == "__main__":
    main()
