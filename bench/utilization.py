#!/usr/bin/env python3
"""Utilization: a large FC in float32 and in bfloat16 against this host's
calibrated matmul roofs (paradnn-runner --calibrate). MFU = model FLOP/s
(6 x forward MACs x batch per step) / roof; HFU = executed matmul FLOP/s
(forward, weight- and input-gradient GEMMs) / roof.
Targets: float32 >= 75 % of the float32 roof, bfloat16 >= 60 % of the
bfloat16 roof.

usage: bench/utilization.py
"""
import os

import common

SHAPE = ["--layer", "4", "--node", "2048", "--input", "2000", "--output", "200",
         "--batch", "2048"]
TARGETS = {"float32": 0.75, "bfloat16": 0.60}


def main():
    platform = common.run_json([os.path.join(common.BIN, "paradnn-runner"), "--calibrate"])
    roofs = {r["dtype"]: r for r in platform.get("matmul_roofs", [])}
    print(f"utilization: {platform['device_name']}, {common.threads()} threads, "
          f"{platform['blas_backend'].split(' (')[0]}, {platform.get('isa_paths', '')}")
    for dtype, roof in roofs.items():
        print(f"  calibrated {dtype} roof: {roof['flops_per_sec'] / 1e9:,.1f} GFLOP/s at "
              f"{roof['m']}x{roof['n']}x{roof['k']}")
    header = ["precision", "model GFLOP/s", "executed GFLOP/s", "roof GFLOP/s", "MFU", "HFU",
              "target"]
    rows = []
    for dtype, target in TARGETS.items():
        if dtype not in roofs:
            rows.append([dtype, "-", "-", "no roof", "-", "-", f">= {target:.0%}"])
            continue
        m = common.runner_measure(["--family", "fc", "--precision", dtype, "--ci", "0.02",
                                   "--max-seconds", "8", "--min-steps", "3"] + SHAPE)
        roof = roofs[dtype]["flops_per_sec"]
        rows.append([dtype, f"{m['model_flops_per_sec'] / 1e9:,.1f}",
                     f"{m['executed_flops_per_sec'] / 1e9:,.1f}", f"{roof / 1e9:,.1f}",
                     f"{m['model_flops_per_sec'] / roof:.1%}",
                     f"{m['executed_flops_per_sec'] / roof:.1%}", f">= {target:.0%}"])
    common.print_table(header, rows)


if __name__ == "__main__":
    main()
