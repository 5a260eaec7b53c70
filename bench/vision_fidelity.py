#!/usr/bin/env python3
"""Convolutional models: paradnn-runner against PyTorch eager Python in the
layout a tuned CPU user runs (channels_last), on the same LibTorch (Debian's
python3-torch), interleaved, float32 and bfloat16, as examples/s ratios
(medians of --reps runs each). Target: runner / Python >= 1.0 for every
model. The Python loop (bench/vision_eager.py) runs with the runner's
OpenMP spin (GOMP_SPINCOUNT=1000) and the same thread count; each side
reports the median step time of at least 5 timed steps after warm-up.

  bench/vision_fidelity.py [--reps N] [--models cnn,resnet50,...] [--precisions float32,bfloat16]
"""
import argparse
import os
import statistics

import common

MODELS = {
    "cnn": ["--family", "cnn", "--block_fn", "bottleneck", "--block", "1", "--filter", "16",
            "--image", "224", "--output", "1000"],
    "resnet50": ["--family", "resnet50"],
    "densenet121": ["--family", "densenet121"],
    "mobilenet_v1": ["--family", "mobilenet_v1"],
    "squeezenet1_0": ["--family", "squeezenet1_0"],
}
BATCH = 16
SECONDS = 6
WARMUP = 3


def runner(model, precision, fmt, threads):
    m = common.runner_measure(MODELS[model] + [
        "--batch", str(BATCH), "--precision", precision, "--memory_format", fmt,
        "--warmup-steps", str(WARMUP), "--min-steps", "5", "--max-seconds", str(SECONDS),
        "--ci", "0.02", "--intra-op-threads", str(threads)])
    return m["examples_per_sec"]


def python(model, precision, fmt, threads):
    argv = [common.SYSTEM_PYTHON, os.path.join(common.ROOT, "bench", "vision_eager.py"), model,
            precision, fmt, str(BATCH), str(WARMUP), str(SECONDS), str(threads)]
    env = {"GOMP_SPINCOUNT": "1000", "OPENBLAS_NUM_THREADS": str(threads)}
    return common.run_json(argv, env)["examples_per_sec"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--precisions", default="float32,bfloat16")
    args = parser.parse_args()
    threads = common.threads()
    print(f"vision fidelity: runner vs PyTorch eager, batch {BATCH}, image 224, {threads} threads, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    runs = {}
    models = args.models.split(",")
    precisions = args.precisions.split(",")
    for _ in range(args.reps):
        for model in models:
            for precision in precisions:
                for side, fn in (("runner", runner), ("python", python)):
                    for fmt in ("channels_last", "contiguous"):
                        runs.setdefault((model, precision, side, fmt), []).append(
                            fn(model, precision, fmt, threads))
    header = ["model", "precision", "runner CL ex/s", "python CL ex/s", "runner/python CL",
              "target", "runner NCHW", "python NCHW", "runner/python NCHW"]
    rows = []
    for model in models:
        for precision in precisions:
            med = {k[2:]: statistics.median(v) for k, v in runs.items()
                   if k[0] == model and k[1] == precision}
            r, p = med[("runner", "channels_last")], med[("python", "channels_last")]
            rn, pn = med[("runner", "contiguous")], med[("python", "contiguous")]
            rows.append([model, precision, f"{r:.2f}", f"{p:.2f}", f"{r / p:.2f}", ">= 1.0",
                         f"{rn:.2f}", f"{pn:.2f}", f"{rn / pn:.2f}"])
    common.print_table(header, rows)


if __name__ == "__main__":
    main()
