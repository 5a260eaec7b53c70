#!/usr/bin/env python3
"""The tuner's gain (issue 40): `paradnn tune` on FC (deep-narrow and
wide-shallow), the ParaDnn CNN, an LSTM and the wide inception family, each
at a small and a large batch (16 and 256; the CNN 4 and 32); per configuration the tuned settings against
LibTorch's defaults, Intel's recommendation, the TensorFlow guide's defaults
and the guideline, with the confirmation sweep's speedups, 95 % intervals
and verdicts, in one run (the confirmation interleaves the tuned settings
with every baseline round by round). Target on >= 8 cores: a geometric mean
>= 1.2x over LibTorch's defaults and never slower (by verdict) than any
baseline; on fewer cores the figures are printed and the target is marked
not applicable.

  bench/tuner.py [--keep DIR] [--search-rounds N] [--confirm-rounds N] [--only NAME]
"""
import argparse
import json
import math
import os

import common

# name -> (family, params, (small batch, large batch)) of a sweep file
MODELS = {
    "FC deep-narrow 16x128": ("fc", "layer: 16, node: 128, input: 256, output: 10", (16, 256)),
    "FC wide-shallow 2x2048": ("fc", "layer: 2, node: 2048, input: 2048, output: 100",
                               (16, 256)),
    # The ParaDnn CNN needs images of at least 193 (its 7x7 average pool):
    # smaller batches keep a step within a second.
    "CNN residual f8 img224": ("cnn", "block_fn: residual, block: 1, filter: 8, image: 224, "
                                      "output: 100", (4, 32)),
    "LSTM 2x256 len 16": ("rnn", "cell: lstm, layer: 2, embed: 256, length: 16, vocab: 1000",
                          (16, 256)),
    "inception 4 branches": ("inception", "block: 2, branches: 4, filter: 16, image: 32, "
                                          "output: 100", (16, 256)),
}
BASELINES = ["libtorch", "intel", "tensorflow", "guideline"]
TARGET_CORES = 8
TARGET_GEOMEAN = 1.2


def tune(folder, name, family, params, batches, args):
    sweep = common.write_sweep(
        folder, name.replace(" ", "_") + ".yaml",
        f"name: {family}-tuner\nfamily: {family}\ndevice: cpu\n"
        f"params: {{{params}, batch: {{values: [{batches[0]}, {batches[1]}]}}}}\n"
        "run: {max_seconds: 1, warmup_steps: 2, min_steps: 5}\n")
    db = os.path.join(folder, name.replace(" ", "_") + ".db")
    out = common.paradnn(["tune", sweep, "--db", db, "--format", "json", "--search-rounds",
                          str(args.search_rounds), "--confirm-rounds", str(args.confirm_rounds)])
    return json.loads(out)


def cell(vs):
    if vs is None:
        return "-"
    if vs["verdict"] == "is the best":
        return "is the best"
    short = {"faster": "faster", "slower": "SLOWER", "no difference detected": "no diff",
             "not enough data": "n/a"}.get(vs["verdict"], vs["verdict"])
    return f"{vs['speedup']:.2f}x [{vs['low']:.2f},{vs['high']:.2f}] {short}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_keep_flag(parser)
    parser.add_argument("--search-rounds", type=int, default=2)
    parser.add_argument("--confirm-rounds", type=int, default=3)
    parser.add_argument("--only", help="one model of: " + ", ".join(MODELS))
    args = parser.parse_args()
    folder = common.work_folder(args.keep, "paradnn-tuner-")
    rows, host, candidates = [], "", 0
    for name, (family, params, batches) in MODELS.items():
        if args.only and args.only != name:
            continue
        report = tune(folder, name, family, params, batches, args)
        host = report["host"]
        candidates = len(report["candidates"])
        for c in report["configurations"]:
            rows.append((name, c["params"]["batch"], c))
    print(f"tuner: {host}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"{candidates} thread settings searched per configuration (the whole space on "
          f"this host when it has 2 CPUs), {args.search_rounds} search rounds, "
          f"{args.confirm_rounds} confirmation rounds")
    header = ["model", "batch", "tuned", "ms/step"] + [f"vs {b}" for b in BASELINES]
    table = [[name, str(batch), c["best"], f"{c['step_seconds'] * 1e3:.3f}"]
             + [cell(c["vs"].get(b)) for b in BASELINES] for name, batch, c in rows]
    widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header))]
    for r in [header] + table:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
    print()
    slower = 0
    for b in BASELINES:
        speedups = [c["vs"][b]["speedup"] for _, _, c in rows
                    if b in c["vs"] and c["vs"][b]["speedup"] > 0]
        verdicts = [c["vs"][b]["verdict"] for _, _, c in rows if b in c["vs"]]
        slower += verdicts.count("slower")
        if speedups:
            geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
            print(f"vs {b:11} geometric mean {geomean:.2f}x over {len(speedups)} configurations; "
                  f"faster in {verdicts.count('faster')}, slower in {verdicts.count('slower')}, "
                  f"no difference in {verdicts.count('no difference detected')}")
    libtorch = [c["vs"]["libtorch"]["speedup"] for _, _, c in rows if "libtorch" in c["vs"]]
    geomean = math.exp(sum(math.log(s) for s in libtorch) / len(libtorch)) if libtorch else 0
    cores = int(host.split(" logical CPUs")[0].split()[-1]) if " logical CPUs" in host else 0
    met = geomean >= TARGET_GEOMEAN and slower == 0
    where = ("applies" if cores >= TARGET_CORES
             else f"not applicable here: {cores} logical CPUs < {TARGET_CORES}")
    print(f"\ntarget (>= {TARGET_CORES} cores): geometric mean >= {TARGET_GEOMEAN}x over "
          f"LibTorch's defaults and never slower than a baseline: {geomean:.3f}x, "
          f"{slower} slower verdicts -> {'met' if met else 'not met'} ({where})")
    print(f"databases kept in {folder}" if args.keep else "")


if __name__ == "__main__":
    main()
