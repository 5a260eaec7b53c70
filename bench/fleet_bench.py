#!/usr/bin/env python3
"""How fast a user's fleet events go in and the report comes out
(docs/fleet-events.md; issue 41's target: 10,000 jobs and 10 million steps).

Generates a synthetic fleet (bench/fleet_synth.py), starts a private
coordinator, times `paradnn fleet ingest` and `paradnn fleet report`, checks
the report's fleet MPG against the generator's known answer, and prints
beside them the floors they cannot beat on this host: reading the file
(`cat > /dev/null`) and checking its lines in Python's json module.

usage: bench/fleet_bench.py [--jobs 10000] [--steps-per-job 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(_HERE)
BIN = os.environ.get("PARADNN_BIN_DIR", os.path.join(ROOT, "build", "bin"))


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    return time.monotonic() - start, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--steps-per-job", type=int, default=1000)
    parser.add_argument("--keep", help="a folder to keep the files in (else a temporary one)")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="fleet-bench-")
    os.makedirs(folder, exist_ok=True)
    events, answers, roofs = (os.path.join(folder, name)
                              for name in ("events.jsonl", "answers.json", "roofs.json"))
    seconds, done = timed([sys.executable, os.path.join(_HERE, "fleet_synth.py"), "--jobs",
                           str(args.jobs), "--steps-per-job", str(args.steps_per_job), "--out",
                           events, "--answers", answers, "--roofs", roofs])
    if done.returncode != 0:
        sys.exit(done.stderr)
    lines = sum(1 for _ in open(events, "rb"))
    size = os.path.getsize(events)
    start = time.monotonic()
    subprocess.run(["cat", events], stdout=subprocess.DEVNULL, check=True)
    read_s = time.monotonic() - start
    start = time.monotonic()
    with open(events, "rb") as f:
        for line in f:
            json.loads(line)
    json_s = time.monotonic() - start

    socket = os.path.join(folder, "coordinator.sock")
    coordinator = subprocess.Popen([os.path.join(BIN, "paradnn-coordinator"), "--listen",
                                    f"unix:{socket}", "--db", os.path.join(folder, "fleet.db")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(socket) and time.monotonic() < deadline:
            time.sleep(0.05)
        cli = [os.path.join(BIN, "paradnn"), "--coordinator", f"unix:{socket}", "--timeout", "3600"]
        ingest_s, ingest = timed(cli + ["fleet", "ingest", events])
        if ingest.returncode != 0:
            sys.exit(ingest.stderr)
        report_s, report = timed(cli + ["fleet", "report", "--roofs", roofs, "--format", "json"])
        if report.returncode != 0:
            sys.exit(report.stderr)
    finally:
        coordinator.terminate()
        coordinator.wait()
    got = json.loads(report.stdout)["fleet"]
    everything = json.load(open(answers))
    known, steps = everything["fleet"], everything["counts"]["step_lines"]
    db_size = os.path.getsize(os.path.join(folder, "fleet.db"))
    if not args.keep:
        shutil.rmtree(folder)

    print(f"fleet: {args.jobs} jobs, {lines:,} lines ({size / 1e9:.2f} GB), generated in "
          f"{seconds:.1f} s; {steps:,} steps")
    print(f"{'':28} {'seconds':>9} {'lines/s':>12}")
    print(f"{'floor: cat > /dev/null':28} {read_s:9.2f} {lines / read_s:12,.0f}")
    print(f"{'floor: json.loads per line':28} {json_s:9.2f} {lines / json_s:12,.0f}")
    print(f"{'paradnn fleet ingest':28} {ingest_s:9.2f} {lines / ingest_s:12,.0f}")
    print(f"{'paradnn fleet report':28} {report_s:9.2f} {lines / report_s:12,.0f}")
    print(f"database {db_size / 1e9:.2f} GB; fleet MPG {got['mpg']:.6g} "
          f"(known {known['mpg']:.6g}), scheduling {got['scheduling']:.6g} "
          f"(known {known['scheduling_goodput']:.6g})")
    ok = abs(got["mpg"] - known["mpg"]) <= 1e-9 * abs(known["mpg"]) + 1e-12
    print("report equals the known answers" if ok else "REPORT DIFFERS FROM THE KNOWN ANSWERS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
