"""Shared helpers of the bench/ scripts: where the binaries are, how to run
the runner and read its JSON, and the side-by-side table they print."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("PARADNN_BIN_DIR", os.path.join(ROOT, "build", "bin"))
# Debian's python3-torch lives in the system interpreter, whatever python3
# comes first on PATH.
SYSTEM_PYTHON = "/usr/bin/python3"


def threads():
    return len(os.sched_getaffinity(0))


def run_json(argv, env=None, timeout=900):
    """Runs argv and returns its stdout parsed as JSON (stderr is dropped)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                          timeout=timeout, check=False, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def paradnn(args, timeout=None):
    """Runs the paradnn CLI with `args`; its stdout. Exits with the end of its
    stderr where it fails."""
    done = subprocess.run([os.path.join(BIN, "paradnn")] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"paradnn {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def add_keep_flag(parser):
    parser.add_argument("--keep", help="keep the database in this folder")


def work_folder(keep, prefix):
    """The folder a run writes its sweep files and database in: `keep` (made
    if missing), else a new temporary one named after `prefix`."""
    folder = keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(folder, exist_ok=True)
    return folder


def write_sweep(folder, name, text):
    """Writes the sweep file `name` in `folder`; its path."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def runner_measure(flags):
    """One paradnn-runner measurement (--json) with `flags`; the Measurement."""
    return run_json([os.path.join(BIN, "paradnn-runner"), "--json"] + flags)


def cv(values):
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.mean(values)


# The confidence below which paired_ratios gives no verdict.
VERDICT_CONFIDENCE = 0.95


def paired_ratios(base, other, higher="faster", lower="slower"):
    """Compares `other` with `base`, round by round (base[i] and other[i] ran
    in one round, back to back, so the host's drift between rounds cancels).

    Returns (median, low, high, confidence, verdict) of the ratios
    other[i] / base[i]. [low, high] is their min and max: for n rounds it
    holds the ratios' median with confidence 1 - 2 * 0.5**n whatever their
    distribution (the sign test: 87.5 % at 4 rounds, 96.9 % at 6). The
    verdict is `higher` or `lower` where that interval excludes 1 with at
    least VERDICT_CONFIDENCE, "no difference shown" where it holds 1, and
    says the rounds are too few otherwise. Written here rather than taken
    from SciPy: the benchmarks run on Debian's python3 without it, and the
    interval is the sample's extremes."""
    if len(base) != len(other) or not base:
        raise ValueError(f"paired_ratios: {len(base)} base and {len(other)} other values; "
                         "one of each per round, at least one round")
    ratios = sorted(b / a for a, b in zip(base, other))
    confidence = 1 - 2 * 0.5 ** len(ratios)
    low, high = ratios[0], ratios[-1]
    if confidence < VERDICT_CONFIDENCE:
        verdict = f"{len(ratios)} rounds: too few for a verdict (6 give 97 %)"
    elif low > 1:
        verdict = higher
    elif high < 1:
        verdict = lower
    else:
        verdict = "no difference shown"
    return statistics.median(ratios), low, high, confidence, verdict


def print_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for line in [header] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(line, widths)))
    sys.stdout.flush()
