#!/usr/bin/env python3
"""Utilization: a large FC in float32 and in bfloat16 against this host's
roofs, both of them: the silicon's theoretical peak (cores x clock x FLOPs
per cycle of the dtype's best instruction, Platform.silicon_peaks) and the
stack's calibrated best (paradnn-runner --calibrate). MFU = model FLOP/s
(6 x forward MACs x batch per step) / roof; HFU = executed matmul FLOP/s
(forward, weight- and input-gradient GEMMs) / roof.

Targets: float32 >= 75 % of the calibrated float32 roof and, on an AVX-512
CPU with the stack doctor's BLAS core (--blas-core auto, the default),
>= 80 % of the theoretical float32 peak; bfloat16 >= 60 % of the calibrated
bfloat16 roof. Where the calibrated roof is above the theoretical peak by
more than 5 % the peak's basis is wrong (printed), and the silicon figures
are against the raised peak, as the coordinator computes them.

Run it as installed and with OPENBLAS_CORETYPE=Prescott (the Intel model-207
fallback) to see what the doctor recovers:
  bench/utilization.py [--blas-core auto|as-installed|NAME]
"""
import argparse
import os

import common

SHAPE = ["--layer", "4", "--node", "2048", "--input", "2000", "--output", "200",
         "--batch", "2048"]
CALIBRATED_TARGETS = {"float32": 0.75, "bfloat16": 0.60}
SILICON_TARGETS = {"float32": 0.80}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blas-core", default="auto")
    args = parser.parse_args()
    blas = ["--blas-core", args.blas_core]
    platform = common.run_json([os.path.join(common.BIN, "paradnn-runner"), "--calibrate"] + blas)
    roofs = {r["dtype"]: r for r in platform.get("matmul_roofs", [])
             if r.get("kernel", "matmul") == "matmul"}
    peaks = {p["dtype"]: p for p in platform.get("silicon_peaks", [])}
    print(f"utilization: {platform['device_name']} (family {platform.get('cpu_family')} model "
          f"{platform.get('cpu_model')}), {common.threads()} threads, "
          f"{platform['blas_backend'].split(' (')[0]}, BLAS core {platform.get('blas_core')} "
          f"({platform.get('blas_core_choice')}), OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, {platform.get('isa_paths', '')}")
    for r in platform.get("matmul_roofs", []):
        dtype = r["dtype"]
        peak = peaks.get(dtype, {}).get("flops_per_sec", 0)
        print(f"  {r.get('kernel', 'matmul'):6} {dtype:8} calibrated {r['flops_per_sec'] / 1e9:8,.1f}"
              f" GFLOP/s   theoretical {peak / 1e9:8,.1f} GFLOP/s"
              + (f"   ({r['flops_per_sec'] / peak:.0%} of the silicon)" if peak else ""))
    for p in platform.get("silicon_peaks", []):
        print(f"  peak {p['dtype']}: {p['basis']}")
        if p.get("inconsistency"):
            print(f"  !  {p['inconsistency']}")
    header = ["precision", "model GFLOP/s", "calibrated GFLOP/s", "MFU", "target",
              "theoretical GFLOP/s", "silicon MFU", "target"]
    rows = []
    for dtype in ["float32", "bfloat16"]:
        if dtype not in roofs:
            rows.append([dtype, "-", "no roof", "-", "-", "-", "-", "-"])
            continue
        m = common.runner_measure(["--family", "fc", "--precision", dtype, "--ci", "0.02",
                                   "--max-seconds", "8", "--min-steps", "3"] + blas + SHAPE)
        model = m["model_flops_per_sec"]
        fastest = max(model, m["executed_flops_per_sec"])
        roof = max(roofs[dtype]["flops_per_sec"], fastest)
        peak = peaks.get(dtype, {}).get("flops_per_sec", 0)
        # As the coordinator does (server/utilization.cc): a peak is never below any
        # calibrated roof of its dtype (matmul or conv), nor below what a job achieved.
        all_roofs = [r["flops_per_sec"] for r in platform.get("matmul_roofs", [])
                     if r["dtype"] == dtype]
        silicon = max([peak, fastest] + all_roofs) if peak else 0
        cal_target = CALIBRATED_TARGETS.get(dtype)
        si_target = SILICON_TARGETS.get(dtype)
        rows.append([dtype, f"{model / 1e9:,.1f}", f"{roof / 1e9:,.1f}", f"{model / roof:.1%}",
                     f">= {cal_target:.0%}" if cal_target else "-",
                     f"{silicon / 1e9:,.1f}" if silicon else "-",
                     f"{model / silicon:.1%}" if silicon else "-",
                     f">= {si_target:.0%}" if si_target else "-"])
    common.print_table(header, rows)


if __name__ == "__main__":
    main()
